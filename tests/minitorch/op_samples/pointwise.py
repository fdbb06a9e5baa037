"""Samples of the pointwise ops: arithmetic, powers, elementwise functions, comparisons,
selection. (Bool tensors are drawn as random masks.)"""

from __future__ import annotations

import math

import numpy as np

import minitorch
from op_samples.common import (
    POSITIVE,
    OpSpec,
    S,
    T,
    b8,
    f64,
    float_result,
    i32,
    i64,
    promoted,
    torch_result_dtype,
)


def _div_dtype(arrays: list, **kwargs) -> str:
    dtype = promoted(arrays)
    return dtype if dtype.startswith("float") else "float32"


def _bool_result(arrays: list, **kwargs) -> str:
    return "bool"


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


def _unary_samples(**values) -> list:
    """float32, 0-d, float64, int and bool inputs of a function of one tensor."""
    return [
        S(T((3,), **values)),
        S(T((), **values)),
        S(T((2, 3), f64, **values)),
        S(T((3,), i32, 1, 3)),
        S(T((4,), i64, 0, 3)),
        S(T((2,), b8)),
    ]


def _compare_samples() -> list:
    """Comparisons: broadcasting, scalars, promotion before comparing, and ties (ints)."""
    return [
        S(T((3,)), T((3,))),
        S(T((2, 3)), T((3,))),
        S(T((2, 1), f64), T((1, 3))),
        S(T((2, 3)), 0.5),
        S(T(()), T((2, 3))),
        S(T((2, 3)), T((), f64)),
        S(T((5,), i64, -2, 2), T((5,), i32, -2, 2)),  # small ints: ties
        S(T((5,), i64, -2, 2), 1),
        S(T((5,), i32, -2, 2), 0.5),  # compared in float32
        S(T((2,), b8), T((2,), b8)),
    ]


def _extremum_samples() -> list:
    return [
        S(T((3,)), T((3,))),
        S(T((2, 3)), T((3,))),
        S(T((2, 1), f64), T((1, 3))),
        S(T(()), T((2, 3), f64)),
        S(T((5,), i32, -2, 2), T((5,), i64, -2, 2)),  # ties
        S(T((3,), i64, -3, 3), T((3,))),  # int with float32: float32
        S(T((2,), b8), T((2,), b8)),
    ]


