"""Samples of fused_attention, the op only the compiler writes (minitorch/ops/attention.py)."""

from __future__ import annotations

import numpy as np

from op_samples.common import OpSpec, S, T, b8, f64


def _attention(q, k, v, hidden, scale, safe=False):
    att = (q @ np.swapaxes(k, -1, -2)) * q.dtype.type(scale)
    if hidden is not None:
        att = np.where(hidden, -np.inf, att)
    dead = (att == -np.inf).all(axis=-1, keepdims=True) & safe
    att = np.where(dead, 0, att).astype(q.dtype)
    with np.errstate(invalid="ignore"):
        e = np.exp(att - att.max(axis=-1, keepdims=True))
        return np.where(dead, 0, e / e.sum(axis=-1, keepdims=True)).astype(q.dtype) @ v


SPECS: dict[str, OpSpec] = {
    "fused_attention": OpSpec(
        [
            S(T((2, 3, 5, 4)), T((2, 3, 5, 4)), T((2, 3, 5, 4)), T((5, 5), b8), 0.5),
            S(T((1, 2, 9, 3), f64), T((1, 2, 9, 3), f64), T((1, 2, 9, 3), f64), None, 1.0),
            S(T((2, 1, 4, 2)), T((2, 1, 7, 2)), T((2, 1, 7, 6)), T((1, 1, 4, 7), b8), 0.25),
            S(T((3, 4, 2)), T((3, 6, 2)), T((3, 6, 2)), T((4, 6), b8), 2.0),
            S(T((2, 2, 6, 3)), T((2, 2, 6, 3)), T((2, 2, 6, 3)), T((6, 6), b8), 0.5, True),
        ],
        _attention,
        grad=False,  # no derivative: the pass leaves graphs that need one alone
    ),
}
