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
from minitorch.device import cuda_is_available
from minitorch.fake import FakeTensorMode, fake_like
from minitorch.ops import OPS

# Every module of op_samples/ (one per family of ops) contributes its SPECS.
SPECS: dict = {}
for _module in pkgutil.iter_modules(op_samples.__path__):
    SPECS.update(getattr(importlib.import_module(f"op_samples.{_module.name}"), "SPECS", {}))


def _flat_samples(args) -> list:
    """Every T in a sample's arguments, also inside lists and tuples (cat, stack)."""
    out = []
    for a in args:
        if isinstance(a, T):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(_flat_samples(a))
    return out


# ---- running a sample ------------------------------------------------------------------------


def _cases():
    for name, spec in SPECS.items():
        for i, sample in enumerate(spec.samples):
            yield pytest.param(name, i, sample, id=f"{name}-{i}")


CASES = list(_cases())
# Gradients exist for float inputs only: samples with integer tensors alone are not rows here.
GRAD_CASES = [
    case
    for case in CASES
    if SPECS[case.values[0]].grad
    and any(a.dtype in (f32, f64) for a in _flat_samples(case.values[2][0]))
]
DEVICES = ["cpu"] + (["cuda"] if cuda_is_available() else [])  # the suite runs on each


def _draw(args, seed: int, as_float64: bool = False):
    """The sample's arguments with every T (also inside lists/tuples) replaced by an array."""
    rng = np.random.default_rng(seed)

    def draw(a):
        if isinstance(a, (list, tuple)) and any(isinstance(x, (T, list, tuple)) for x in a):
            return type(a)(draw(x) for x in a)
        if not isinstance(a, T):
            return a
        if a.dtype in (i32, i64):
            return rng.integers(a.low, a.high, size=a.shape, endpoint=True).astype(a.dtype)
        if a.dtype == "bool":
            return rng.integers(0, 1, size=a.shape, endpoint=True).astype(bool)
        dtype = f64 if as_float64 else a.dtype
        return np.asarray(rng.uniform(a.low, a.high, size=a.shape), dtype=dtype)

    return [draw(a) for a in args]


def _map_arrays(args, fn):
    """`args` with fn applied to every numpy array, however deeply nested in lists/tuples."""
    if isinstance(args, np.ndarray):
        return fn(args)
    if isinstance(args, (list, tuple)):
        return type(args)(_map_arrays(a, fn) for a in args)
    return args


def _arrays(args) -> list[np.ndarray]:
    """Every numpy array inside `args`, in order (the leaves gradients are taken for)."""
    found: list = []
    _map_arrays(args, lambda a: found.append(a) or a)
    return found


def _tensors(arrays, requires_grad: bool = False, device: str = "cpu"):
    def make(a):
        grad = requires_grad and a.dtype.kind == "f"
        return minitorch.tensor(a, requires_grad=grad, device=device)

    return _map_arrays(arrays, make)


def _outputs(out) -> tuple:
    """An op's result as a tuple of tensors (multi-output ops already return one)."""
    return tuple(out) if isinstance(out, tuple) else (out,)


def _reference(name: str, arrays: list, kwargs: dict) -> tuple:
    """numpy's answer(s), computed in float64 for float inputs, as a tuple of arrays."""
    wide = _map_arrays(arrays, lambda a: a.astype(f64) if a.dtype.kind == "f" else a)
    result = SPECS[name].numpy(*wide, **kwargs)
    return (
        tuple(np.asarray(r) for r in result) if isinstance(result, tuple) else (np.asarray(result),)
    )


def _expected_dtypes(name: str, arrays: list, kwargs: dict) -> tuple:
    dtype = SPECS[name].dtype(arrays, **kwargs)
    return tuple(dtype) if isinstance(dtype, (tuple, list)) else (dtype,)


def test_every_op_has_samples():
    missing = set(OPS) - set(SPECS)
    assert not missing, f"ops without an OpSpec in tests/minitorch/op_samples: {sorted(missing)}"
    assert set(SPECS) <= set(OPS)
    assert all(spec.samples for spec in SPECS.values())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, index, sample", CASES)
