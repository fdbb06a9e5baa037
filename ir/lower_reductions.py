"""Lowerings of the reductions: sum, amax, amin, argmax and argmin, each one `Reduction`.

[Note: lowering reductions]
A reduction keeps some dims of x and folds the others. The kept dims are the Reduction's
`ranges` (size 1 where keepdim keeps a reduced dim), the folded ones its `reduction_ranges`,
and its body reads x at the index put back together from both:

    x.amax(dim=1) of a (3, 4) x     Reduction(float32, ranges=(3,), reduction_ranges=(4,),
                                              reduction_type='max')
                                    def inner_fn(index, rindex):
                                        i0 = index
                                        r0 = rindex
                                        tmp0 = ops.load('x', 4*i0 + r0)

sum accumulates in the result's dtype (an int32 or bool sum in int64, as PyTorch's: the loads
convert), amax and amin in x's own. argmax and argmin are *index-carrying* reductions: the
terms are x's values, in x's dtype, and the result is the int64 position of the first largest
(smallest) one in the row-major order of the reduced dims, a NaN beating every number, as
numpy's and PyTorch's argmax have it ([Note: the loop-IR ops]). With dim=None that position
counts through every dim, which is argmax of the flattened tensor.

[Note: max values without indices]
`x.max(dim)` returns (values, indices), and its decomposition computes the indices first,
then reads the values there: gather(x, dim, argmax(x, dim, keepdim=True)). When nothing reads
the indices (softmax's `x.max(dim=1, keepdim=True)[0]`), that is an index-carrying reduction
and an indirect load per element for what one `max` reduction gives, so lowering reads the
gather as amax(x, dim, keepdim=True) and the argmax is dead. The values are the same: the
largest term, NaN if any term is NaN (argmax picks the first NaN, and a NaN is a NaN), and
equal terms are equal values. The one difference is the sign of a zero: when -0.0 and 0.0 tie
for the largest, max(dim) returns the first and a max reduction either one, as torch.compile's
own rewrite does. min(dim) is the same with argmin and amin.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import minitorch.ops as table
from ir.indexing import Const, Expr
from ir.lower_pointwise import Index, TensorValue, operand
from ir.nodes import Reduction
from minitorch.dtype import DType
from minitorch.ops.meta import normalize_dims
from minitorch.ops.registry import TensorMeta


def _reduce(
    x: TensorValue,
    dims: tuple[int, ...],
    keepdim: bool,
    reduction_type: str,
    dtype: DType,
    term_dtype: DType,
) -> Reduction:
    """x folded over `dims` by `reduction_type`; its terms read x in `term_dtype`."""
    kept = [d for d in range(len(x.shape)) if d not in dims]
    load = operand(x, x.shape, term_dtype)

    def inner_fn(index: Index, rindex: Index) -> Any:
        kept_index = [index[d] for d in kept] if keepdim else index  # keepdim: skip the 1s
        x_index: list[Expr] = [Const(0)] * len(x.shape)
        for d, i in zip(kept, kept_index, strict=True):
            x_index[d] = i
        for d, r in zip(dims, rindex, strict=True):
            x_index[d] = r
        return load(tuple(x_index))

    if keepdim:
        ranges = tuple(1 if d in dims else n for d, n in enumerate(x.shape))
    else:
        ranges = tuple(x.shape[d] for d in kept)
    reduction_ranges = tuple(x.shape[d] for d in dims)
    return Reduction(dtype, ranges, reduction_ranges, reduction_type, inner_fn)


def _reduction(op: str, reduction_type: str) -> Callable[..., Reduction]:
    """The lowering of `op`: out[kept index] = the terms over the reduced dims, reduced. The
    terms are in the result's dtype, except an arg reduction's, which keep x's."""
    carries_index = reduction_type in ("argmax", "argmin")

    def lower(out: TensorMeta, x: TensorValue, dim: Any = None, keepdim: bool = False) -> Reduction:
        dims = normalize_dims(op, dim, len(x.shape))
        term_dtype = x.dtype if carries_index else out.dtype
        return _reduce(x, dims, keepdim, reduction_type, out.dtype, term_dtype)

    return lower


# argmax -> the reduction that gives the value at its index ([Note: max values without indices])
_VALUE_OF = {table.argmax: table.amax, table.argmin: table.amin}


def values_without_indices(nodes: Sequence[Any], users: dict[Any, list[Any]]) -> dict[Any, tuple]:
    """The calls to read differently: each gather(x, d, argmax(x, d, keepdim=True)) whose argmax
    nothing else reads, as (amax, (x,), {'dim': d, 'keepdim': True}), and a reshape of it that
    drops dim d as the same amax with keepdim=False."""
    calls = {}
    for node in nodes:
        if node.op != "call_function" or node.target not in _VALUE_OF:
            continue
        x, dim, keepdim = _bind(node, ("input", "dim", "keepdim"), (None, None, False))
        if dim is None or not keepdim or not _reduces_a_nonempty_dim(x, dim):
            continue
        readers = users[node]
        if not readers or not all(_gathers(reader, x, dim, node) for reader in readers):
            continue
        value_of = _VALUE_OF[node.target]
        for gather in readers:
            calls[gather] = (value_of, (x,), {"dim": dim, "keepdim": True})
            for reader in users[gather]:  # keepdim=False: the gather reshaped without the dim
                if _drops_dim(reader, gather, x, dim):
                    calls[reader] = (value_of, (x,), {"dim": dim, "keepdim": False})
    return calls


def _drops_dim(reader: Any, gather: Any, x: Any, dim: int) -> bool:
    """Is `reader` reshape(gather, x's shape without `dim`)?"""
    if reader.op != "call_function" or reader.target is not table.reshape:
        return False
    shape = list(x.meta["val"].shape)
    del shape[dim]
    return reader.args[0] is gather and tuple(reader.meta["val"].shape) == tuple(shape)


def _gathers(reader: Any, x: Any, dim: int, indices: Any) -> bool:
    """Is `reader` gather(x, dim, indices), with dim the same dim?"""
    if reader.op != "call_function" or reader.target is not table.gather:
        return False
    source, along, index = _bind(reader, ("input", "dim", "index"), (None, None, None))
    ndim = len(x.meta["val"].shape)
    return (
        source is x
        and index is indices
        and isinstance(along, int)
        and normalize_dims("gather", along, ndim) == normalize_dims("max", dim, ndim)
    )


def _reduces_a_nonempty_dim(x: Any, dim: Any) -> bool:
    """x is a node with at least one dim, and `dim` (one int) is not of size 0."""
    val = getattr(x, "meta", {}).get("val")
    shape = () if val is None else tuple(val.shape)
    if not shape or not isinstance(dim, int) or not -len(shape) <= dim < len(shape):
        return False
    return shape[dim] > 0


def _bind(node: Any, names: tuple[str, ...], defaults: tuple) -> tuple:
    """The node's arguments `names`, by position or by keyword, else their defaults."""
    return tuple(
        node.args[k] if k < len(node.args) else node.kwargs.get(name, default)
        for k, (name, default) in enumerate(zip(names, defaults, strict=True))
    )


REDUCTIONS = {
    table.sum: _reduction("sum", "sum"),
    table.amax: _reduction("amax", "max"),
    table.amin: _reduction("amin", "min"),
    table.argmax: _reduction("argmax", "argmax"),
    table.argmin: _reduction("argmin", "argmin"),
}  # fmt: skip
