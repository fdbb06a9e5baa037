"""Samples of the view, indexing and joining ops."""

from __future__ import annotations

import numpy as np

from op_samples.common import OpSpec, S, T, b8, f64, i32, i64, torch_result_dtype


def _np_expand(a, shape):
    lead = len(shape) - a.ndim
    return np.broadcast_to(a, [a.shape[i - lead] if n == -1 else n for i, n in enumerate(shape)])


def _np_index_scatter(base, src, key):
    out = base.copy()
    out[key] = src
    return out


def _np_cat(*arrays, dim=0):
    joined = [a for a in arrays if a.shape != (0,)]  # PyTorch skips 1-d empty tensors
    return np.concatenate(joined, axis=dim) if joined else np.zeros((0,))


def _np_flatten(a, start_dim=0, end_dim=-1):
    if a.ndim == 0:
        return a.reshape(1)
    start, end = start_dim % a.ndim, end_dim % a.ndim
    return a.reshape(a.shape[:start] + (-1,) + a.shape[end + 1 :])


def _np_squeeze(a, dim=None):
    if dim is None or a.ndim == 0:
        return np.squeeze(a)
    dims = (dim,) if isinstance(dim, int) else dim
    return np.squeeze(a, axis=tuple(d % a.ndim for d in dims if a.shape[d] == 1))


def _np_transpose(a, dim0, dim1):
    return np.swapaxes(a, dim0, dim1) if a.ndim else a


def _np_split(a, split_size_or_sections, dim=0):
    size = a.shape[dim]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        sizes = [min(step, size - start) for start in range(0, size, step)] or [0]
    else:
        sizes = split_size_or_sections
    return tuple(np.split(a, np.cumsum(sizes)[:-1], axis=dim))


def _np_roll(a, shifts, dims=None):
    return np.roll(a, shifts, axis=dims)


def _promoted_all(arrays: list, **kwargs) -> str:
    """cat and stack: PyTorch's promotion over every input tensor."""
    return torch_result_dtype(*arrays)