def test_value_matches_numpy(name, index, sample, device):
    args, kwargs = sample
    arrays = _draw(args, seed=index)
    outs = _outputs(OPS[name](*_tensors(arrays, device=device), **kwargs))
    expected = _reference(name, arrays, kwargs)

    assert len(outs) == len(expected)
    assert tuple(o.dtype.name for o in outs) == _expected_dtypes(name, arrays, kwargs)
    # A factory (no tensor argument) makes its tensor on the CPU, as PyTorch's do.
    device = device if _flat_samples(args) else "cpu"
    for out, want in zip(outs, expected):
        assert tuple(out.shape) == want.shape and out.device == device
        result = out.cpu().numpy()
        if out.dtype.is_floating_point:
            rtol = 1e-6 if out.dtype is minitorch.float32 else 1e-12
            np.testing.assert_allclose(result, want, rtol=rtol, atol=rtol)
        else:
            np.testing.assert_array_equal(result, want)


@pytest.mark.parametrize("name, index, sample", CASES)
def test_meta_matches_eager(name, index, sample):
    args, kwargs = sample
    tensors = _tensors(_draw(args, seed=index))
    outs = _outputs(OPS[name](*tensors, **kwargs))
    described = tuple((tuple(o.shape), o.dtype) for o in outs)

    if OPS[name].meta is not None:  # composites have no rule of their own
        meta = OPS[name].meta(*tensors, **kwargs)
        metas = meta if isinstance(meta, tuple) else (meta,)
        assert tuple((m.shape, m.dtype) for m in metas) == described
    fakes = _map_tensors(tensors, fake_like)
    with FakeTensorMode():
        fake_outs = _outputs(OPS[name](*fakes, **kwargs))
    assert tuple((tuple(o.shape), o.dtype) for o in fake_outs) == described


def _map_tensors(args, fn):
    if isinstance(args, minitorch.Tensor):
        return fn(args)
    if isinstance(args, (list, tuple)):
        return type(args)(_map_tensors(a, fn) for a in args)
    return args


def _finite_difference(
    name: str, arrays: list, kwargs: dict, weights: tuple, i: int, eps: float = 1e-6
) -> np.ndarray:
    """d sum_k(weights_k * f_k(...)) / d leaf i, by central differences of the reference.

    `weights` holds one array per float output (None for the others).
    """
    leaf = _arrays(arrays)[i]
    grad = np.zeros_like(leaf)
    for index in np.ndindex(leaf.shape):
        values = []
        for step in (eps, -eps):
            moved_leaf = leaf.copy()
            moved_leaf[index] += step
            moved = _map_arrays(arrays, lambda a, new=moved_leaf: new if a is leaf else a)
            outs = _reference(name, moved, kwargs)
            values.append(sum(np.sum(w * o) for w, o in zip(weights, outs) if w is not None))
        grad[index] = (values[0] - values[1]) / (2 * eps)
    return grad


@pytest.mark.parametrize("name, index, sample", GRAD_CASES)
def test_gradient_matches_finite_differences(name, index, sample):
    args, kwargs = sample
    arrays = _draw(args, seed=index, as_float64=True)
    tensors = _tensors(arrays, requires_grad=True)
    leaves = [t for t in _flat_tensors(tensors) if t.requires_grad]
    outs = _outputs(OPS[name](*tensors, **kwargs))
    rng = np.random.default_rng(100 + index)
    weights = tuple(
        rng.uniform(-1, 1, size=tuple(o.shape)) if o.dtype.is_floating_point else None for o in outs
    )

    # The gradient of sum(weights * out) is the vector-Jacobian product with `weights`.
    diff = [(o, w) for o, w in zip(outs, weights) if w is not None]
    grads = autograd.grad(
        [o for o, _ in diff],
        leaves,
        grad_outputs=[minitorch.tensor(w) for _, w in diff],
        allow_unused=True,
    )

    float_leaves = [i for i, a in enumerate(_arrays(arrays)) if a.dtype.kind == "f"]
    for i, leaf, grad in zip(float_leaves, leaves, grads, strict=True):
        expected = _finite_difference(name, arrays, kwargs, weights, i)
        got = np.zeros_like(expected) if grad is None else grad.numpy()
        assert got.shape == tuple(leaf.shape)
        assert grad is None or grad.dtype is minitorch.float64
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


def _flat_tensors(args) -> list:
    found: list = []
    _map_tensors(args, lambda t: found.append(t) or t)
    return found


@pytest.mark.parametrize(
    "left, right, dtype",
    [
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
    ],
)
def test_promotion_examples_from_pytorch(left, right, dtype):
    a, b = _tensors(_draw((left, right), seed=0))
    assert (a + b).dtype is dtype
    assert (b * a).dtype is dtype
