"""Every row of the op table, checked against numpy and finite differences.

For each op in `minitorch.ops.OPS`, SAMPLES lists argument lists to call it with. Each sample
is checked three ways:

    value   the eager result equals numpy's, with PyTorch's result shape and dtype
    meta    the op's shape/dtype rule (and fake-tensor tracing) predicts that shape and dtype
    grad    autograd's gradient equals central finite differences of the numpy reference,
            in float64

Registering an op without samples fails `test_every_op_has_samples`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import minitorch
from minitorch import autograd
from minitorch.fake import FakeTensorMode, fake_like
from minitorch.ops import OPS

f32, f64, i32, i64 = "float32", "float64", "int32", "int64"


@dataclass(frozen=True)
class T:
    """A tensor argument: its shape, dtype, and the interval its values are drawn from."""

    shape: tuple[int, ...]
    dtype: str = f32
    low: float = -2.0
    high: float = 2.0


POSITIVE = {"low": 0.5, "high": 2.0}  # for log, division and fractional powers


def S(*args, **kwargs) -> tuple[tuple, dict]:
    """One sample: the op's positional and keyword arguments, with T for tensors."""
    return args, kwargs


def _binary_samples(**right) -> list:
    """Shapes, dtypes and scalar sides shared by add, sub, mul and div.

    `right` narrows the values of the right operand (positive denominators for div).
    """
    return [
        S(T((3,), **right), T((3,), **right)),
        S(T((2, 3)), T((3,), **right)),  # broadcast a row
        S(T((2, 1)), T((1, 3), **right)),  # both sides stretch
        S(T((4, 1, 3)), T((2, 1), **right)),  # a leading dim appears
        S(T(()), T((2, 3), **right)),  # 0-d with n-d
        S(T(()), T((), f64, **right)),  # two 0-d tensors: float64 wins
        S(T((2, 3)), 2.0),  # float32 tensor + Python float: float32
        S(1.5, T((2, 3), f64, **right)),  # scalar on the left
        S(T((2, 3), f64), 3),  # Python int
        S(T((2, 3)), T((), f64, **right)),  # a 0-d float64 tensor does not promote float32
        S(T((2, 3), f64), T((3,), **right)),  # float32 with float64 dims: float64
        S(T((3,), i32, -3, 3), 2.5),  # int tensor + Python float: the default float
        S(T((3,), i64, -3, 3), T((), f64, **right)),  # int tensor + 0-d float64: float64
    ]


def _int_samples() -> list:
    """Integer arithmetic (no gradients): int32 + int64 dims -> int64, + 0-d int64 -> int32."""
    return [
        S(T((3,), i32, -3, 3), T((3,), i64, 1, 3)),
        S(T((2, 3), i32, -3, 3), T((), i64, 1, 3)),
        S(T((2, 3), i64, -3, 3), 2),
    ]


SAMPLES: dict[str, list] = {
    "add": _binary_samples() + _int_samples(),
    "sub": _binary_samples() + _int_samples(),
    "mul": _binary_samples() + _int_samples(),
    "div": _binary_samples(**POSITIVE) + [
        S(T((3,), i32, 1, 4), T((3,), i32, 1, 4)),  # int / int is a float
        S(1, T((2, 2), **POSITIVE)),
    ],
    "neg": [S(T((3,))), S(T(())), S(T((2, 3), f64)), S(T((4,), i64, -5, 5))],
    "pow": [
        S(T((3,)), 2),
        S(T((2, 3), f64), 3),
        S(T(()), 2),
        S(T((2, 3), **POSITIVE), 0.5),
        S(T((4,), f64, **POSITIVE), -1.5),
        S(T((3,)), 1),
        S(T((3,)), 0),
        S(T((3,), i64, -3, 3), 2),  # int tensor ** int stays int
        S(T((3,), i32, 1, 3), 0.5),  # int tensor ** float: the default float
    ],
    "sin": [S(T((3,))), S(T(())), S(T((2, 3), f64)), S(T((3,), i32, -3, 3))],
    "cos": [S(T((3,))), S(T(())), S(T((2, 3), f64)), S(T((3,), i64, -3, 3))],
    "exp": [S(T((3,))), S(T(())), S(T((2, 3), f64)), S(T((3,), i32, -3, 3))],
    "log": [
        S(T((3,), **POSITIVE)), S(T((), **POSITIVE)), S(T((2, 3), f64, **POSITIVE)),
        S(T((3,), i64, 1, 5)),
    ],
    "sum": [
        S(T((2, 3))),
        S(T(())),
        S(T((2, 3)), dim=0),
        S(T((2, 3, 4), f64), dim=-1),
        S(T((2, 3, 4)), dim=(0, -1)),
        S(T((2, 3, 4)), dim=(2, 0), keepdim=True),
        S(T((2, 3)), 1, True),  # dim and keepdim passed positionally
        S(T((2, 3)), dim=None, keepdim=True),
        S(T(()), dim=0),  # a 0-d tensor accepts dim 0 and -1, as in PyTorch
        S(T((2, 0))),  # an empty sum is 0
        S(T((2, 3), i32, -3, 3), dim=1),  # integer sums accumulate in int64
    ],
    "mean": [
        S(T((2, 3))),
        S(T(())),
        S(T((2, 3), f64), dim=0),
        S(T((2, 3, 4)), dim=-2),
        S(T((2, 3, 4)), dim=(0, -1), keepdim=True),
        S(T((2, 3, 4), f64), dim=(1,)),
    ],
    "expand": [
        S(T((3, 1)), (3, 4)),
        S(T((3, 1)), (2, -1, 4)),  # -1 keeps a size; a leading dim appears
        S(T(()), (2, 3)),
        S(T((1,), f64), (5,)),
        S(T((2, 3)), (2, 3)),
        S(T((1, 3), i64, -3, 3), (2, 3)),
    ],
    "reshape": [
        S(T((2, 3, 4)), (-1, 4)),
        S(T((6,), f64), (2, -1)),
        S(T((2, 3)), (6,)),
        S(T((1,)), ()),
        S(T(()), (1, 1)),
        S(T((2, 3), i32, -3, 3), (3, 2)),
    ],
}


