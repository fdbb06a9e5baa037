"""Samples of minitorch/ops/extra.py (outer, diag, repeat, flip, std, any/all, cumsum, cumprod)
and minitorch/ops/logical.py (logical_*, bitwise_*, isnan, isinf, isfinite)."""

from __future__ import annotations

import numpy as np

from op_samples.common import OpSpec, S, T, b8, f64, i32, i64, promoted


def _bool_result(arrays: list, **kwargs) -> str:
    return "bool"


def _scan_dtype(arrays: list, **kwargs) -> str:
    kind = arrays[0].dtype.name
    return kind if kind.startswith("float") else "int64"  # bool and ints accumulate in int64


def _np_scan(scan):
    def run(a, dim):
        if a.ndim == 0:
            return a.astype(_scan_dtype([a]))
        return scan(a, axis=dim, dtype=_scan_dtype([a]))

    return run


def _np_reduce(reduce):
    def run(a, dim=None, keepdim=False, **kwargs):
        return np.asarray(reduce(a, axis=dim, keepdims=keepdim, **kwargs))

    return run


def _np_std(a, dim=None, correction=1, keepdim=False):
    return np.asarray(np.std(a, axis=dim, ddof=correction, keepdims=keepdim), dtype=a.dtype)


def _np_repeat_interleave(a, repeats, dim=None):
    return np.repeat(a, repeats, axis=dim)


SPECS: dict[str, OpSpec] = {
    "outer": OpSpec(
        [
            S(T((3,)), T((4,))),
            S(T((2,), f64), T((3,), f64)),
            S(T((2,), i64), T((3,))),  # promotes, as mul does
            S(T((0,)), T((2,))),
        ],
        np.outer,
        promoted,
    ),
    "diag": OpSpec(
        [
            S(T((3,))),
            S(T((3,), i64), 1),
            S(T((2,), f64), -2),
            S(T((3, 4))),
            S(T((3, 4)), 2),
            S(T((3, 4), f64), -1),
            S(T((2, 3)), 5),  # past the corner: an empty diagonal
        ],
        lambda a, diagonal=0: np.diag(a, diagonal),
    ),
    "diagonal": OpSpec(
        [
            S(T((3, 4))),
            S(T((2, 3, 4)), 1, 1, 2),
            S(T((3, 4, 2), f64), -1, 0, 1),
            S(T((4, 2, 3)), 0, -1, 0),  # dims in either order
        ],
        lambda a, offset=0, dim1=0, dim2=1: np.diagonal(a, offset, dim1, dim2).copy(),
    ),
    "repeat": OpSpec(
        [
            S(T((2, 3)), (2, 1)),
            S(T((3,)), (2, 2)),  # more repeats than dims: leading dims
            S(T((2, 1), f64), (1, 3)),
            S(T(()), (3,)),
            S(T((2, 2), b8), (1, 2)),
            S(T((2, 3)), (0, 1)),
        ],
        lambda a, repeats: np.tile(a, repeats),
    ),
    "repeat_interleave": OpSpec(
        [
            S(T((2, 3)), 2),  # no dim: over the flattened tensor
            S(T((2, 3)), 2, 1),
            S(T((2, 3), f64), 3, -2),
            S(T((4,), i64), 1, 0),
            S(T((2, 2)), 0, 0),
        ],
        _np_repeat_interleave,
    ),
    "flip": OpSpec(
        [
            S(T((4,)), (0,)),
            S(T((2, 3)), (0, 1)),
            S(T((2, 3, 4), f64), (-1,)),
            S(T((2, 3), i32), (1,)),
            S(T((2, 3)), ()),  # nothing to flip: a copy
        ],
        lambda a, dims: np.flip(a, dims).copy(),
    ),
    "std": OpSpec(
        [
            S(T((5,))),
            S(T((2, 3), f64), dim=1),
            S(T((2, 3, 4)), dim=(0, 2), keepdim=True),
            S(T((3, 4), f64), dim=0, correction=0),
        ],
        _np_std,
    ),
    "any": OpSpec(
        [
            S(T((2, 3), b8)),
            S(T((2, 3), i64, 0, 1), dim=1),
            S(T((2, 3)), dim=0, keepdim=True),
            S(T((0, 3), b8), dim=0),  # over nothing: False
            S(T((2, 3, 2), b8), dim=(0, 2)),
        ],
        _np_reduce(np.any),
        _bool_result,
        grad=False,
    ),
    "all": OpSpec(
        [
            S(T((2, 3), b8)),
            S(T((2, 3), i64, 0, 1), dim=1),
            S(T((2, 3)), dim=0, keepdim=True),
            S(T((0, 3), b8), dim=0),  # over nothing: True
        ],
        _np_reduce(np.all),
        _bool_result,
        grad=False,
    ),
    "cumsum": OpSpec(
        [
            S(T((5,)), 0),
            S(T((2, 3), f64), 1),
            S(T((2, 3, 4)), -2),
            S(T((2, 3), i32), 0),  # ints accumulate in int64
            S(T((4,), b8), 0),
            S(T(()), 0),
        ],
        _np_scan(np.cumsum),
        _scan_dtype,
    ),
    "cumprod": OpSpec(
        [
            S(T((5,)), 0),
            S(T((2, 3), f64), 1),
            S(T((2, 3, 4), f64, -1.5, 1.5), -2),
            S(T((2, 3), i64), 0),
            S(T(()), 0),
        ],
        _np_scan(np.cumprod),
        _scan_dtype,
    ),
}


