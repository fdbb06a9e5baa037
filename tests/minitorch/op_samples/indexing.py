"""Samples of the advanced indexing ops: index_tensor (x[i, j]) and index_put (its write).

Writes that do not accumulate take distinct positions when their src requires grad: where two
writes land on one element, PyTorch's gradient goes to both, while finite differences see only
the one that wins.
"""

from __future__ import annotations

import numpy as np

from op_samples.common import OpSpec, S, T, b8, f64, i32, i64


def _key(indices: tuple) -> tuple:
    return tuple(slice(None) if i is None else i for i in indices)


def _np_index_tensor(a, *indices):
    return a[_key(indices)]


def _np_index_put(base, src, *indices, accumulate=False):
    out = base.copy()
    if accumulate:
        np.add.at(out, _key(indices), src)
    else:
        out[_key(indices)] = src
    return out


SPECS: dict[str, OpSpec] = {
    "index_tensor": OpSpec(
        [
            S(T((4, 5)), T((3,), i64, -4, 3)),  # negative positions; repeated ones add gradients
            S(T((4, 5), f64), None, T((2, 2), i64, 0, 4)),  # a 2-d index of dim 1
            S(T((3, 4, 5)), T((2,), i64, 0, 2), None, T((2,), i64, 0, 4)),  # separated: B first
            S(T((3, 4, 5)), None, T((2, 1), i64, 0, 3), T((3,), i32, 0, 4)),  # broadcast; int32
            S(T((4,), i64, -5, 5), T((3,), i64, 0, 3)),
            S(T((3, 2), b8), T((2,), i64, 0, 2)),
            S(T((3,)), T((0,), i64, 0, 2)),  # empty
        ],
        _np_index_tensor,
    ),
    "index_put": OpSpec(
        [
            S(T((4, 5)), T((1, 5)), T((1,), i64, 0, 3)),
            S(T((4, 5)), 1.5, T((3,), i64, -4, 3)),  # a Python number, written at each position
            S(
                T((3, 4), f64),
                T((2, 3), f64),
                T((2, 3), i64, 0, 2),
                T((2, 3), i64, 0, 3),
                accumulate=True,
            ),  # repeated positions add up
            S(T((3, 4, 5)), T((1, 4)), T((1,), i64, 0, 2), None, T((1,), i64, 0, 4)),
            S(T((3, 4)), T((4,)), T((2,), i64, 0, 2), accumulate=True),  # src broadcasts
            S(T((3,), i64, -3, 3), T((2,), i64, -3, 3), T((2,), i64, 0, 2), accumulate=True),
            S(T((2, 3)), T((1,), f64), T((1,), i32, 0, 1)),  # float64 into float32
        ],
        _np_index_put,
    ),
}
