"""Samples of the factories: tensors made from a shape and numbers (no tensor argument).

The random ops are sampled where their values are pinned: uniform on [2, 2] is all 2s, a normal
of spread 0 is its mean, randint on [3, 4) is all 3s. Their randomness (that draws follow
`manual_seed`, compiled as eagerly) is tested in tests/minitorch/test_factories.py and
tests/tracer/dynamo/test_capture_factories.py.
"""

from __future__ import annotations

import numpy as np

import minitorch
from op_samples.common import OpSpec, S


def _named_dtype(arrays, dtype, **kwargs) -> str:
    return dtype.name


def _np_full(size, fill_value, dtype):
    return np.full(size, fill_value, dtype.np)


def _np_arange(start, end, step, dtype):
    return np.arange(start, end, step).astype(dtype.np)


def _np_pinned(size, low, high, dtype):
    """uniform(low, low) and normal(mean, 0): every element is `low`; randint [low, low + 1)."""
    return np.full(size, low, dtype.np)


f32, f64, i64, i32, b8 = (
    minitorch.float32,
    minitorch.float64,
    minitorch.int64,
    minitorch.int32,
    minitorch.bool,
)

SPECS = {
    "full": OpSpec(
        [
            S((2, 3), 0, dtype=f32),
            S((4,), 1.5, dtype=f64),
            S((), 7, dtype=i64),
            S((2, 0), 1, dtype=i32),
            S((3,), True, dtype=b8),
        ],
        _np_full,
        _named_dtype,
        grad=False,
    ),
    "arange": OpSpec(
        [
            S(0, 5, 1, dtype=i64),
            S(0.0, 1.0, 0.25, dtype=f32),
            S(10, 0, -3, dtype=i32),
            S(1, 1, 1, dtype=f64),
        ],
        _np_arange,
        _named_dtype,
        grad=False,
    ),
    "uniform": OpSpec(
        [
            S((2, 3), 2.0, 2.0, dtype=f32),
            S((4,), -1.0, -1.0, dtype=f64),
        ],
        _np_pinned,
        _named_dtype,
        grad=False,
    ),
    "normal": OpSpec(
        [
            S((2, 3), 0.5, 0.0, dtype=f32),
            S((), -2.0, 0.0, dtype=f64),
        ],
        _np_pinned,
        _named_dtype,
        grad=False,
    ),
    "randint": OpSpec(
        [
            S((2, 3), 3, 4, dtype=i64),
            S((5,), -2, -1, dtype=i32),
        ],
        _np_pinned,
        _named_dtype,
        grad=False,
    ),
}
