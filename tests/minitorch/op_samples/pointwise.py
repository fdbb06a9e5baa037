"""Samples of the pointwise ops: arithmetic, powers, transcendental functions."""

from __future__ import annotations

import numpy as np
from op_samples.common import POSITIVE, OpSpec, S, T, f64, float_result, i32, i64, promoted

import minitorch


def _div_dtype(arrays: list, **kwargs) -> str:
    dtype = promoted(arrays)
    return dtype if dtype.startswith("float") else "float32"


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


def _to_copy(a, dtype=None, device=None):
    return a.astype(dtype.np) if dtype is not None else a.copy()


def _to_copy_dtype(arrays: list, dtype=None, device=None) -> str:
    return dtype.name if dtype is not None else arrays[0].dtype.name


SPECS: dict[str, OpSpec] = {
    "add": OpSpec(_binary_samples() + _int_samples(), np.add, promoted),
    "sub": OpSpec(_binary_samples() + _int_samples(), np.subtract, promoted),
    "mul": OpSpec(_binary_samples() + _int_samples(), np.multiply, promoted),
    "div": OpSpec(_binary_samples(**POSITIVE) + [
        S(T((3,), i32, 1, 4), T((3,), i32, 1, 4)),  # int / int is a float
        S(1, T((2, 2), **POSITIVE)),
    ], np.true_divide, _div_dtype),
    "neg": OpSpec([S(T((3,))), S(T(())), S(T((2, 3), f64)), S(T((4,), i64, -5, 5))], np.negative),
    "pow": OpSpec([
        S(T((3,)), 2),
        S(T((2, 3), f64), 3),
        S(T(()), 2),
        S(T((2, 3), **POSITIVE), 0.5),
        S(T((4,), f64, **POSITIVE), -1.5),
        S(T((3,)), 1),
        S(T((3,)), 0),
        S(T((3,), i64, -3, 3), 2),  # int tensor ** int stays int
        S(T((3,), i32, 1, 3), 0.5),  # int tensor ** float: the default float
    ], np.power, promoted),
    "sin": OpSpec(
        [S(T((3,))), S(T(())), S(T((2, 3), f64)), S(T((3,), i32, -3, 3))], np.sin, float_result
    ),
    "cos": OpSpec(
        [S(T((3,))), S(T(())), S(T((2, 3), f64)), S(T((3,), i64, -3, 3))], np.cos, float_result
    ),
    "exp": OpSpec(
        [S(T((3,))), S(T(())), S(T((2, 3), f64)), S(T((3,), i32, -3, 3))], np.exp, float_result
    ),
    "log": OpSpec([
        S(T((3,), **POSITIVE)), S(T((), **POSITIVE)), S(T((2, 3), f64, **POSITIVE)),
        S(T((3,), i64, 1, 5)),
    ], np.log, float_result),
    "to_copy": OpSpec([
        S(T((3,)), dtype=minitorch.float64),
        S(T((2, 3), f64), dtype=minitorch.float32),
        S(T((3,), i32, -3, 3), dtype=minitorch.float32),
        S(T((2,)), dtype=minitorch.int64),
        S(T(())),
    ], _to_copy, _to_copy_dtype, grad=False),  # its derivative: tests/minitorch/test_device.py
}

