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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import minitorch.ops as table
from ir.indexing import Const, Expr
from ir.lowering import LOWERINGS, Index, TensorValue, operand
from ir.nodes import Reduction
from minitorch.dtype import DType
from minitorch.ops.meta import normalize_dims
from minitorch.ops.registry import TensorMeta


def _reduce(x: TensorValue, dims: tuple[int, ...], keepdim: bool, reduction_type: str,
            dtype: DType, term_dtype: DType) -> Reduction:
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


LOWERINGS.update({
    table.sum: _reduction("sum", "sum"),
    table.amax: _reduction("amax", "max"),
    table.amin: _reduction("amin", "min"),
    table.argmax: _reduction("argmax", "argmax"),
    table.argmin: _reduction("argmin", "argmin"),
})  # fmt: skip
