"""Samples of the reductions."""

from __future__ import annotations

import numpy as np
from op_samples.common import OpSpec, S, T, f64, float_result, i32


def _sum_dtype(arrays: list, **kwargs) -> str:
    kind = arrays[0].dtype.name
    return kind if kind.startswith("float") else "int64"  # integer sums accumulate in int64


def _np_sum(a, dim=None, keepdim=False):
    if a.ndim == 0:
        return a.copy()  # PyTorch lets a 0-d tensor reduce over dim 0; numpy does not
    return np.sum(a, axis=dim, keepdims=keepdim)


def _np_mean(a, dim=None, keepdim=False):
    if a.ndim == 0:
        return a.copy()
    return np.mean(a, axis=dim, keepdims=keepdim)


SPECS: dict[str, OpSpec] = {
    "sum": OpSpec([
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
    ], _np_sum, _sum_dtype),
    "mean": OpSpec([
        S(T((2, 3))),
        S(T(())),
        S(T((2, 3), f64), dim=0),
        S(T((2, 3, 4)), dim=-2),
        S(T((2, 3, 4)), dim=(0, -1), keepdim=True),
        S(T((2, 3, 4), f64), dim=(1,)),
    ], _np_mean, float_result),
}
