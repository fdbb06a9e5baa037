"""`with no_grad():`, `enable_grad()` and `set_grad_enabled(mode)` inside compiled code: one
graph whose mode changes are nodes, eager's values and gradients on every backend."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from tracer.dynamo import EAGER, explain, fallback_reasons, optimize, reset


def nested_blocks(x, w):
    with minitorch.no_grad():
        y = x * 2
        with minitorch.enable_grad():
            z = w * 3
    return (y * w + z).sum(), minitorch.is_grad_enabled()


def ema_update(w, avg):
    loss = (w * w).sum()
    with minitorch.no_grad():
        avg.mul_(0.9).add_(w * 0.1)  # the running average records no backward
    return loss


def statements(x):
    minitorch.set_grad_enabled(False)
    y = x * 2
    minitorch.set_grad_enabled(True)
    return y, x * 3


def _grads(fn, *args):
    out = fn(*args)
    loss = out[0] if isinstance(out, tuple) else out
    loss.backward()
    grads = [None if a.grad is None else a.grad.numpy().copy() for a in args]
    for a in args:
        a.grad = None
    return out, grads


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_blocks_are_one_graph_with_eagers_gradients(backend):
    reset()
    x = minitorch.randn(3, requires_grad=True)
    w = minitorch.randn(3, requires_grad=True)
    report = explain(nested_blocks)(x, w)
    assert report.graph_count == 1 and report.graph_break_count == 0
    reset()
    (loss, mode), grads = _grads(minitorch.compile(nested_blocks, backend=backend), x, w)
    (expected, eager_mode), eager_grads = _grads(nested_blocks, x, w)
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)
    assert mode is eager_mode is True and minitorch.is_grad_enabled()
    assert grads[0] is None and eager_grads[0] is None  # nothing reached x through the block
    np.testing.assert_allclose(grads[1], eager_grads[1], rtol=1e-6)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_a_running_average_under_no_grad(backend):
    reset()
    w = minitorch.randn(4, requires_grad=True)
    mine, theirs = minitorch.zeros(4), minitorch.zeros(4)
    minitorch.compile(ema_update, backend=backend)(w, mine).backward()
    ema_update(w, theirs)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)
    assert not mine.requires_grad


def test_set_grad_enabled_as_a_statement():
    reset()
    x = minitorch.randn(2, requires_grad=True)
    y, z = optimize(statements, backend=EAGER)(x)
    assert not y.requires_grad and z.requires_grad and minitorch.is_grad_enabled()
    assert fallback_reasons(statements) == []


def break_inside(x):
    with minitorch.no_grad():
        y = x * 2
        print("inside the block", end="")  # no break can go inside the block ...
    return y + x


def test_a_break_inside_a_block_breaks_at_the_block_and_restores_the_mode(capsys):
    # ... so the frame is traced again, breaking where the block starts; the rest resumes
    reset()
    x = minitorch.randn(2, requires_grad=True)
    out = optimize(break_inside, backend=EAGER)(x)
    assert out.requires_grad and minitorch.is_grad_enabled()
    assert fallback_reasons(break_inside) == []
    reasons = [b.reason for b in explain(break_inside)(x).break_reasons]
    assert any("no_grad() around code that cannot be traced" in r for r in reasons), reasons
    np.testing.assert_allclose(out.detach().numpy(), break_inside(x).detach().numpy())


def autocast_blocks(x, w):
    with minitorch.autocast(device_type="cpu", dtype=minitorch.bfloat16):
        y = x * w  # autocast changes no value here: the block is its body
    with minitorch.autocast("cpu", enabled=False):
        z = y + 1
    return z.sum()


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_autocast_blocks_are_their_body(backend):
    reset()
    x, w = minitorch.randn(3, requires_grad=True), minitorch.randn(3)
    report = explain(autocast_blocks)(x, w)
    assert report.graph_count == 1 and report.graph_break_count == 0
    reset()
    got = minitorch.compile(autocast_blocks, backend=backend)(x, w)
    np.testing.assert_allclose(got.item(), autocast_blocks(x, w).item(), rtol=1e-6)
    assert not minitorch.is_autocast_enabled("cpu")
