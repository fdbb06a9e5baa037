"""argmax and argmin in LLVM: two reductions, the extreme and then where it first is.

[Note: arg reductions in LLVM]
The direct loop keeps the best term so far and its position, and lets a term replace both when
it beats the best. Each step then waits for the last one's compare and select, and LLVM
cannot vectorize it: 50 ms for the argmax of each row of a (2048, 2048) float32, where numpy
takes 1. So we run two reductions that do vectorize:

    best = -inf                                   # argmin: min from inf; integers: extremes
    for r in terms: best = maximum(best, term)    # llvm.maximum: NaN wins, as amax
    position = INT64_MAX
    for r in terms:                               # the body runs again: it is mostly a load
        found = term == best or term is NaN       # (NaN only where best is NaN)
        position = smin(position, found ? r : INT64_MAX)

r counts the terms in the row-major order of the reduction loops. The first equal term has
the smallest r, so a tie gives the first position and a NaN the first NaN's: numpy's and
PyTorch's answers, and the interpreter's ([Note: the loop-IR ops]). -0.0 equals 0.0, as it
does for numpy's argmax. The kernel never puts an arg reduction inside a loop over outputs
([Note: reductions across outputs] in kernel.py), which keeps one accumulator per value.

The terms keep the input's dtype, which the kernel learns only by emitting the body: so the
slot for `best` is made when the body has run, and its starting value is stored in a block of
its own that runs before the loop, `argmax.init`, written into after the fact.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager

import numpy as np
from llvmlite import ir

from codegen.llvm.loops import I64, IndexValue, entry_alloca, i64
from codegen.llvm.ops import I8, LLVMOps, call_intrinsic, is_integer
from ir.indexing import Const, Expr
from ir.nodes import Reduction

ARG_REDUCTIONS = ("argmax", "argmin")

Loops = Callable[[], AbstractContextManager[tuple[Expr, ...]]]  # emits the loops, gives rindex


def emit_arg_reduction(
    handler: LLVMOps, name: str, data: Reduction, index: tuple[Expr, ...], loops: Loops
) -> ir.Value:
    """The int64 position of the first extreme term of `data` at `index`."""
    best = _extreme(handler, name, data, index, loops)
    builder = handler.builder
    position_slot = entry_alloca(builder, I64, f"{name}.position")
    none_yet = i64(np.iinfo(np.int64).max)
    builder.store(none_yet, position_slot)
    with handler.scope(), loops() as rindex:
        term = data.inner_fn(index, rindex)
        found = _found(builder, term, best)
        here = builder.select(
            found, _flat_position(handler, rindex, data.reduction_ranges), none_yet
        )
        first = call_intrinsic(builder, "llvm.smin", builder.load(position_slot, typ=I64), here)
        builder.store(first, position_slot)
    return builder.load(position_slot, name=name, typ=I64)


def _extreme(
    handler: LLVMOps, name: str, data: Reduction, index: tuple[Expr, ...], loops: Loops
) -> ir.Value:
    """The largest term (argmax) or the smallest (argmin), NaN if any is NaN."""
    builder = handler.builder
    init = block_of_its_own(builder, f"{name}.init")
    with handler.scope(), loops() as rindex:
        term = data.inner_fn(index, rindex)
        best_slot = entry_alloca(builder, term.type, f"{name}.best")
        with builder.goto_block(init):  # now that the terms' type is known
            builder.store(extreme_start(data.reduction_type, term.type), best_slot)
        best = builder.load(best_slot, typ=term.type)
        combine = handler.maximum if data.reduction_type == "argmax" else handler.minimum
        builder.store(combine(best, term), best_slot)
    return builder.load(best_slot, name=f"{name}.extreme", typ=term.type)


def block_of_its_own(builder: ir.IRBuilder, name: str) -> ir.Block:
    """A block that runs here, once, before what comes next; the builder moves past it."""
    block = builder.append_basic_block(name)
    builder.branch(block)
    builder.position_at_end(block)
    after = builder.append_basic_block(f"{name}.done")
    builder.branch(after)
    builder.position_at_end(after)
    return block


def extreme_start(reduction_type: str, type_: ir.Type) -> ir.Constant:
    """Where the extreme starts: the lowest value for argmax, the highest for argmin."""
    lowest = reduction_type == "argmax"
    if type_ == I8:
        return ir.Constant(I8, 0 if lowest else 1)
    if is_integer(type_):
        info = np.iinfo(np.int32 if type_.width == 32 else np.int64)
        return ir.Constant(type_, int(info.min if lowest else info.max))
    return ir.Constant(type_, -math.inf if lowest else math.inf)


def _found(builder: ir.IRBuilder, term: ir.Value, best: ir.Value) -> ir.Value:
    """An i1: whether `term` is the extreme `best` (a NaN is, when best is NaN)."""
    if term.type == I8 or is_integer(term.type):
        return builder.icmp_unsigned("==", term, best)
    equal = builder.fcmp_ordered("==", term, best)
    return builder.or_(equal, builder.fcmp_unordered("uno", term, term), name="found")


def _flat_position(
    handler: LLVMOps, rindex: tuple[Expr, ...], sizes: tuple[int | Expr, ...]
) -> ir.Value:
    """r0 * n1 * n2 + r1 * n2 + r2: the term's place in the row-major order of the loops."""
    flat: Expr = Const(0)
    for var, n in zip(rindex, sizes, strict=True):
        flat = flat * n + var
    value = flat.evaluate(handler.index_env)
    return value.value if isinstance(value, IndexValue) else i64(value)
