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
        print("inside the block", minitorch.is_grad_enabled(), end="")  # a break
        z = y + 1  # resumed inside the block: no grad
    return z + x, y.requires_grad, minitorch.is_grad_enabled()


def nested_break(x, w):
    with minitorch.no_grad():
        y = x * 2
        with minitorch.enable_grad():
            z = w * 3
            print("|inner", minitorch.is_grad_enabled(), end="")
            z = z * y
        q = z + 1
    return (q * w).sum(), z.requires_grad, q.requires_grad


def raises_after_break(x):
    with minitorch.no_grad():
        print("|before", end="")
        raise ValueError("inside the block")


def break_in_a_try(x):
    try:
        with minitorch.no_grad():
            print("|try", end="")
            y = x * 2
    except ValueError:
        y = x
    return y


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_a_break_inside_a_block_leaves_it_and_enters_it_again(backend, capsys):
    """The graph before the break ends inside the block, the resume function starts inside
    it (TorchDynamo's graphs, one either side of the break)."""
    reset()
    x = minitorch.randn(2, requires_grad=True)
    report = explain(break_inside)(x)
    assert (report.graph_count, report.graph_break_count) == (2, 1), report.break_reasons
    reset()
    capsys.readouterr()
    compiled = minitorch.compile(break_inside, backend=backend)
    for _ in range(2):  # the first call compiles the resume function
        out, y_grad, mode = compiled(x)
        expected, eager_y_grad, eager_mode = break_inside(x)
        assert (y_grad, mode) == (eager_y_grad, eager_mode) == (False, True)
        assert out.requires_grad and minitorch.is_grad_enabled()
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy())
    assert capsys.readouterr().out == "inside the block False" * 4
    assert fallback_reasons(break_inside) == []


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_a_break_inside_nested_blocks_gives_eagers_gradients(backend, capsys):
    reset()
    x, w = minitorch.randn(3, requires_grad=True), minitorch.randn(3, requires_grad=True)
    compiled = minitorch.compile(nested_break, backend=backend)
    for _ in range(2):
        (loss, *flags), grads = _grads(compiled, x, w)
        (expected, *eager_flags), eager_grads = _grads(nested_break, x, w)
        assert flags == eager_flags == [True, False] and minitorch.is_grad_enabled()
        np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)
        assert grads[0] is None and eager_grads[0] is None
        np.testing.assert_allclose(grads[1], eager_grads[1], rtol=1e-6)
    assert capsys.readouterr().out == "|inner True" * 4


def test_an_exception_after_a_break_leaves_the_block(capsys):
    reset()
    x = minitorch.randn(2, requires_grad=True)
    compiled = optimize(raises_after_break, backend=EAGER)
    for _ in range(2):
        with pytest.raises(ValueError, match="inside the block"):
            compiled(x)
        assert minitorch.is_grad_enabled()  # the block's __exit__ ran, as in eager


def test_a_break_inside_a_block_inside_a_try_still_runs_right(capsys):
    # a try around the block: the break moves to the block's start (the frame traced again)
    reset()
    x = minitorch.randn(2, requires_grad=True)
    out = optimize(break_in_a_try, backend=EAGER)(x)
    assert not out.requires_grad and minitorch.is_grad_enabled()
    np.testing.assert_allclose(out.numpy(), (x * 2).detach().numpy())


def enables_then_returns(x):
    with minitorch.enable_grad():
        y = x * x
    return y


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_graph_that_enables_grad_called_under_no_grad(backend):
    """AOT autograd sees the enable_grad block: its outputs get a backward even when the
    graph is called under no_grad (they had none before)."""
    reset()
    x = minitorch.randn(3, requires_grad=True)
    with minitorch.no_grad():
        y = minitorch.compile(enables_then_returns, backend=backend)(x)
    assert y.requires_grad and minitorch.is_grad_enabled()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)


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


def helper_with_a_break(x):
    with minitorch.no_grad():
        y = x * 2
        print("|helper", end="")  # the caller breaks at its call of the helper
    return y


def calls_the_helper(x):
    a = x * 3
    return helper_with_a_break(x) + x + a, minitorch.is_grad_enabled()


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_a_block_in_an_inlined_call_that_breaks_is_undone(backend, capsys):
    """The helper's block was entered while inlining it, then the call failed: its mode
    change leaves the graph and the tracing (it was left set: results without gradients and
    grad mode off after the call)."""
    reset()
    x = minitorch.randn(3, requires_grad=True)
    compiled = minitorch.compile(calls_the_helper, backend=backend)
    for _ in range(2):
        out, mode = compiled(x)
        expected, _ = calls_the_helper(x)
        assert mode is True and minitorch.is_grad_enabled() and out.requires_grad
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy())


def statement_then_break(x):
    minitorch.set_grad_enabled(False)
    y = x * 2
    print("|statement", end="")  # the graph ends with grad off, which it does not leave set
    return y * x


def block_then_break(x):
    with minitorch.no_grad():
        y = x * 2
        print("|in", end="")
    print("|after", minitorch.is_grad_enabled(), end="")  # the resume function's own break
    return y * x


def block_in_a_block(x):
    with minitorch.no_grad():
        return block_then_break(x)


@pytest.mark.parametrize("fn", [statement_then_break, block_then_break, block_in_a_block])
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_the_mode_a_graph_ends_in_is_set_at_the_break(fn, backend, capsys):
    reset()
    x = minitorch.randn(3, requires_grad=True)
    compiled = minitorch.compile(fn, backend=backend)
    try:
        for _ in range(2):
            expected = fn(x)
            eager_mode, eager_out = minitorch.is_grad_enabled(), capsys.readouterr().out
            minitorch.set_grad_enabled(True)
            out = compiled(x)
            assert (minitorch.is_grad_enabled(), capsys.readouterr().out) == (eager_mode, eager_out)
            minitorch.set_grad_enabled(True)
            assert out.requires_grad == expected.requires_grad
            np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy())
    finally:
        minitorch.set_grad_enabled(True)