SPECS: dict[str, OpSpec] = {
    "expand": OpSpec(
        [
            S(T((3, 1)), (3, 4)),
            S(T((3, 1)), (2, -1, 4)),  # -1 keeps a size; a leading dim appears
            S(T(()), (2, 3)),
            S(T((1,), f64), (5,)),
            S(T((2, 3)), (2, 3)),
            S(T((1, 3), i64, -3, 3), (2, 3)),
        ],
        _np_expand,
    ),
    "reshape": OpSpec(
        [
            S(T((2, 3, 4)), (-1, 4)),
            S(T((6,), f64), (2, -1)),
            S(T((2, 3)), (6,)),
            S(T((1,)), ()),
            S(T(()), (1, 1)),
            S(T((2, 3), i32, -3, 3), (3, 2)),
        ],
        np.reshape,
    ),
    "permute": OpSpec(
        [
            S(T((2, 3, 4)), (2, 0, 1)),
            S(T((2, 3)), (-1, 0)),  # negative dims
            S(T((2, 1, 3), f64), (1, 2, 0)),
            S(T(()), ()),
            S(T((3,), i64), (0,)),
            S(T((2, 3), b8), (1, 0)),
        ],
        np.transpose,
    ),
    "index": OpSpec(
        [
            S(T((4, 5)), (1, slice(None, None, 2))),
            S(T((4, 5)), -1),  # a negative int alone
            S(T((2, 3, 4), f64), (Ellipsis, None, slice(1, 3))),
            S(T((3,)), (None,)),
            S(T((4, 5), i64), (slice(1, -1), 0)),
            S(T((4,)), slice(3, 1)),  # empty
            S(T(()), (None, Ellipsis)),
            S(T((4, 6)), (slice(-10, 10, 4), slice(1, None, 3))),  # clamped bounds, steps
            S(T((2, 3), b8), (0,)),
        ],
        lambda a, key: a[key],
    ),
    "index_scatter": OpSpec(
        [
            S(T((4, 5)), T((2, 5)), (slice(1, 3),)),
            S(T((4, 5)), 1.5, (0,)),  # a Python number fills the region
            S(T((3, 4)), T((4,)), (slice(0, 3, 2),)),  # src broadcasts over the region
            S(T((3,), f64), T((), f64), ()),  # () is the whole tensor: fill_/copy_
            S(T((3, 4), i64), T((4,), i64), (1,)),
            S(T((2, 3)), T((1, 3), f64), (0,)),  # extra leading 1s; float64 into float32
            S(T((2, 3, 4)), T((3, 1)), (1, None, slice(0, 3, 1))),
        ],
        _np_index_scatter,
    ),
    "cat": OpSpec(
        [
            S(T((2, 3)), T((4, 3)), dim=0),
            S(T((2, 3)), T((2, 1), f64), T((2, 2)), dim=-1),  # promotes to float64
            S(T((3,), i32), T((2,), i64)),
            S(T((0,)), T((2, 3)), dim=1),  # a 1-d empty tensor is skipped
            S(T((2, 3), b8), T((1, 3), b8)),
            S(T((2, 2)), T((2, 2), i64), dim=1),  # float and int: float32
            S(T((1, 2, 3)), dim=2),
        ],
        _np_cat,
        dtype=_promoted_all,
    ),
    "view": OpSpec(
        [
            S(T((2, 3, 4)), (6, 4)),
            S(T((4,), f64), (2, 2)),
            S(T(()), (1,)),
            S(T((2, 3), i64), (-1,)),
        ],
        np.reshape,
    ),
    "flatten": OpSpec(
        [
            S(T((2, 3, 4))),
            S(T((2, 3, 4)), 1),
            S(T((2, 3, 4), f64), 0, 1),
            S(T((2, 3, 4)), -2, -1),
            S(T(())),
            S(T((2, 3), i32), 1, 1),
        ],
        _np_flatten,
    ),
    "squeeze": OpSpec(
        [
            S(T((1, 3, 1))),
            S(T((1, 3, 1)), 0),
            S(T((1, 3, 1), f64), -1),
            S(T((1, 3, 1)), (0, 2)),
            S(T((2, 3)), 0),  # not size 1: unchanged
            S(T(())),
            S(T((1, 1), i64)),
        ],
        _np_squeeze,
    ),
    "unsqueeze": OpSpec(
        [
            S(T((2, 3)), 0),
            S(T((2, 3)), -1),
            S(T((2, 3), f64), 1),
            S(T(()), 0),
            S(T((3,), b8), -2),
        ],
        lambda a, dim: np.expand_dims(a, dim),
    ),
    "transpose": OpSpec(
        [
            S(T((2, 3)), 0, 1),
            S(T((2, 3, 4), f64), -1, 0),
            S(T((2, 3, 4), i64), 1, 1),
            S(T(()), 0, -1),
            S(T((3,)), 0, 0),
        ],
        _np_transpose,
    ),
    "stack": OpSpec(
        [
            S(T((2, 3)), T((2, 3)), dim=0),
            S(T((2, 3)), T((2, 3), f64), dim=-1),
            S(T(()), T(()), T(())),
            S(T((2,), i64), T((2,), i32), dim=1),
        ],
        lambda *arrays, dim=0: np.stack(arrays, axis=dim),
        dtype=_promoted_all,
    ),
    "clone": OpSpec(
        [
            S(T((2, 3))),
            S(T((), f64)),
            S(T((3,), i64)),
            S(T((2,), b8)),
        ],
        lambda a: a.copy(),
    ),
    "split": OpSpec(
        [  # keywords: the expected dtypes see only those
            S(T((5, 3)), split_size_or_sections=2),  # pieces of 2, 2, 1
            S(T((4, 6), f64), split_size_or_sections=[1, 2, 3], dim=1),
            S(T((4,)), split_size_or_sections=4),
            S(T((2, 6)), split_size_or_sections=4, dim=-1),
            S(T((3, 2), i64), split_size_or_sections=[3, 0], dim=0),  # an empty piece
            S(T((0, 2)), split_size_or_sections=2),  # an empty dim: one empty piece
        ],
        _np_split,
        dtype=lambda arrays, **kwargs: tuple(
            arrays[0].dtype.name for _ in _np_split(arrays[0], **kwargs)
        ),
    ),
    "roll": OpSpec(
        [
            S(T((5,)), 2),
            S(T((3, 4), f64), (1, -1), (0, 1)),
            S(T((3, 4)), 5),  # no dims: over the flattened tensor
            S(T((2, 3)), -1, 1),
            S(T((4,), i64), 0),  # nothing moves: still a copy
            S(T((2, 3), b8), 7, 1),  # a shift past the size wraps
            S(T(()), 1),
        ],
        _np_roll,
    ),
}
