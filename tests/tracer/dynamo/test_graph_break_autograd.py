"""Gradients flow through graph breaks: each graph's backward is recorded on the tensors it
returns, so `loss.backward()` runs the backward of every graph the call went through."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch

pytestmark = pytest.mark.capture


def two_breaks(x, w):
    y = (x @ w).relu()
    print(end="")  # break 1: an untraceable call
    if y.sum() > 0:  # break 2: a branch on a tensor
        return (y * 2).sum()
    return (y - 1).sum()


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_gradients_through_graph_breaks_equal_eager(backend, sign, recwarn):
    minitorch.manual_seed(0)
    compiled = minitorch.compile(two_breaks, backend=backend)
    x = minitorch.randn(3, 4)
    w = (minitorch.randn(4, 2) * sign).requires_grad_()
    w_eager = w.detach().clone().requires_grad_()
    loss = compiled(x, w)
    loss.backward()
    expected = two_breaks(x, w_eager)
    expected.backward()
    np.testing.assert_allclose(loss.detach().numpy(), expected.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), w_eager.grad.numpy(), rtol=1e-5)
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]  # no fallback
