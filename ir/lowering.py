"""Lowering: an fx graph of op-table calls becomes buffers of loop-level IR.

[Note: lowering]
Every fx node becomes a `TensorValue`: its shape, its dtype and a *loader*, a function from a
logical index (one Expr per dim) to the element there, computed through `ops`. A value is one of

- realized: it lives in a buffer (a graph input, or a ComputedBuffer we will fill), and its
  loader is `ops.load(name, layout.indexer()(index))`;
- inlined: it is a Pointwise nobody stored, and its loader *is* its inner_fn, so a consumer
  that loads it computes it on the spot, inside the consumer's own loop.

    sin(x) ** 2      ->  buf0: Pointwise  def inner_fn(index):
                                              tmp0 = ops.load('x', i0)
                                              tmp1 = ops.sin(tmp0)     # sin, inlined
                                              tmp2 = ops.pow(tmp1, 2)

Inlining is fusion at its cheapest (no memory traffic), but an inlined value is recomputed by
each consumer; [Note: inlining] in ir/inline.py says which values are realized into a
ComputedBuffer instead. Before lowering, a `max(dim)` whose indices nobody reads becomes an
amax ([Note: max values without indices] in ir/lower_reductions.py); while lowering, a buffer
whose text (kind, dtype, ranges, body) equals an earlier one's is that buffer: its body is a
pure function of what it loads, so equal text computes equal values, and the layer_norm
decomposition's two `mean(x)` become one sum.

Broadcasting moves no data: it is a loader that rewrites the index before calling the loader
of its input (a stretched dim's index becomes 0); so are the views (ir/lower_views.py). dtypes
come from each node's meta['val']; where an input's dtype differs from the result's, its loads
go through ops.to_dtype.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import minitorch.ops as table
from ir.indexing import Const, Expr
from ir.inline import body_cost, must_realize
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import ops
from minitorch.dtype import DType, result_type
from minitorch.errors import CompileError
from minitorch.ops.registry import OpDef, TensorMeta
from minitorch.tensor import Tensor

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


# The op table's rows that lower to loops (op.lowering == "lowered" in minitorch/ops), keyed by
# the row itself; views, reductions and indirect reads are in ir/lower_views.py,
# ir/lower_reductions.py and ir/lower_indirect.py. Every other primitive runs as
# an extern kernel (ir/segments.py).
LOWERINGS: dict[OpDef, Callable[..., Pointwise | Reduction]] = {
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


def extern_reason(node: Any) -> str | None:
    """None if `node` lowers to loops; else why it runs as an extern kernel instead.

    Asks the lowering itself, on the node's metadata: a lowering may answer `Extern` for one
    call of an op it otherwise lowers (`pow` with a tensor exponent)."""
    op = node.target
    if op not in LOWERINGS:
        return f"{op!r} has no lowering"
    values = [n.meta.get("val") for n in (node, *node.all_input_nodes)]
    if not all(isinstance(v, Tensor) for v in values):
        return f"{node.name} reads or makes a value that is not a tensor"
    inputs = {n: _buffer_value(n.name, _layout(n.meta["val"])) for n in node.all_input_nodes}
    args = [_substitute(a, inputs) for a in node.args]
    kwargs = {k: _substitute(v, inputs) for k, v in node.kwargs.items()}
    try:
        LOWERINGS[op](_meta(node), *args, **kwargs)
    except Extern as e:
        return str(e)
    return None


# ---- the driver ---------------------------------------------------------------------------


def lower_graph(graph: Any) -> LoweredProgram:
    """Lower an fx graph (placeholder / call_function / output nodes) to loop IR."""
    return _GraphLowering(graph).run()


# NOTE: each inlined op nests one more Python call inside its consumer's loader, so a chain of
# hundreds of single-use ops would overflow Python's stack. Realizing every 64th link costs
# nothing at run time: the scheduler fuses it back and keeps it in a register.
MAX_INLINE_DEPTH = 64

# A call as lowering reads it: (op, args, kwargs), the node's own or a rewrite's.
Call = tuple[OpDef, tuple, dict]


class _GraphLowering:
    """Walks the graph once, in order, turning each node into a TensorValue."""

    def __init__(self, graph: Any) -> None:
        self.nodes = list(graph.nodes)
        self.calls: dict[Any, Call] = {
            node: (node.target, tuple(node.args), dict(node.kwargs))
            for node in self.nodes
            if node.op == "call_function"
        }
        self.calls.update(
            lower_reductions.values_without_indices(self.nodes, _users(self.nodes, self.calls))
        )
        self.users = _users(self.nodes, self.calls)  # node -> its readers, once per use
        self.values: dict[Any, TensorValue] = {}  # fx node -> its lowered value
        self.inputs: list[InputBuffer] = []
        self.buffers: list[ComputedBuffer] = []
        self.by_text: dict[str, TensorValue] = {}  # a realized body's text -> its buffer
        self.outputs: tuple[str, ...] = ()

    def run(self) -> LoweredProgram:
        for node in self.nodes:
            if node.op not in ("placeholder", "get_attr", "call_function", "output"):
                raise CompileError(f"cannot lower {node.op} node {node.name}")
            getattr(self, node.op)(node)  # self.placeholder(node), self.call_function(node), ...
        return LoweredProgram(tuple(self.inputs), tuple(self.buffers), self.outputs)

    def placeholder(self, node: Any) -> None:
        layout = _layout(node.meta["val"])
        self.inputs.append(InputBuffer(node.name, layout))
        self.values[node] = _buffer_value(node.name, layout)

    def call_function(self, node: Any) -> None:
        if not self.users[node]:
            return  # dead code: nothing reads it
        target, args, kwargs = self.calls[node]
        name = getattr(target, "name", repr(target))
        if target not in LOWERINGS:
            raise CompileError(f"no lowering for op '{name}' (node {node.name})")
        if target in lower_indirect.INDIRECT_READS and args[0] in self.values:
            self._realize_checks(args[0])  # rule 4 of [Note: inlining]
        meta = _meta(node)
        args = [self._value(a) for a in args]
        kwargs = {k: self._value(v) for k, v in kwargs.items()}
        data = LOWERINGS[target](meta, *args, **kwargs)
        if data.ranges != tuple(meta.shape) or data.dtype is not meta.dtype:
            raise CompileError(
                f"lowering of {name} made {data.dtype.name}{data.ranges}, "
                f"but {node.name} is {meta.dtype.name}{tuple(meta.shape)}"
            )
        self.values[node] = self._inline_or_realize(node, target, data, (args, kwargs))

    def _inline_or_realize(
        self, node: Any, target: OpDef, data: Pointwise | Reduction, args: Any
    ) -> TensorValue:
        """The rules of [Note: inlining]. The body is run to price it only when it could be
        costly: when it has several readers, or inlines a value with several."""
        readers = len(self.users[node])
        operands = _tensor_values(args)
        depth = 1 + max((a.depth for a in operands), default=0)
        is_output = any(u.op == "output" for u in self.users[node])
        if isinstance(data, Reduction):
            return self._realize(data, None if is_output else str(data))
        if depth > MAX_INLINE_DEPTH or is_output:
            return self._realize(data, None)
        # a view of a buffer is one load: re-reading it costs what reading a copy would
        single_load = target.kind == "view" and all(v.single_load for v in operands)
        shared = readers > 1 or any(v.shared for v in operands if v.buffer is None)
        checks_index = target in lower_indirect.INDIRECT_READS or any(
            v.checks_index for v in operands if v.buffer is None
        )
        if not single_load and shared:
            cost = body_cost(data.inner_fn, len(data.ranges))
            if must_realize(cost, readers):
                return self._realize(
                    data, f"Pointwise {data.dtype.name} {data.ranges}\n{cost.text}"
                )
        return TensorValue(
            data.ranges, data.dtype, data.inner_fn, None, depth, single_load, checks_index, shared
        )

    def get_attr(self, node: Any) -> None:
        raise CompileError(f"constant tensor {node.target} in the graph: pass it as an input")

    def output(self, node: Any) -> None:
        results = node.args[0] if isinstance(node.args[0], (tuple, list)) else (node.args[0],)
        for result in results:
            if result not in self.values or self.values[result].buffer is None:
                raise CompileError(f"graph output {result!r} is not a lowered tensor")
        self.outputs = tuple(self.values[result].buffer for result in results)

    def _realize(self, data: Pointwise | Reduction, text: str | None) -> TensorValue:
        """Give `data` a buffer, or the earlier buffer with the same `text` (None: a buffer of
        its own, as each graph output needs); consumers load from it from now on."""
        if text in self.by_text:
            return self.by_text[text]
        buffer = ComputedBuffer(
            f"buf{len(self.buffers)}", Layout.contiguous(data.ranges, data.dtype), data
        )
        self.buffers.append(buffer)
        value = _buffer_value(buffer.name, buffer.layout)
        if text is not None:
            self.by_text[text] = value
        return value

    def _realize_checks(self, node: Any) -> None:
        """Realize `node`'s value if it is inlined and checks an index, so that every element
        of it is computed (and checked), not only those a data-chosen index reads."""
        value = self.values[node]
        if value.buffer is None and value.checks_index:
            data = Pointwise(value.dtype, value.shape, value.loader)
            self.values[node] = self._realize(data, str(data))

    def _value(self, arg: Any) -> Any:
        """An argument as a lowering sees it: nodes as TensorValues, other values unchanged."""
        return _substitute(arg, self.values)


def _buffer_value(name: str, layout: Layout) -> TensorValue:
    """A realized value: loading index (i0, i1, ...) reads the buffer at its layout's offset."""
    indexer = layout.indexer()

    def load(index: Index) -> Any:
        return ops.load(name, indexer(index))

    return TensorValue(layout.size, layout.dtype, load, name)