def _np_power(a, b):
    """numpy's power, with PyTorch's integer rule: a negative exponent gives 0, except for the
    bases 1 and -1 (where numpy raises)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return np.power(a, b)
    a, b = np.broadcast_arrays(a, b)
    out = np.power(a, np.where(b < 0, 0, b))
    inverse = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 1, -1, 1), 0))
    return np.where(b < 0, inverse, out)


def _in_float64(fn):
    """fn on float64 values (numpy computes sin of a bool array in float16)."""
    return lambda x, **kwargs: fn(np.asarray(x, dtype=np.float64), **kwargs)


_np_erf = np.vectorize(math.erf, otypes=[np.float64])


def _np_sigmoid(x):
    # 1 / (1 + e^-x) = e^-log(1 + e^-x), which logaddexp computes without overflow
    return np.exp(-np.logaddexp(0.0, -np.asarray(x, dtype=np.float64)))


def _np_clamp(x, min=None, max=None):
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


def _clamp_dtype(arrays: list, min=None, max=None) -> str:
    return torch_result_dtype(*[a for a in (*arrays, min, max) if a is not None])


def _np_masked_fill(x, mask, value):
    return np.where(mask, value, x).astype(x.dtype)


def _np_gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _np_erf(x / math.sqrt(2)))


def _to_copy(a, dtype=None, device=None):
    return a.astype(dtype.np) if dtype is not None else a.copy()


def _to_copy_dtype(arrays: list, dtype=None, device=None) -> str:
    return dtype.name if dtype is not None else arrays[0].dtype.name


SPECS: dict[str, OpSpec] = {
    # ---- arithmetic ------------------------------------------------------------------------
    "add": OpSpec(_binary_samples() + _int_samples(), np.add, promoted),
    "sub": OpSpec(_binary_samples() + _int_samples(), np.subtract, promoted),
    "mul": OpSpec(_binary_samples() + _int_samples(), np.multiply, promoted),
    "div": OpSpec(
        _binary_samples(**POSITIVE)
        + [
            S(T((3,), i32, 1, 4), T((3,), i32, 1, 4)),  # int / int is a float
            S(1, T((2, 2), **POSITIVE)),
        ],
        np.true_divide,
        _div_dtype,
    ),
    "neg": OpSpec([S(T((3,))), S(T(())), S(T((2, 3), f64)), S(T((4,), i64, -5, 5))], np.negative),
    "abs": OpSpec(
        [
            S(T((3,))),
            S(T(())),
            S(T((2, 3), f64)),
            S(T((5,), i64, -5, 5)),
            S(T((5,), i32, -5, 5)),
        ],
        np.abs,
    ),  # an int stays an int
    # ---- powers ----------------------------------------------------------------------------
    "pow": OpSpec(
        [
            S(T((3,)), 2),
            S(T((2, 3), f64), 3),
            S(T(()), 2),
            S(T((2, 3), **POSITIVE), 0.5),
            S(T((4,), f64, **POSITIVE), -1.5),
            S(T((3,)), 1),
            S(T((3,)), 0),
            S(T((3,), i64, -3, 3), 2),  # int tensor ** int stays int
            S(T((3,), i32, 1, 3), 0.5),  # int tensor ** float: the default float
            S(T((3,), **POSITIVE), T((3,))),  # a tensor exponent
            S(T((2, 3), f64, **POSITIVE), T((3,))),  # broadcast, float64 wins
            S(T((2, 1), **POSITIVE), T(())),  # a 0-d exponent
            S(2.0, T((2, 3))),  # a number base: 2 ** x
            S(0.5, T((3,), f64)),
            S(2, T((4,), i32, 0, 4)),  # int ** int32 tensor stays int32
            S(T((6,), i64, -2, 2), T((6,), i64, -2, 2)),  # negative int exponents: 0, or +-1
            S(T((3,), **POSITIVE), T((3,), i64, -2, 2)),  # float base, int exponent
        ],
        _np_power,
        promoted,
    ),
    "sqrt": OpSpec(_unary_samples(**POSITIVE), _in_float64(np.sqrt), float_result),
    "rsqrt": OpSpec(
        _unary_samples(**POSITIVE), _in_float64(lambda x: 1 / np.sqrt(x)), float_result
    ),
    "reciprocal": OpSpec(
        _unary_samples(**POSITIVE) + [S(T((2, 3), low=-2.0, high=-0.5))],
        _in_float64(lambda x: 1 / x),
        float_result,
    ),
    # ---- elementwise functions -------------------------------------------------------------
    "sin": OpSpec(_unary_samples(), _in_float64(np.sin), float_result),
    "cos": OpSpec(_unary_samples(), _in_float64(np.cos), float_result),
    "exp": OpSpec(_unary_samples(), _in_float64(np.exp), float_result),
    "log": OpSpec(_unary_samples(**POSITIVE), _in_float64(np.log), float_result),
    "tanh": OpSpec(
        _unary_samples() + [S(T((20,), low=-30.0, high=30.0))], _in_float64(np.tanh), float_result
    ),
    "sigmoid": OpSpec(
        _unary_samples() + [S(T((20,), f64, -800.0, 800.0)), S(T((20,), low=-100.0, high=100.0))],
        _np_sigmoid,
        float_result,
    ),
    "erf": OpSpec(
        _unary_samples() + [S(T((40,), f64, -7.0, 7.0)), S(T((40,), low=-4.0, high=4.0))],
        _np_erf,
        float_result,
    ),
    "log1p": OpSpec(
        _unary_samples(low=-0.5, high=2.0) + [S(T((6,), f64, -1e-10, 1e-10))],
        _in_float64(np.log1p),
        float_result,
    ),
    "expm1": OpSpec(
        _unary_samples() + [S(T((6,), f64, -1e-10, 1e-10)), S(T((4,), low=-1e-6, high=1e-6))],
        _in_float64(np.expm1),
        float_result,
    ),
    "relu": OpSpec(
        [
            S(T((3,))),
            S(T(())),
            S(T((2, 3), f64)),
            S(T((5,), i64, -3, 3)),
            S(T((5,), i32, -3, 3)),
        ],
        lambda x: np.maximum(x, 0),
    ),
    "gelu": OpSpec(
        [
            S(T((3,))),
            S(T(())),
            S(T((2, 3), f64, -4.0, 4.0)),
            S(T((3,)), approximate="tanh"),
            S(T((2, 3), f64, -4.0, 4.0), approximate="tanh"),
        ],
        _np_gelu,
    ),
    "silu": OpSpec(
        [S(T((3,))), S(T(())), S(T((2, 3), f64, -6.0, 6.0))],
        lambda x: x * _np_sigmoid(x),
    ),
    # ---- comparisons (bool results have no gradient) ---------------------------------------
    "eq": OpSpec(_compare_samples(), np.equal, _bool_result, grad=False),
    "ne": OpSpec(_compare_samples(), np.not_equal, _bool_result, grad=False),
    "lt": OpSpec(_compare_samples(), np.less, _bool_result, grad=False),
    "le": OpSpec(_compare_samples(), np.less_equal, _bool_result, grad=False),
    "gt": OpSpec(_compare_samples(), np.greater, _bool_result, grad=False),
    "ge": OpSpec(_compare_samples(), np.greater_equal, _bool_result, grad=False),
    # ---- selection -------------------------------------------------------------------------
    "maximum": OpSpec(_extremum_samples(), np.maximum, promoted),
    "minimum": OpSpec(_extremum_samples(), np.minimum, promoted),
    "clamp": OpSpec(
        [
            S(T((2, 3)), -0.5, 0.5),
            S(T((2, 3), f64), min=-0.5),
            S(T((2, 3)), max=0.5),
            S(T((2, 3)), T((3,), low=-1.0, high=0.0), T((2, 1), low=0.0, high=1.0)),  # broadcast
            S(T((3,), f64), T(()), None),
            S(T((4,)), 1.0, -1.0),  # min > max: every element is max
            S(T((5,), i64, -3, 3), -1, 1),  # ints stay ints
            S(T((5,), i32, -3, 3), min=0.5),  # a float bound: the default float
        ],
        _np_clamp,
        _clamp_dtype,
    ),
    "where": OpSpec(
        [
            S(T((2, 3), b8), T((2, 3)), T((2, 3))),
            S(T((2, 3), b8), T((2, 3)), T((3,))),
            S(T((2, 1), b8), T((3,)), 0.0),  # a number for other, broadcast
            S(T((3,), b8), 1, T((3,), i32, -3, 3)),  # ints stay int32
            S(T((3,), b8), T((3,), f64), T((3,))),  # float64 wins
            S(T((3,), b8), 2.5, T((3,), i64, -3, 3)),  # an int and a float: float32
            S(T((), b8), T(()), T((), f64)),
        ],
        np.where,
        lambda arrays, **kw: torch_result_dtype(*arrays[1:3]),
    ),
    "masked_fill": OpSpec(
        [
            S(T((2, 3)), T((2, 3), b8), 0.5),
            S(T((2, 3), f64), T((3,), b8), -1.0),
            S(T((2, 3)), T((2, 1), b8), T(())),  # a 0-d tensor value
            S(T((3,), i64, -3, 3), T((3,), b8), 2.7),  # into an int tensor: truncated to 2
            S(T((3,), i32, -3, 3), T((3,), b8), 7),
            S(T((1, 3)), T((2, 1), b8), 3.0),  # the result broadcasts x and mask
        ],
        _np_masked_fill,
    ),
    # ---- conversions -----------------------------------------------------------------------
    "to_copy": OpSpec(
        [
            S(T((3,)), dtype=minitorch.float64),
            S(T((2, 3), f64), dtype=minitorch.float32),
            S(T((3,), i32, -3, 3), dtype=minitorch.float32),
            S(T((2,)), dtype=minitorch.int64),
            S(T(())),
        ],
        _to_copy,
        _to_copy_dtype,
        grad=False,
    ),  # its derivative: tests/minitorch/test_device.py
    "isclose": OpSpec(
        [
            S(T((20,), low=0.0, high=1.0), T((20,), low=0.0, high=1.0), 0.0, 0.3),  # by atol
            S(T((20,), f64, 1.0, 2.0), T((20,), f64, 1.0, 2.0), 0.3, 0.0),  # by rtol
            S(T((2, 3)), T((3,))),  # the defaults, broadcasting
            S(T((8,), i64, 0, 3), T((8,), i64, 0, 3), 0.0, 1.0),  # ints: in the default float
            S(T((8,), i32, 0, 2), T((8,), i32, 0, 2), 0.0, 0.0),  # both 0: equality
            S(T((6,), b8), T((6,), b8)),
        ],
        np.isclose,
        lambda arrays, *args, **kwargs: "bool",
        grad=False,
    ),
}
