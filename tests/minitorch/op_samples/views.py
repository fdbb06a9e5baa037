"""Samples of the view ops."""

from __future__ import annotations

import numpy as np
from op_samples.common import OpSpec, S, T, f64, i32, i64


def _np_expand(a, shape):
    lead = len(shape) - a.ndim
    return np.broadcast_to(a, [a.shape[i - lead] if n == -1 else n for i, n in enumerate(shape)])


SPECS: dict[str, OpSpec] = {
    "expand": OpSpec([
        S(T((3, 1)), (3, 4)),
        S(T((3, 1)), (2, -1, 4)),  # -1 keeps a size; a leading dim appears
        S(T(()), (2, 3)),
        S(T((1,), f64), (5,)),
        S(T((2, 3)), (2, 3)),
        S(T((1, 3), i64, -3, 3), (2, 3)),
    ], _np_expand),
    "reshape": OpSpec([
        S(T((2, 3, 4)), (-1, 4)),
        S(T((6,), f64), (2, -1)),
        S(T((2, 3)), (6,)),
        S(T((1,)), ()),
        S(T(()), (1, 1)),
        S(T((2, 3), i32, -3, 3), (3, 2)),
    ], np.reshape),
}
