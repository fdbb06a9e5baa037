"""The lowering table's shared vocabulary and its pointwise rows: what ir/lowering.py (the
driver) and the other rows (ir/lower_views.py, lower_reductions.py, lower_indirect.py) build on.

A `TensorValue` is what lowering knows of one fx node's result: its shape, its dtype, and its
*loader*, a function from a logical index to the element there, computed through `ops`
([Note: lowering] in ir/lowering.py). A lowering takes the result's meta and its operands'
TensorValues and returns a Pointwise or a Reduction; `operand` and `broadcast` are how it reads
an operand at its own index. A lowering that cannot turn one call into loops raises `Extern`:
the op's eager kernel runs instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import minitorch.ops as table
from ir.indexing import Const, Expr
from ir.nodes import Pointwise, Reduction
from ir.ops_handler import ops
from minitorch.dtype import DType, result_type
from minitorch.errors import CompileError
from minitorch.ops.registry import OpDef, TensorMeta

Index = Sequence[Expr]
Loader = Callable[[Index], Any]


@dataclass(frozen=True)
class TensorValue:
    """What lowering knows about one fx node's result."""

    shape: tuple[int, ...]  # logical shape, from meta['val']
    dtype: DType  # from meta['val']
    loader: Loader  # logical index -> the element there, through `ops`
    buffer: str | None = None  # the buffer holding it; None while it is inlined
    depth: int = 0  # how many inlined ops its loader nests (0 for a buffer)
    single_load: bool = True  # its loader is one load of a buffer (a buffer, or a view of one)
    checks_index: bool = False  # its inlined loader checks an index ([Note: inlining], rule 4)
    shared: bool = False  # it, or a value its loader inlines, has several readers (rule 2)


# ---- loaders: how a consumer reads an operand --------------------------------------------


def operand(x: TensorValue | float | int, shape: tuple[int, ...], dtype: DType) -> Loader:
    """A loader for `x` at each index of `shape`, in `dtype`: broadcast, converted or constant."""
    if not isinstance(x, TensorValue):
        return lambda index: ops.constant(x, dtype)
    load = broadcast(x, shape)
    if x.dtype is dtype:
        return load
    return lambda index: ops.to_dtype(load(index), dtype)


def broadcast(x: TensorValue, shape: tuple[int, ...]) -> Loader:
    """x's loader seen from the index of a broadcast `shape`.

    (3,) broadcast to (2, 3): index (i0, i1) -> (i1,)     leading dims dropped
    (2, 1) broadcast to (2, 3): index (i0, i1) -> (i0, 0)   stretched dims read element 0
    """
    lead = len(shape) - len(x.shape)
    if lead < 0 or any(n not in (1, shape[lead + k]) for k, n in enumerate(x.shape)):
        raise CompileError(f"cannot broadcast shape {x.shape} to {shape}")
    if x.shape == shape:
        return x.loader

    def load(index: Index) -> Any:
        own = tuple(Const(0) if n == 1 else index[lead + k] for k, n in enumerate(x.shape))
        return x.loader(own)

    return load


# ---- the lowering table: op name -> (result meta, *args, **kwargs) -> Pointwise | Reduction


def _unary(op: Callable[[Any], Any]) -> Callable[..., Pointwise]:
    """The lowering of an elementwise op of one tensor: out[i] = op(x[i])."""

    def lower(out: TensorMeta, x: TensorValue) -> Pointwise:
        load = operand(x, out.shape, out.dtype)
        return Pointwise(out.dtype, out.shape, lambda index: op(load(index)))

    return lower


def _binary(op: Callable[[Any, Any], Any]) -> Callable[..., Pointwise]:
    """The lowering of an elementwise op of two operands (tensors or numbers), broadcasting."""

    def lower(out: TensorMeta, a: TensorValue | float, b: TensorValue | float) -> Pointwise:
        load_a = operand(a, out.shape, out.dtype)
        load_b = operand(b, out.shape, out.dtype)
        return Pointwise(out.dtype, out.shape, lambda index: op(load_a(index), load_b(index)))

    return lower


def _compare(op: Callable[[Any, Any], Any]) -> Callable[..., Pointwise]:
    """The lowering of a comparison: both operands in their promoted dtype, a bool result.

    int64 < 0.5 compares in float32, as eager does; converting to the result's dtype (bool), as
    `_binary` does, would compare truth values.
    """

    def lower(out: TensorMeta, a: TensorValue | float, b: TensorValue | float) -> Pointwise:
        dtype = result_type(a, b)  # TensorValues have the .shape and .dtype it reads
        load_a = operand(a, out.shape, dtype)
        load_b = operand(b, out.shape, dtype)
        return Pointwise(out.dtype, out.shape, lambda index: op(load_a(index), load_b(index)))

    return lower


