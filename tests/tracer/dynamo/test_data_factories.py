"""`minitorch.tensor(data)` and `x.new_tensor(data)` of Python numbers inside compiled code: one
graph (a constant of it), and a new tensor on every call, as eager makes one."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from tracer.dynamo import explain, reset


def normalize(x):
    mean = x.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = minitorch.tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    return ((x - mean) / std).sum(), minitorch.tensor([1, 2, 3]), std


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_constant_data_is_captured_and_fresh_on_each_call(backend):
    reset()
    x = minitorch.rand(3, 2, 2, requires_grad=True)
    assert explain(normalize)(x).graph_count == 1
    assert explain(normalize)(x).graph_break_count == 0
    reset()
    compiled = minitorch.compile(normalize, backend=backend)
    loss, ints, std = compiled(x)
    ints.add_(10)  # the caller writes into what it was given ...
    std.mul_(0)
    loss2, ints2, std2 = compiled(x)  # ... and the next call does not see it
    expected = normalize(x)
    np.testing.assert_allclose(loss2.item(), expected[0].item(), rtol=1e-5)
    assert ints2.tolist() == [1, 2, 3] and ints2.dtype is minitorch.int64
    np.testing.assert_allclose(std2.numpy(), expected[2].numpy())
    loss2.backward()
    got = x.grad.numpy().copy()
    x.grad = None
    expected[0].backward()
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-5)


def from_a_tensor(x):
    return minitorch.tensor([x.sum().item(), 1.0])  # data read from a tensor: a break


def test_data_read_from_tensors_is_still_a_break():
    reset()
    assert explain(from_a_tensor)(minitorch.ones(2)).graph_break_count >= 1
