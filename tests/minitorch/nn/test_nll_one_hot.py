"""cross_entropy and nll_loss pick each target's log-probability with a one-hot mask
([Note: picking by a one-hot mask] in minitorch/nn/functional_losses.py): compiled, the
backward is loops only (no scatter), the values and gradients match a numpy reference, and a
target out of range still raises when the graph runs."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from ir.segments import ExternStep
from minitorch.compile.inductor import compile_graph
from minitorch.errors import IndexOutOfRangeError
from minitorch.nn import functional as F
from tracer.aot import partition_joint, trace_joint

rng = np.random.default_rng(0)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _reference(x: np.ndarray, t: np.ndarray, w: np.ndarray | None, ignore: int):
    """mean cross-entropy and its gradient, from the formulas: (softmax - one_hot) * w[t]."""
    counts = t != ignore
    safe = np.where(counts, t, 0)
    weights = counts * (1.0 if w is None else w[safe])
    log_p = _log_softmax(x.astype(np.float64))
    picked = log_p[np.arange(len(t)), safe]
    loss = -(picked * weights).sum() / weights.sum()
    one_hot = np.eye(x.shape[1])[safe]
    grad = (np.exp(log_p) - one_hot) * weights[:, None] / weights.sum()
    return loss, grad


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("compiled", [False, True])
def test_cross_entropy_and_its_gradient_match_the_formulas(weighted, compiled):
    x = rng.standard_normal((12, 7)).astype(np.float32)
    t = rng.integers(0, 7, 12)
    t[[2, 5]] = -100  # ignored
    w = rng.uniform(0.5, 2.0, 7).astype(np.float32) if weighted else None
    xt = minitorch.tensor(x, requires_grad=True)
    weight = None if w is None else minitorch.tensor(w)

    def loss_fn(x, t):
        return F.cross_entropy(x, t, weight=weight)

    fn = minitorch.compile(loss_fn) if compiled else loss_fn
    loss = fn(xt, minitorch.tensor(t))
    loss.backward()
    expected_loss, expected_grad = _reference(x, t, w, -100)
    np.testing.assert_allclose(loss.item(), expected_loss, rtol=1e-5)
    np.testing.assert_allclose(xt.grad.numpy(), expected_grad, rtol=1e-4, atol=1e-6)


def test_the_compiled_backward_of_cross_entropy_runs_no_extern_step():
    x = minitorch.tensor(rng.standard_normal((8, 5)).astype(np.float32), requires_grad=True)
    t = minitorch.tensor(rng.integers(0, 5, 8))
    parts = partition_joint(*trace_joint(lambda x, t: (F.cross_entropy(x, t),), [x, t]))
    backward = compile_graph(parts.backward)
    assert [s for s in backward.steps if isinstance(s, ExternStep)] == []
    forward = compile_graph(parts.forward)
    assert [s for s in forward.steps if isinstance(s, ExternStep)] == []  # arange is a loop


@pytest.mark.parametrize("bad", [5, -1])
def test_a_target_out_of_range_raises_when_the_compiled_graph_runs(bad):
    x = minitorch.tensor(rng.standard_normal((4, 5)).astype(np.float32))
    fn = minitorch.compile(lambda x, t: F.cross_entropy(x, t))
    good = minitorch.tensor(np.array([0, 1, 2, 3]))
    np.testing.assert_allclose(fn(x, good).item(), F.cross_entropy(x, good).item(), rtol=1e-6)
    with pytest.raises(IndexOutOfRangeError):
        fn(x, minitorch.tensor(np.array([0, bad, 2, 3])))


def test_nll_loss_of_a_spatial_input_matches_the_formula():
    x = rng.standard_normal((3, 4, 2, 5)).astype(np.float32)  # (N, C, d1, d2)
    t = rng.integers(0, 4, (3, 2, 5))
    log_p = _log_softmax(x.astype(np.float64))
    expected = -np.take_along_axis(log_p, t[:, None], axis=1).mean()
    fn = minitorch.compile(lambda x, t: F.nll_loss(F.log_softmax(x, dim=1), t))
    np.testing.assert_allclose(
        fn(minitorch.tensor(x), minitorch.tensor(t)).item(), expected, rtol=1e-5
    )


@pytest.mark.parametrize("args", [(7,), (2, 11, 3), (5, -4, -2)])
def test_an_integer_arange_compiles_to_a_loop_and_matches_eager(args):
    fn = minitorch.compile(lambda x: x + minitorch.arange(*args))
    x = minitorch.tensor(np.int64(3))
    np.testing.assert_array_equal(fn(x).numpy(), 3 + np.arange(*args))


def test_a_float_arange_runs_numpys_kernel():
    fn = minitorch.compile(lambda x: x * minitorch.arange(0.0, 1.0, 0.1))
    x = minitorch.tensor(np.float32(2.0))
    np.testing.assert_array_equal(fn(x).numpy(), (2.0 * minitorch.arange(0.0, 1.0, 0.1)).numpy())
