"""Every row of the op table, checked against numpy and finite differences.

For each op in `minitorch.ops.OPS`, op_samples/<family>.py lists arguments to call it with.
Each sample is checked three ways:

    value   the eager result equals numpy's, with PyTorch's result shape and dtype
    meta    the op's shape/dtype rule (and fake-tensor tracing) predicts that shape and dtype
    grad    autograd's gradient equals central finite differences of the numpy reference,
            in float64

Registering an op without an OpSpec fails `test_every_op_has_samples`.
"""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import op_samples
import pytest
from op_samples.common import T, f32, f64, i32, i64

import minitorch
from minitorch import autograd
from minitorch.fake import FakeTensorMode, fake_like
from minitorch.ops import OPS

# Every module of op_samples/ (one per family of ops) contributes its SPECS.
SPECS: dict = {}
for _module in pkgutil.iter_modules(op_samples.__path__):
    SPECS.update(getattr(importlib.import_module(f"op_samples.{_module.name}"), "SPECS", {}))

# ---- running a sample ------------------------------------------------------------------------


def _cases():
    for name, spec in SPECS.items():
        for i, sample in enumerate(spec.samples):
            yield pytest.param(name, i, sample, id=f"{name}-{i}")


CASES = list(_cases())
# Gradients exist for float inputs only: samples with integer tensors alone are not rows here.
GRAD_CASES = [case for case in CASES if SPECS[case.values[0]].grad
              and any(isinstance(a, T) and a.dtype in (f32, f64) for a in case.values[2][0])]


def _draw(args: tuple, seed: int, as_float64: bool = False) -> list:
    """The sample's arguments with every T replaced by a numpy array."""
    rng = np.random.default_rng(seed)
    out = []
    for a in args:
        if not isinstance(a, T):
            out.append(a)
            continue
        if a.dtype in (i32, i64):
            out.append(rng.integers(a.low, a.high, size=a.shape, endpoint=True).astype(a.dtype))
        else:
            dtype = f64 if as_float64 else a.dtype
            out.append(np.asarray(rng.uniform(a.low, a.high, size=a.shape), dtype=dtype))
    return out


def _tensors(arrays: list, requires_grad: bool = False) -> list:
    out = []
    for a in arrays:
        if isinstance(a, np.ndarray):
            grad = requires_grad and a.dtype.kind == "f"
            out.append(minitorch.tensor(a, requires_grad=grad))
        else:
            out.append(a)
    return out


def _reference(name: str, arrays: list, kwargs: dict) -> np.ndarray:
    """numpy's answer, computed in float64 for float inputs."""
    wide = [a.astype(f64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
            for a in arrays]
    return np.asarray(SPECS[name].numpy(*wide, **kwargs))


def test_every_op_has_samples():
    missing = set(OPS) - set(SPECS)
    assert not missing, f"ops without an OpSpec in tests/minitorch/op_samples: {sorted(missing)}"
    assert set(SPECS) <= set(OPS)
    assert all(spec.samples for spec in SPECS.values())


@pytest.mark.parametrize("name, index, sample", CASES)
def test_value_matches_numpy(name, index, sample):
    args, kwargs = sample
    arrays = _draw(args, seed=index)
    out = OPS[name](*_tensors(arrays), **kwargs)
    expected = _reference(name, arrays, kwargs)

    assert out.dtype.name == SPECS[name].dtype(arrays, **kwargs)
    assert tuple(out.shape) == expected.shape
    result = out.numpy()
    if out.dtype.is_floating_point:
        rtol = 1e-6 if out.dtype is minitorch.float32 else 1e-12
        np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("name, index, sample", CASES)
def test_meta_matches_eager(name, index, sample):
    args, kwargs = sample
    tensors = _tensors(_draw(args, seed=index))
    out = OPS[name](*tensors, **kwargs)

    if OPS[name].meta is not None:  # composites have no rule of their own
        meta = OPS[name].meta(*tensors, **kwargs)
        assert (meta.shape, meta.dtype) == (tuple(out.shape), out.dtype)
    fakes = [fake_like(t) if isinstance(t, minitorch.Tensor) else t for t in tensors]
    with FakeTensorMode():
        fake_out = OPS[name](*fakes, **kwargs)
    assert (tuple(fake_out.shape), fake_out.dtype) == (tuple(out.shape), out.dtype)


def _finite_difference(name: str, arrays: list, kwargs: dict, weights: np.ndarray,
                       i: int, eps: float = 1e-6) -> np.ndarray:
    """d sum(weights * f(...)) / d arrays[i], by central differences of the numpy reference."""
    grad = np.zeros_like(arrays[i])
    for index in np.ndindex(arrays[i].shape):
        values = []
        for step in (eps, -eps):
            moved = list(arrays)
            moved[i] = arrays[i].copy()
            moved[i][index] += step
            values.append(np.sum(weights * _reference(name, moved, kwargs)))
        grad[index] = (values[0] - values[1]) / (2 * eps)
    return grad


@pytest.mark.parametrize("name, index, sample", GRAD_CASES)
def test_gradient_matches_finite_differences(name, index, sample):
    args, kwargs = sample
    arrays = _draw(args, seed=index, as_float64=True)
    tensors = _tensors(arrays, requires_grad=True)
    wrt = [i for i, t in enumerate(tensors) if getattr(t, "requires_grad", False)]
    out = OPS[name](*tensors, **kwargs)
    weights = np.random.default_rng(100 + index).uniform(-1, 1, size=tuple(out.shape))

    # The gradient of sum(weights * out) is the vector-Jacobian product with `weights`.
    grads = autograd.grad(out, [tensors[i] for i in wrt], grad_outputs=minitorch.tensor(weights))

    for i, grad in zip(wrt, grads):
        assert tuple(grad.shape) == arrays[i].shape
        assert grad.dtype is minitorch.float64
        expected = _finite_difference(name, arrays, kwargs, weights, i)
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("left, right, dtype", [
    (T((3,)), 2.0, minitorch.float32),
    (T((3,), i64), 2.5, minitorch.float32),
    (T((3,), i32), 2, minitorch.int32),
    (T((3,)), T((), f64), minitorch.float32),
    (T((3,), i32), T((), i64), minitorch.int32),
    (T((3,), i32), T((), f64), minitorch.float64),
    (T(()), T((), f64), minitorch.float64),
    (T((3,)), T((3,), f64), minitorch.float64),
    (T((3,), i32), T((3,), f32), minitorch.float32),
    (1, T((), i32), minitorch.int32),
])
def test_promotion_examples_from_pytorch(left, right, dtype):
    a, b = _tensors(_draw((left, right), seed=0))
    assert (a + b).dtype is dtype
    assert (b * a).dtype is dtype