# ---- numpy references ------------------------------------------------------------------------


def _np_sum(a, dim=None, keepdim=False):
    if a.ndim == 0:
        return a.copy()  # PyTorch lets a 0-d tensor reduce over dim 0; numpy does not
    return np.sum(a, axis=dim, keepdims=keepdim)


def _np_mean(a, dim=None, keepdim=False):
    if a.ndim == 0:
        return a.copy()
    return np.mean(a, axis=dim, keepdims=keepdim)


def _np_expand(a, shape):
    lead = len(shape) - a.ndim
    return np.broadcast_to(a, [a.shape[i - lead] if n == -1 else n for i, n in enumerate(shape)])


NUMPY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "neg": np.negative, "pow": np.power, "sin": np.sin, "cos": np.cos, "exp": np.exp,
    "log": np.log, "sum": _np_sum, "mean": _np_mean, "expand": _np_expand,
    "reshape": np.reshape,
}

_CATEGORY = {"bool": 0, "int32": 1, "int64": 1, "float32": 2, "float64": 2}


def torch_result_dtype(*operands) -> str:
    """PyTorch's type promotion, as its documentation states it.

    The result's category (bool < int < float) is the highest among all operands. Its dtype is
    the widest of that category among the tensors with dimensions; if none of them has that
    category, among the 0-d tensors; else the Python scalar's default (int64, float32).
    """
    groups: tuple[list[str], list[str], list[str]] = ([], [], [])
    for x in operands:
        if isinstance(x, np.ndarray):
            groups[0 if x.ndim else 1].append(x.dtype.name)
        else:
            groups[2].append("float32" if isinstance(x, float) else "int64")
    top = max(_CATEGORY[d] for group in groups for d in group)
    for group in groups:
        same = [d for d in group if _CATEGORY[d] == top]
        if same:
            return max(same, key=lambda d: np.dtype(d).itemsize)
    raise AssertionError("no operands")


def expected_dtype(name: str, arrays: list) -> str:
    """The dtype PyTorch gives op `name` on these (numpy) arguments."""
    if name in ("add", "sub", "mul", "pow"):
        return torch_result_dtype(*arrays[:2])
    if name == "div":
        dtype = torch_result_dtype(*arrays[:2])
        return dtype if _CATEGORY[dtype] == 2 else "float32"
    kind = arrays[0].dtype.name
    if name in ("sin", "cos", "exp", "log", "mean"):
        return kind if _CATEGORY[kind] == 2 else "float32"
    if name == "sum":
        return kind if _CATEGORY[kind] == 2 else "int64"
    return kind  # neg, expand, reshape keep the dtype


# ---- running a sample ------------------------------------------------------------------------


def _cases():
    for name, samples in SAMPLES.items():
        for i, sample in enumerate(samples):
            yield pytest.param(name, i, sample, id=f"{name}-{i}")


CASES = list(_cases())
# Gradients exist for float inputs only: samples with integer tensors alone are not rows here.
GRAD_CASES = [case for case in CASES
              if any(isinstance(a, T) and a.dtype in (f32, f64) for a in case.values[2][0])]


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
    return np.asarray(NUMPY[name](*wide, **kwargs))


def test_every_op_has_samples():
    assert set(SAMPLES) == set(OPS), "each op of minitorch.ops.OPS needs SAMPLES (and NUMPY)"
    assert set(NUMPY) == set(OPS)
    assert all(SAMPLES[name] for name in SAMPLES)


@pytest.mark.parametrize("name, index, sample", CASES)
def test_value_matches_numpy(name, index, sample):
    args, kwargs = sample
    arrays = _draw(args, seed=index)
    out = OPS[name](*_tensors(arrays), **kwargs)
    expected = _reference(name, arrays, kwargs)

    assert out.dtype.name == expected_dtype(name, arrays)
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