def _logical(np_op):
    return OpSpec(
        [
            S(T((2, 3), b8), T((2, 3), b8)),
            S(T((2, 3), b8), T((3,), b8)),  # broadcast
            S(T((2, 3), i64, -1, 1), T((2, 3))),  # any dtype: nonzero is True
        ],
        np_op,
        _bool_result,
        grad=False,
    )


def _bitwise_dtype(arrays: list, **kwargs) -> str:
    """promoted, but a Python bool with a bool tensor stays bool (the helper counts it int)."""
    if all(isinstance(a, bool) or a.dtype == np.bool_ for a in arrays[:2]):
        return "bool"
    return promoted(arrays)


def _bitwise(np_op):
    return OpSpec(
        [
            S(T((2, 3), i64, -8, 8), T((2, 3), i64, -8, 8)),
            S(T((2, 3), i32, 0, 15), T((3,), i64, 0, 15)),  # promotes
            S(T((2, 3), b8), T((2, 3), b8)),
            S(T((4,), i32, -8, 8), 5),
            S(T((4,), b8), True),
        ],
        lambda a, b: np.asarray(np_op(a, b)).astype(_bitwise_dtype([a, b])),
        _bitwise_dtype,
        grad=False,
    )


SPECS |= {
    "logical_not": OpSpec(
        [
            S(T((2, 3), b8)),
            S(T((2, 3), i64, -1, 1)),
            S(T((3,))),
        ],
        np.logical_not,
        _bool_result,
        grad=False,
    ),
    "logical_and": _logical(np.logical_and),
    "logical_or": _logical(np.logical_or),
    "logical_xor": _logical(np.logical_xor),
    "bitwise_and": _bitwise(np.bitwise_and),
    "bitwise_or": _bitwise(np.bitwise_or),
    "bitwise_xor": _bitwise(np.bitwise_xor),
    "bitwise_not": OpSpec(
        [
            S(T((2, 3), i64, -8, 8)),
            S(T((3,), i32, -8, 8)),
            S(T((2, 2), b8)),
        ],
        np.invert,
        grad=False,
    ),
    "isnan": OpSpec([S(T((2, 3))), S(T((3,), i64))], np.isnan, _bool_result, grad=False),
    "isinf": OpSpec([S(T((2, 3), f64)), S(T((3,), i32))], np.isinf, _bool_result, grad=False),
    "isfinite": OpSpec([S(T((2, 3))), S(T((3,), b8))], np.isfinite, _bool_result, grad=False),
}
