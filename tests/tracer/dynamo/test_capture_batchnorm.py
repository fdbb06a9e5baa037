"""BatchNorm compiled whole: in training its running statistics and batch count are buffer
mutations, written back after the graph (side_effects.py); in eval mode it reads them. One
graph, no break; outputs, buffers and gradients equal eager's, step after step."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import minitorch
import minitorch.nn as nn
from minitorch._dynamo import explain
from tracer.dynamo import cache_entries

pytestmark = pytest.mark.capture


class BasicBlock(nn.Module):
    """ResNet's block: BatchNorm training, ReLU(inplace=True), `out += identity`."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


def _models():
    minitorch.manual_seed(0)
    return [
        (nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5), nn.ReLU()), (8, 6)),
        (nn.Sequential(nn.BatchNorm1d(3, momentum=0.3, affine=False)), (4, 3, 5)),
        (BasicBlock(2), (3, 2, 4, 4)),
    ]


def _same(actual, expected, what):
    assert actual.dtype is expected.dtype and tuple(actual.shape) == tuple(expected.shape), what
    np.testing.assert_allclose(
        actual.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-5, err_msg=what
    )


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("index", range(3))
def test_batchnorm_compiles_whole_and_equals_eager(index, train):
    model, shape = _models()[index]
    model.train(train)
    compiled_model = copy.deepcopy(model)
    x = minitorch.randn(*shape)
    report = explain(copy.deepcopy(model))(x)
    assert (report.graph_count, report.graph_break_count) == (1, 0), str(report)
    compiled = minitorch.compile(compiled_model)
    for step in range(2):  # the second step runs the cached code on the moved statistics
        x = minitorch.randn(*shape, requires_grad=True)
        x_compiled = x.detach().clone().requires_grad_()
        expected, actual = model(x), compiled(x_compiled)
        _same(actual, expected, f"output, step {step}")
        expected.sum().backward()
        actual.sum().backward()
        _same(x_compiled.grad, x.grad, f"input grad, step {step}")
        for (name, b), (_, b_compiled) in zip(
            model.named_buffers(), compiled_model.named_buffers(), strict=True
        ):
            _same(b_compiled, b, f"{name}, step {step}")
        for (name, p), (_, p_compiled) in zip(
            model.named_parameters(), compiled_model.named_parameters(), strict=True
        ):
            _same(p_compiled.grad, p.grad, f"{name}.grad, step {step}")
            p.grad = p_compiled.grad = None
    # the moved statistics are values, not metadata: the cached code served every step
    assert len(cache_entries(type(model).forward)) == 1


def test_cumulative_average_still_equals_eager():
    """momentum=None reads the batch count as a number (.item()): a graph break, not a wrong
    average."""
    model = nn.BatchNorm1d(3, momentum=None)
    compiled_model = copy.deepcopy(model)
    compiled = minitorch.compile(compiled_model)
    for _ in range(3):
        x = minitorch.randn(4, 3)
        _same(compiled(x), model(x), "output")
    _same(compiled_model.running_var, model.running_var, "running_var")
    _same(compiled_model.num_batches_tracked, model.num_batches_tracked, "count")
