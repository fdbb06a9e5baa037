"""Samples of the matrix products."""

from __future__ import annotations

import numpy as np

from op_samples.common import OpSpec, S, T, b8, f64, i32, i64


def _triangle_samples() -> list:
    return [
        S(T((4, 4))),
        S(T((3, 5), f64), 1),
        S(T((5, 3)), -2),
        S(T((2, 3, 4))),  # a batch of matrices
        S(T((3, 3), i64, -3, 3)),
        S(T((3, 3), b8), -1),
        S(T((3, 4)), 10),  # past the corner: everything (tril) or nothing (triu)
        S(T((0, 2))),
    ]


def _np_norm(a, p=2, dim=None, keepdim=False):
    size = np.abs(a)
    if p == "fro":
        p = 2
    if p == np.inf:
        return np.amax(size, axis=dim, keepdims=keepdim)
    if p == -np.inf:
        return np.amin(size, axis=dim, keepdims=keepdim)
    if p == 0:
        return np.sum(a != 0, axis=dim, keepdims=keepdim).astype(a.dtype)
    return np.sum(size**p, axis=dim, keepdims=keepdim) ** (1.0 / p)


SPECS: dict[str, OpSpec] = {
    "mm": OpSpec(
        [
            S(T((2, 3)), T((3, 4))),
            S(T((1, 1), f64), T((1, 5), f64)),
            S(T((4, 2), f64), T((2, 1), f64)),
            S(T((0, 3)), T((3, 2))),  # no rows
            S(T((2, 0)), T((0, 3))),  # an empty contraction: zeros
            S(T((2, 3), i64, -3, 3), T((3, 2), i64, -3, 3)),
        ],
        np.matmul,
    ),
    "bmm": OpSpec(
        [
            S(T((2, 3, 4)), T((2, 4, 5))),
            S(T((1, 2, 2), f64), T((1, 2, 3), f64)),
            S(T((3, 1, 4)), T((3, 4, 1))),
            S(T((2, 2, 3), i32, -3, 3), T((2, 3, 2), i32, -3, 3)),
        ],
        np.matmul,
    ),
    "matmul": OpSpec(
        [
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
        ],
        np.matmul,
    ),
    "tril": OpSpec(_triangle_samples(), lambda a, diagonal=0: np.tril(a, diagonal)),
    "triu": OpSpec(_triangle_samples(), lambda a, diagonal=0: np.triu(a, diagonal)),
    "norm": OpSpec(
        [
            S(T((3, 4))),
            S(T((3, 4), f64), 2, (1,)),
            S(T((3, 4)), "fro", (0, 1), True),
            S(T((5,), low=0.5), 1),
            S(T((2, 3)), np.inf, (1,)),
            S(T((2, 3), f64), -np.inf),
            S(T((2, 3)), 3, (0,)),
            S(T((2, 3), f64, 0.5, 2.0), 0.5, (-1,), True),
        ],
        _np_norm,
    ),
}
