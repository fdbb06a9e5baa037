"""The new layers and losses in compiled code: `minitorch.compile` of a forward + loss gives
eager's loss and every parameter's gradient, in one graph with no break (explain), for
AdaptiveAvgPool2d, GroupNorm, LeakyReLU, a ModuleDict indexed by name, and each loss."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import nn

F = nn.functional
pytestmark = [pytest.mark.capture, pytest.mark.filterwarnings("error")]  # no fallback warning


class Net(nn.Module):
    """conv -> GroupNorm -> LeakyReLU -> AdaptiveAvgPool2d (uneven bins) -> two named heads."""

    def __init__(self, pool=(2, 3)) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.norm = nn.GroupNorm(3, 6)
        self.act = nn.LeakyReLU(0.1)
        self.pool = nn.AdaptiveAvgPool2d(pool)
        self.heads = nn.ModuleDict({"a": nn.Linear(36, 4), "b": nn.Linear(36, 4)})

    def forward(self, x):
        h = self.pool(self.act(self.norm(self.conv(x)))).flatten(1)  # (N, 6 * 2 * 3)
        return self.heads["a"](h) - self.heads["b"](h)


def _bce(out, y, w):
    return F.binary_cross_entropy(minitorch.sigmoid(out), y, weight=w)


LOSSES = {
    "l1": lambda out, y, w: F.l1_loss(out, y),
    "smooth_l1": lambda out, y, w: F.smooth_l1_loss(out, y, beta=0.5),
    "huber": lambda out, y, w: F.huber_loss(out, y, delta=0.5, reduction="sum"),
    "bce": _bce,
    "bce_with_logits": lambda out, y, w: F.binary_cross_entropy_with_logits(out, y, pos_weight=w),
    "BCEWithLogitsLoss": lambda out, y, w: CRITERION(out, y),
}
CRITERION = nn.BCEWithLogitsLoss(reduction="sum")  # built outside: compiled code calls it


def _gradients(net, loss) -> list[np.ndarray]:
    net.zero_grad()
    loss.backward()
    return [p.grad.numpy().copy() for p in net.parameters()]


@pytest.mark.parametrize("name", list(LOSSES))
def test_forward_and_loss_compile_whole_and_match_eager(name):
    minitorch.manual_seed(0)
    net = Net()
    x, y, w = minitorch.randn(2, 3, 5, 7), minitorch.rand(2, 4), minitorch.rand(4) + 0.5
    loss_fn = LOSSES[name]

    def step(x, y, w):
        return loss_fn(net(x), y, w)

    explained = minitorch._dynamo.explain(step)(x, y, w)
    assert explained.graph_count == 1 and explained.graph_break_count == 0, explained.break_reasons
    eager = step(x, y, w)
    eager_grads = _gradients(net, eager)
    compiled = minitorch.compile(step)(x, y, w)
    np.testing.assert_allclose(
        compiled.detach().numpy(), eager.detach().numpy(), rtol=1e-5, atol=1e-6
    )
    for got, want in zip(_gradients(net, compiled), eager_grads):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("pool", [1, (1, 1), (5, 7), (None, 3)])
def test_adaptive_pool_sizes_compile(pool):
    # (1, 1) is ResNet's head: a mean over every position; (5, 7) keeps the input as it is.
    minitorch.manual_seed(1)
    x = minitorch.randn(2, 3, 5, 7, requires_grad=True)

    def f(x):
        return F.adaptive_avg_pool2d(x, pool).sum() * 2

    assert minitorch._dynamo.explain(f)(x).graph_break_count == 0
    eager = f(x)
    (eager_grad,) = minitorch.autograd.grad(eager, [x])
    compiled = minitorch.compile(f)(x)
    (compiled_grad,) = minitorch.autograd.grad(compiled, [x])
    np.testing.assert_allclose(compiled.detach().numpy(), eager.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(compiled_grad.numpy(), eager_grad.numpy(), rtol=1e-5)


def test_indexing_sequential_and_module_list_by_constant_int_is_captured():
    minitorch.manual_seed(2)
    body = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    extra = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])

    def f(x):
        return extra[-1](body[2](body[1](body[0](x)))).sum()

    x = minitorch.randn(5, 3)
    explained = minitorch._dynamo.explain(f)(x)
    assert explained.graph_count == 1 and explained.graph_break_count == 0, explained.break_reasons
    np.testing.assert_allclose(
        minitorch.compile(f)(x).detach().numpy(), f(x).detach().numpy(), rtol=1e-5
    )
