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

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ir import lower_indirect, lower_reductions
from ir.inline import body_cost, must_realize
from ir.lower_indirect import INDIRECT
from ir.lower_pointwise import (  # noqa: F401 - the table's vocabulary, read from here too
    POINTWISE,
    Extern,
    Index,
    Loader,
    TensorValue,
    broadcast,
    operand,
)
from ir.lower_reductions import REDUCTIONS
from ir.lower_views import VIEWS
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import ops
from minitorch.errors import CompileError
from minitorch.ops.registry import OpDef, TensorMeta
from minitorch.tensor import Tensor
from tracer.fx.provenance import locations_of, unique

# The op table's rows that lower to loops (op.lowering == "lowered" in minitorch/ops), keyed by
# the row itself: pointwise ops (ir/lower_pointwise.py), views (ir/lower_views.py), reductions
# (ir/lower_reductions.py) and indirect reads (ir/lower_indirect.py). Every other primitive
# runs as an extern kernel (ir/segments.py).
LOWERINGS: dict[OpDef, Callable[..., Pointwise | Reduction]] = {
    **POINTWISE,
    **VIEWS,
    **REDUCTIONS,
    **INDIRECT,
}


def register_lowering(op: OpDef, lower: Callable[..., Pointwise | Reduction]) -> None:
    """Add the lowering of `op`, a row marked lowering="lowered" that a plugin added ([Note:
    adding an op from a plugin] in minitorch/ops/registry.py): `lower(out, *args, **kwargs)`
    takes the result's TensorMeta and the node's arguments (TensorValues for tensors) and
    returns a Pointwise or a Reduction.

        def lower_softplus(out, x, beta=1.0, threshold=20.0):
            load = operand(x, out.shape, out.dtype)
            return Pointwise(out.dtype, out.shape, lambda index: ... ops.log1p(...) ...)

        register_lowering(minitorch.ops.softplus, lower_softplus)
    """
    if op.lowering != "lowered":
        raise ValueError(f"{op.name}: only a row marked lowering='lowered' has a lowering")
    if op in LOWERINGS:
        raise ValueError(f"{op.name} has a lowering already")
    LOWERINGS[op] = lower
    ADDED[op.name] = lower


# The lowerings plugins added, by op name: the compiled-graph cache keys on their sources
# (minitorch/compile/graph_cache.py, `hook_identities`), as it does on the tree's own.
ADDED: dict[str, Callable] = {}


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
        # [Note: provenance]: an inlined value's node, and the nodes its loader inlines
        self.inlined: dict[Any, tuple[str, ...]] = {}
        self.by_name = {node.name: node for node in self.nodes}

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
        # the nodes this value computes: its own, and those inlined into its operands
        origins = unique([*_inlined_origins((args, kwargs), self.inlined), node.name])
        args = [self._value(a) for a in args]
        kwargs = {k: self._value(v) for k, v in kwargs.items()}
        data = LOWERINGS[target](meta, *args, **kwargs)
        if data.ranges != tuple(meta.shape) or data.dtype is not meta.dtype:
            raise CompileError(
                f"lowering of {name} made {data.dtype.name}{data.ranges}, "
                f"but {node.name} is {meta.dtype.name}{tuple(meta.shape)}"
            )
        value = self._inline_or_realize(node, target, data, (args, kwargs), origins)
        if value.buffer is None:
            self.inlined[node] = origins
        self.values[node] = value

    def _inline_or_realize(
        self, node: Any, target: OpDef, data: Pointwise | Reduction, args: Any, origins: tuple
    ) -> TensorValue:
        """The rules of [Note: inlining]. The body is run to price it only when it could be
        costly: when it has several readers, or inlines a value with several."""
        readers = len(self.users[node])
        operands = _tensor_values(args)
        depth = 1 + max((a.depth for a in operands), default=0)
        is_output = any(u.op == "output" for u in self.users[node])
        if isinstance(data, Reduction):
            return self._realize(data, None if is_output else str(data), origins)
        if depth > MAX_INLINE_DEPTH or is_output:
            return self._realize(data, None, origins)
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
                    data, f"Pointwise {data.dtype.name} {data.ranges}\n{cost.text}", origins
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

    def _realize(
        self, data: Pointwise | Reduction, text: str | None, origins: tuple[str, ...]
    ) -> TensorValue:
        """Give `data` a buffer, or the earlier buffer with the same `text` (None: a buffer of
        its own, as each graph output needs); consumers load from it from now on. The buffer
        computes the nodes `origins` ([Note: provenance])."""
        if text in self.by_text:
            value = self.by_text[text]
            self._add_origins(int(value.buffer[3:]), origins)  # it computes these too
            return value
        buffer = ComputedBuffer(
            f"buf{len(self.buffers)}",
            Layout.contiguous(data.ranges, data.dtype),
            data,
            origins,
            locations_of(self.by_name[name] for name in origins),
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
            self.values[node] = self._realize(data, str(data), self.inlined.pop(node))

    def _add_origins(self, k: int, origins: tuple[str, ...]) -> None:
        """buf<k> computes the nodes `origins` too (an equal body, merged)."""
        buffer = self.buffers[k]
        merged = unique([*buffer.origins, *origins])
        locations = locations_of(self.by_name[name] for name in merged)
        self.buffers[k] = replace(buffer, origins=merged, locations=locations)

    def _value(self, arg: Any) -> Any:
        """An argument as a lowering sees it: nodes as TensorValues, other values unchanged."""
        return _substitute(arg, self.values)


def _buffer_value(name: str, layout: Layout) -> TensorValue:
    """A realized value: loading index (i0, i1, ...) reads the buffer at its layout's offset."""
    indexer = layout.indexer()

    def load(index: Index) -> Any:
        return ops.load(name, indexer(index))

    return TensorValue(layout.size, layout.dtype, load, name)


def _inlined_origins(arg: Any, inlined: dict[Any, tuple[str, ...]]) -> list[str]:
    """The origins of the inlined values among the nodes inside nested args."""
    if isinstance(arg, (tuple, list)):
        return [name for a in arg for name in _inlined_origins(a, inlined)]
    if isinstance(arg, dict):
        return _inlined_origins(list(arg.values()), inlined)
    try:
        return list(inlined.get(arg, ()))
    except TypeError:  # unhashable, so not a node: a slice on Python 3.11
        return []


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
