"""A write into a value the backward reads: eager's backward refuses it, and so must compiled
code, whichever partitioner chose what to save (min_cut would rather recompute exp's output
from its input, and must not: [Note: min-cut partitioning]), and however the compiled graph
laid out the indices max returns."""

import numpy as np
import pytest

import minitorch
from minitorch import config
from minitorch.errors import AutogradError


def exp_then_write(x):
    y = x.tanh().exp()  # exp's backward reads its output
    y.mul_(2.0)
    return y


def test_the_default_partitioner_is_default():
    assert config.partitioner == "default"


@pytest.mark.parametrize(
    "partitioner",
    [
        "default",
        "min_cut",
    ],
)
def test_a_write_into_a_saved_output_fails_backward_as_in_eager(partitioner, monkeypatch):
    monkeypatch.setattr(config, "partitioner", partitioner)
    minitorch._dynamo.reset()
    with pytest.raises(AutogradError):
        exp_then_write(minitorch.randn(4, 4, requires_grad=True)).sum().backward()
    compiled = minitorch.compile(exp_then_write, backend="aot_eager")
    with pytest.raises(AutogradError):
        compiled(minitorch.randn(4, 4, requires_grad=True)).sum().backward()


def max_then_write_indices(x):
    values, indices = x.max(dim=1)  # max's backward reads the indices
    return values, indices


@pytest.mark.parametrize("backend", [None, "aot_eager", "inductor"])
def test_a_write_into_max_indices_fails_backward_as_in_pytorch(backend):
    fn = (
        max_then_write_indices
        if backend is None
        else minitorch.compile(max_then_write_indices, backend=backend)
    )
    x = minitorch.randn(3, 4, requires_grad=True)
    values, indices = fn(x)
    indices.zero_()
    with pytest.raises(AutogradError, match="modified by an inplace operation"):
        values.sum().backward()
    x = minitorch.randn(3, 4, requires_grad=True)
    values, indices = fn(x)  # unwritten: the gradient is one 1 a row, where the max is
    values.sum().backward()
    expected = np.zeros((3, 4), np.float32)
    expected[np.arange(3), x.detach().numpy().argmax(1)] = 1
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def log_softmax_then_write(y):
    t = (y - y.max(-1, keepdim=True)[0]).exp()
    first = minitorch.zeros_like(t, dtype=minitorch.int64)
    t = minitorch.gather(t / t.sum(-1, keepdim=True), -1, first)
    out = t.log_softmax(0)  # amax's backward reads t, through its mask t == amax(t)
    t.sub_(t, alpha=0.5)  # a graph break: t is an output of the graph, written after it
    return out


@pytest.mark.parametrize("partitioner", ["default", "min_cut"])
def test_a_write_into_an_output_a_formula_reads_fails_backward(partitioner, monkeypatch):
    """min_cut saved the mask instead of t (found by the fuzzer, seed 141779)."""
    monkeypatch.setattr(config, "partitioner", partitioner)
    minitorch._dynamo.reset()
    for fn in (
        log_softmax_then_write,
        minitorch.compile(log_softmax_then_write, backend="aot_eager"),
    ):
        with pytest.raises(AutogradError):
            fn(minitorch.randn(1, dtype=minitorch.float64, requires_grad=True)).sum().backward()
