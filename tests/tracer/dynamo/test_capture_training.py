"""`opt.zero_grad()` inside a compiled training step (variables/optimizer.py): replayed after
the graph, before `backward()` runs at its graph break; the parameters follow eager's, step
after step. set_to_none=False runs eagerly at a break of its own."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import minitorch
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch._dynamo import explain

pytestmark = pytest.mark.capture


def _setup(set_to_none: bool):
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = minitorch.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad(set_to_none=set_to_none)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return model, step


@pytest.mark.parametrize("set_to_none", [True, False])
def test_a_compiled_training_step_follows_eager(set_to_none):
    model, step = _setup(set_to_none)
    compiled_model, compiled_step = _setup(set_to_none)
    compiled_step = minitorch.compile(compiled_step)
    for _ in range(3):
        x, y = minitorch.randn(5, 3), minitorch.randn(5, 1)
        np.testing.assert_allclose(compiled_step(x, y).item(), step(x, y).item(), rtol=1e-6)
    for p, q in zip(model.parameters(), compiled_model.parameters(), strict=True):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-6)
        assert (q.grad is None) == (p.grad is None)


def test_zero_grad_is_a_replayed_side_effect_not_a_break():
    _, step = _setup(True)
    report = explain(step)(minitorch.randn(5, 3), minitorch.randn(5, 1))
    reasons = [b.reason for b in report.break_reasons]
    assert report.graph_count == 1 and not any("SGD.zero_grad" in r for r in reasons), reasons


def test_set_to_none_false_breaks_the_graph():
    _, step = _setup(False)
    report = explain(step)(minitorch.randn(5, 3), minitorch.randn(5, 1))
    assert any("set_to_none=False" in b.reason for b in report.break_reasons)


def test_zero_grad_runs_before_backward_reaches_the_grads():
    """Gradients of the previous step are forgotten, not added to."""
    model = nn.Linear(2, 1)
    opt = minitorch.optim.SGD(model.parameters(), lr=0.0)

    def step(x):
        opt.zero_grad()
        model(x).sum().backward()

    reference = copy.deepcopy(model)
    x = minitorch.randn(4, 2)
    reference(x).sum().backward()
    compiled = minitorch.compile(step)
    for _ in range(2):
        compiled(x)
        np.testing.assert_allclose(
            model.weight.grad.numpy(), reference.weight.grad.numpy(), rtol=1e-6
        )
