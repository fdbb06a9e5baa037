"""How each reduction starts and how one term joins it, per dtype: one table for both targets.

    start, combine = reduction(data)        # data: a loop-IR Reduction
    acc = start; acc = combine(builder, acc, term) for each term

The LLVM kernel (kernel.py) and the CUDA one (codegen/cuda/kernel.py) accumulate with these;
argmax and argmin, which carry an index too, are arg_reduction.py's.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from llvmlite import ir

from codegen.llvm.ops import call_intrinsic, freeze, ir_type, is_integer
from ir.nodes import Reduction
from minitorch.dtype import DType
from minitorch.errors import CompileError

# reduction_type -> (the accumulator's start value, how one term joins it)
_REDUCTIONS = {
    # NOTE: `reassoc` lets LLVM reorder the sum into vector partial sums; numpy also sums in
    # its own (pairwise) order, so neither order is "the" answer.
    "sum": (0.0, lambda b, acc, x: b.fadd(acc, x, flags=("reassoc",))),
    # llvm.maximum/minimum propagate NaN like numpy's max/min, and vectorize; the `freeze` is
    # [Note: a masked max that vectorizes].
    "max": (-math.inf, lambda b, acc, x: call_intrinsic(b, "llvm.maximum", acc, freeze(b, x))),
    "min": (math.inf, lambda b, acc, x: call_intrinsic(b, "llvm.minimum", acc, freeze(b, x))),
}

# [Note: a masked max that vectorizes]
# A causal softmax reduces max(acc, where(mask, -inf, x)). -inf is maximum's identity, so
# LLVM's instruction combiner rewrites that as where(mask, acc, max(acc, x)): a select of the
# accumulator itself, which the loop vectorizer does not recognise as a reduction, so the loop
# stayed scalar (a masked softmax over (64, 256, 256): 12 ms for its max alone, 4x the whole
# unmasked softmax). `freeze x` is x itself (it only pins down poison, which we never make), but
# the combiner does not look through it, and the vectorizer widens it like any instruction.
# The same for bools (bytes 0 and 1): max is `any`, min is `all`.
_BOOL_REDUCTIONS = {
    "max": (0, lambda b, acc, x: b.or_(acc, x)),
    "min": (1, lambda b, acc, x: b.and_(acc, x)),
}


def _integer_reductions(dtype: DType) -> dict[str, tuple[int, Callable]]:
    """The same for int32 and int64: integer addition is associative (it wraps around), so
    LLVM reorders it without a flag; max and min start from the dtype's extremes."""
    info = np.iinfo(dtype.np)
    return {
        "sum": (0, lambda b, acc, x: b.add(acc, x)),
        "max": (int(info.min), lambda b, acc, x: call_intrinsic(b, "llvm.smax", acc, x)),
        "min": (int(info.max), lambda b, acc, x: call_intrinsic(b, "llvm.smin", acc, x)),
    }


def reduction(data: Reduction) -> tuple[ir.Constant, Callable]:
    """(the accumulator's start value, combine(builder, acc, term)) for data.reduction_type."""
    if data.dtype.name == "bool":
        table = _BOOL_REDUCTIONS
    elif is_integer(ir_type(data.dtype)):
        table = _integer_reductions(data.dtype)
    else:
        table = _REDUCTIONS
    if data.reduction_type not in table:
        raise CompileError(
            f"the LLVM backend has no {data.reduction_type!r} reduction of {data.dtype.name}"
        )
    start_value, combine = table[data.reduction_type]
    return ir.Constant(ir_type(data.dtype), start_value), combine