def _tensor_values(arg: Any) -> list[TensorValue]:
    """The TensorValues inside nested args (tuples, lists, dicts)."""
    if isinstance(arg, TensorValue):
        return [arg]
    if isinstance(arg, (tuple, list)):
        return [v for a in arg for v in _tensor_values(a)]
    if isinstance(arg, dict):
        return _tensor_values(list(arg.values()))
    return []


def _meta(node: Any) -> TensorMeta:
    """A node's result as lowerings see it: a plain tuple of ints and a dtype."""
    val = node.meta["val"]
    return TensorMeta(tuple(int(n) for n in val.shape), val.dtype)


def _layout(val: Any) -> Layout:
    """The layout of an input buffer holding `val` (a real or fake tensor)."""
    return Layout(tuple(int(n) for n in val.shape), _strides(val), val.dtype)


def _substitute(arg: Any, values: dict[Any, TensorValue]) -> Any:
    """`arg` with the nodes in `values` replaced by their TensorValues (inside lists too)."""
    if isinstance(arg, (tuple, list)):
        return type(arg)(_substitute(a, values) for a in arg)
    try:
        return values.get(arg, arg)
    except TypeError:  # unhashable, so not a node: a slice on Python 3.11
        return arg


def _users(nodes: list[Any], calls: dict[Any, Call]) -> dict[Any, list[Any]]:
    """For each node, the live nodes whose args or kwargs (as `calls` has them) mention it,
    once per mention. A node is live if the output reads it, or a live node does.

    `mul(x, x)` uses x twice: inlining x there would compute it twice, and a chain of such
    squarings would compute the first link 2**n times. A dead reader is no reader: max(dim)'s
    indices, reshaped for nobody, must not keep the argmax alive.
    """
    users: dict[Any, list[Any]] = {node: [] for node in nodes}
    live = {node for node in nodes if node.op == "output"}

    def visit(arg: Any, user: Any) -> None:
        if isinstance(arg, (tuple, list)):
            for a in arg:
                visit(a, user)
        elif isinstance(arg, dict):
            for a in arg.values():
                visit(a, user)
        elif arg in users:
            users[arg].append(user)

    for node in reversed(nodes):  # every reader of a node comes after it
        if node in live or users[node]:
            live.add(node)
            _, args, kwargs = calls.get(node, (None, node.args, node.kwargs))
            visit((args, kwargs), node)
    return users


def _strides(meta: Any) -> tuple[int, ...]:
    """An input's strides in elements (row-major when the meta does not say)."""
    stride = getattr(meta, "stride", None)
    if callable(stride):  # torch-style meta: stride() is a method
        stride = stride()
    if stride is None:
        return Layout.contiguous(meta.shape, meta.dtype).stride
    return tuple(stride)


# More lowerings, in modules of their own, add themselves to LOWERINGS: imported last, as
# they build on what this module defines.
from ir import lower_indirect, lower_reductions, lower_views  # noqa: E402, F401
