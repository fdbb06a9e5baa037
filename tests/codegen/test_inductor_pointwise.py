"""minitorch.compile with the inductor backend on the pointwise ops beyond arithmetic.

Each function must compile whole (fullgraph=True: a backend failure would raise instead of
falling back) and match eager mode in values and gradients; an op the lowering does not know
runs as an extern step between compiled kernels.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch
from minitorch import ops
from tracer.dynamo import fallback_reasons


def activations(x, y):
    return x.tanh() + x.sigmoid() * y.erf() + minitorch.relu(y) + ops.silu(x)


def gelus(x, y):
    return ops.gelu(x) - ops.gelu(y, approximate="tanh")


def selection(x, y):
    picked = minitorch.where(x > y, x, y * 2.0) + minitorch.where(y <= 0.5, 1.0, y)
    return picked * minitorch.maximum(x, y) - minitorch.minimum(x, y)


def clamps(x, y):
    return x.clamp(-0.5, 0.5) + x.clamp(min=y) * y.clamp(max=0.25) + x.masked_fill(x < 0, 0.0)


def roots(x, y):
    return x.abs().sqrt() + (y.abs() + 0.5).rsqrt() + (y.abs() + 1.0).reciprocal() + 2.0**x


CASES = [activations, gelus, selection, clamps, roots]


def _inputs(dtype, requires_grad, shape=(64,)):
    rng = np.random.default_rng(0)
    # Away from the kinks (0, ties) where eager and compiled may legitimately pick a side.
    arrays = [rng.choice([-1, 1], shape) * rng.uniform(0.1, 2.0, shape) for _ in range(2)]
    return [minitorch.tensor(a.astype(dtype.np), requires_grad=requires_grad) for a in arrays]


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64], ids=str)
@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
def test_compiled_values_and_gradients_match_eager(fn, dtype):
    tol = 2e-6 if dtype is minitorch.float32 else 1e-12
    eager_in = _inputs(dtype, requires_grad=True)
    compiled_in = _inputs(dtype, requires_grad=True)
    eager_out = fn(*eager_in)
    compiled_out = minitorch.compile(fn, fullgraph=True)(*compiled_in)
    assert compiled_out.dtype is eager_out.dtype
    np.testing.assert_allclose(
        compiled_out.detach().numpy(), eager_out.detach().numpy(), rtol=tol, atol=tol
    )
    eager_out.sum().backward()
    compiled_out.sum().backward()
    for e, c in zip(eager_in, compiled_in, strict=True):
        np.testing.assert_allclose(c.grad.numpy(), e.grad.numpy(), rtol=tol, atol=tol)


def comparisons(x, y):
    return x == y, x != y, x < y, x <= 0.5, x > y, 0.0 >= x


def test_comparisons_compile_to_bool_outputs():
    x, y = _inputs(minitorch.float32, requires_grad=False)
    y = minitorch.where(x > 1.0, x, y)  # some ties
    eager = comparisons(x, y)
    compiled = minitorch.compile(comparisons, fullgraph=True)(x, y)
    for e, c in zip(eager, compiled, strict=True):
        assert c.dtype is minitorch.bool
        np.testing.assert_array_equal(c.numpy(), e.numpy())


def test_nan_propagates_through_compiled_maximum_and_relu():
    x = minitorch.tensor([float("nan"), 1.0, -1.0])
    y = minitorch.tensor([0.0, float("nan"), 0.5])
    fn = minitorch.compile(
        lambda x, y: (minitorch.maximum(x, y), minitorch.relu(x)), fullgraph=True
    )
    biggest, relu = fn(x, y)
    np.testing.assert_array_equal(biggest.numpy(), [np.nan, np.nan, 0.5])
    np.testing.assert_array_equal(relu.numpy(), [np.nan, 1.0, 0.0])


def tensor_power(x, y):
    return (x.abs() + 1.0) ** y


def test_a_call_the_lowering_refuses_runs_as_an_extern_step_not_eagerly():
    x, y = _inputs(minitorch.float32, requires_grad=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "runs eagerly because ..."
        out = minitorch.compile(tensor_power, fullgraph=True)(x, y)
    np.testing.assert_allclose(out.numpy(), tensor_power(x, y).numpy(), rtol=1e-6)
    assert fallback_reasons(tensor_power) == []