def _where(
    out: TensorMeta, condition: TensorValue, a: TensorValue | float, b: TensorValue | float
) -> Pointwise:
    load_condition = operand(condition, out.shape, condition.dtype)  # stays bool
    load_a = operand(a, out.shape, out.dtype)
    load_b = operand(b, out.shape, out.dtype)
    return Pointwise(
        out.dtype,
        out.shape,
        lambda index: ops.where(load_condition(index), load_a(index), load_b(index)),
    )


def _pow(out: TensorMeta, x: TensorValue | float, exponent: Any) -> Pointwise:
    """x ** c for a number c fixed at trace time (backends specialize it: x**2 is x*x), and
    c ** y = exp(y log c) for a positive number c and a float result."""
    number_base = isinstance(x, (int, float)) and x > 0 and out.dtype.is_floating_point
    if isinstance(exponent, TensorValue) and number_base:
        load_y = operand(exponent, out.shape, out.dtype)
        log_c = math.log(x)
        return Pointwise(
            out.dtype,
            out.shape,
            lambda index: ops.exp(ops.mul(load_y(index), ops.constant(log_c, out.dtype))),
        )
    if not isinstance(x, TensorValue) or isinstance(exponent, TensorValue):
        raise Extern("pow with a tensor exponent is not a loop of ours")
    load = operand(x, out.shape, out.dtype)
    return Pointwise(out.dtype, out.shape, lambda index: ops.pow(load(index), exponent))


def _to_copy(out: TensorMeta, x: TensorValue, dtype: Any = None, device: Any = None) -> Pointwise:
    """A dtype conversion; moving between devices is not a loop."""
    if device is not None:
        raise Extern(f"to_copy to device {device} moves memory; it is not a loop")
    return Pointwise(out.dtype, out.shape, operand(x, out.shape, out.dtype))


def _full(out: TensorMeta, size: Sequence[int], fill_value: float, *, dtype: DType) -> Pointwise:
    """zeros, ones, full: out[i] = fill_value, a constant (no buffer is read)."""
    return Pointwise(out.dtype, out.shape, lambda index: ops.constant(fill_value, out.dtype))


def _arange(out: TensorMeta, start: Any, end: Any, step: Any, *, dtype: DType) -> Pointwise:
    """arange over int64: out[i] = start + step*i, an index expression (no buffer is read).
    Over floats numpy rounds start + step*i its own way: that stays numpy's kernel."""
    if out.dtype.name != "int64" or not all(type(v) is int for v in (start, step)):
        raise Extern("arange of floats is numpy's rounding, not a loop of ours")
    return Pointwise(
        out.dtype, out.shape, lambda index: ops.index_expr(index[0] * step + start, out.dtype)
    )


# The pointwise rows of the lowering table (ir/lowering.py LOWERINGS), keyed by the op table's
# row itself.
POINTWISE: dict[OpDef, Callable[..., Pointwise | Reduction]] = {
    table.add: _binary(ops.add),
    table.sub: _binary(ops.sub),
    table.mul: _binary(ops.mul),
    table.div: _binary(ops.div),
    table.neg: _unary(ops.neg),
    table.sin: _unary(ops.sin),
    table.cos: _unary(ops.cos),
    table.exp: _unary(ops.exp),
    table.log: _unary(ops.log),
    table.abs: _unary(ops.abs),
    table.tanh: _unary(ops.tanh),
    table.sigmoid: _unary(ops.sigmoid),
    table.erf: _unary(ops.erf),
    table.log1p: _unary(ops.log1p),
    table.expm1: _unary(ops.expm1),
    table.maximum: _binary(ops.maximum),
    table.minimum: _binary(ops.minimum),
    table.eq: _compare(ops.eq),
    table.ne: _compare(ops.ne),
    table.lt: _compare(ops.lt),
    table.le: _compare(ops.le),
    table.where: _where,
    table.pow: _pow,
    table.to_copy: _to_copy,
    table.full: _full,
    table.arange: _arange,
}


class Extern(CompileError):
    """A lowering's answer for a call it cannot turn into loops: run the op's eager kernel."""
