"""Samples of the matrix products."""

from __future__ import annotations

import numpy as np

from op_samples.common import OpSpec, S, T, f64, i32, i64

SPECS: dict[str, OpSpec] = {
    "mm": OpSpec([
        S(T((2, 3)), T((3, 4))),
        S(T((1, 1), f64), T((1, 5), f64)),
        S(T((4, 2), f64), T((2, 1), f64)),
        S(T((0, 3)), T((3, 2))),  # no rows
        S(T((2, 0)), T((0, 3))),  # an empty contraction: zeros
        S(T((2, 3), i64, -3, 3), T((3, 2), i64, -3, 3)),
    ], np.matmul),
    "bmm": OpSpec([
        S(T((2, 3, 4)), T((2, 4, 5))),
        S(T((1, 2, 2), f64), T((1, 2, 3), f64)),
        S(T((3, 1, 4)), T((3, 4, 1))),
        S(T((2, 2, 3), i32, -3, 3), T((2, 3, 2), i32, -3, 3)),
    ], np.matmul),
    "matmul": OpSpec([
        S(T((3,)), T((3,))),  # a dot product: 0-d
        S(T((2, 3)), T((3,))),  # matrix @ vector
        S(T((3,), f64), T((3, 4), f64)),  # vector @ matrix
        S(T((2, 3)), T((3, 4))),
        S(T((2, 5, 3)), T((3, 4))),  # a batch of matrices @ one matrix: folded into one mm
        S(T((2, 3), f64), T((4, 3, 5), f64)),  # one matrix @ a batch
        S(T((2, 1, 3, 4)), T((5, 4, 2))),  # batch dims broadcast: (2, 5)
        S(T((3,)), T((2, 3, 4))),  # vector @ batch
        S(T((2, 4, 3), f64), T((3,), f64)),  # batch @ vector
        S(T((2, 3, 4)), T((2, 4, 2))),
        S(T((2, 3), i64, -3, 3), T((3,), i64, -3, 3)),
    ], np.matmul),
}
