"""A write into an output that its backward formula reads: eager's backward refuses it, and so
must compiled code. The "default" partitioner saves that output; min_cut recomputes it from the
input and misses the write, which is why "default" is the default (minitorch/config.py)."""

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


@pytest.mark.parametrize("partitioner", [
    "default",
    "min_cut",
])
def test_a_write_into_a_saved_output_fails_backward_as_in_eager(partitioner, monkeypatch):
    monkeypatch.setattr(config, "partitioner", partitioner)
    minitorch._dynamo.reset()
    with pytest.raises(AutogradError):
        exp_then_write(minitorch.randn(4, 4, requires_grad=True)).sum().backward()
    compiled = minitorch.compile(exp_then_write, backend="aot_eager")
    with pytest.raises(AutogradError):
        compiled(minitorch.randn(4, 4, requires_grad=True)).sum().backward()
