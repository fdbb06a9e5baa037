"""Lowerings of the views: expand, reshape and permute, which move no data.

[Note: lowering views]
A view is a loader that rewrites its reader's index before calling the loader of its input:

    expand (3, 1) -> (3, 4)      (i0, i1) -> (i0, 0)           a stretched dim reads element 0
    reshape (2, 3) -> (6,)       (i0,) -> (i0//3, i0 % 3)      the flat row-major position
    permute (2, 3), (1, 0)       (i0, i1) -> (i1, i0)          the indices in the input's order

So a view of a buffer is one load, and lowering never stores one ([Note: inlining]).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import minitorch.ops as table
from ir.indexing import Const, Expr
from ir.lower_pointwise import Index, Loader, TensorValue, operand
from ir.nodes import Pointwise
from minitorch.errors import CompileError
from minitorch.ops.registry import TensorMeta
from minitorch.ops.views_meta import normalize_permutation


def reshape(x: TensorValue, shape: tuple[int, ...]) -> Loader:
    """x's loader seen from the index of `shape`, the same elements in the same row-major order.

    (6,) -> (2, 3): (i0, i1) -> (3*i0 + i1,)        (2, 3) -> (6,): (i0,) -> (i0//3, i0 % 3)
    Dims are matched in groups of equal products, so a dim both shapes share keeps its index:
    (2, 3, 4) -> (6, 4): (i0, i1) -> (i0//3, i0 % 3, i1).
    """
    old = x.shape
    if math.prod(old) != math.prod(shape):
        raise CompileError(f"cannot reshape {old} to {shape}")
    if math.prod(old) == 0:
        return lambda index: x.loader(tuple(Const(0) for _ in old))  # never runs: no elements

    def load(index: Index) -> Any:
        old_index: list[Expr] = [Const(0)] * len(old)  # size-1 dims stay at 0
        for old_dims, new_dims in _reshape_groups(old, shape):
            flat: Expr = Const(0)  # row-major position inside the group
            for d in new_dims:
                flat = flat * shape[d] + index[d]
            for d in reversed(old_dims[1:]):
                old_index[d] = flat % old[d]
                flat = flat // old[d]
            old_index[old_dims[0]] = flat  # the outermost dim needs no % (flat < its size)
        return x.loader(tuple(old_index))

    return load


def _reshape_groups(old: Sequence[int], new: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Runs of dims with equal products, size-1 dims left out.

    (2, 3, 4) -> (6, 4): [([0, 1], [0]), ([2], [1])]   (2*3 == 6, 4 == 4)
    """
    old_dims = [d for d, n in enumerate(old) if n != 1]
    new_dims = [d for d, n in enumerate(new) if n != 1]
    groups = []
    while old_dims:
        group_old, group_new = [old_dims.pop(0)], [new_dims.pop(0)]
        old_size, new_size = old[group_old[0]], new[group_new[0]]
        while old_size != new_size:
            if old_size < new_size:
                group_old.append(old_dims.pop(0))
                old_size *= old[group_old[-1]]
            else:
                group_new.append(new_dims.pop(0))
                new_size *= new[group_new[-1]]
        groups.append((group_old, group_new))
    return groups


def _expand(out: TensorMeta, x: TensorValue, shape: Sequence[int]) -> Pointwise:
    return Pointwise(out.dtype, out.shape, operand(x, out.shape, out.dtype))


def _reshape(out: TensorMeta, x: TensorValue, shape: Sequence[int]) -> Pointwise:
    load = reshape(x, out.shape)
    if x.dtype is not out.dtype:
        raise CompileError(f"reshape changes dtype {x.dtype.name} -> {out.dtype.name}")
    return Pointwise(out.dtype, out.shape, load)


def _permute(out: TensorMeta, x: TensorValue, dims: Sequence[int]) -> Pointwise:
    """out[i0, i1, ...] = x[the same indices, put back in x's dim order]; moves no data.

    permute(x, (1, 0)) reads index (i0, i1) of the result as (i1, i0) of x.
    """
    order = normalize_permutation("permute", dims, len(x.shape))
    if x.dtype is not out.dtype:
        raise CompileError(f"permute changes dtype {x.dtype.name} -> {out.dtype.name}")

    def load(index: Index) -> Any:
        x_index: list[Expr] = [Const(0)] * len(order)
        for i, d in enumerate(order):
            x_index[d] = index[i]
        return x.loader(tuple(x_index))

    return Pointwise(out.dtype, out.shape, load)


VIEWS = {
    table.expand: _expand,
    table.reshape: _reshape,
    table.permute: _permute,
}  # fmt: skip
