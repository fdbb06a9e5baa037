"""`make_fx`: trace a function at the dispatcher into a graph of op-table calls.

[Note: dispatch-level tracing]
Bytecode capture (tracer/dynamo) sees the user's Python: `minitorch.sin`, `x ** 2`. One level
down, every one of those becomes calls of the op table (`minitorch.ops.sin`, `ops.pow`), and
composites are already decomposed (dispatch.py). `ProxyMode` sits on the dispatcher's mode stack
and turns each call into a graph node; the values flowing through the user's code are fake
tensors (minitorch/fake.py), so tracing computes shapes, never data. Because autograd sits above
the mode, running the autograd engine under `ProxyMode` records the backward pass too: that is
the whole trick of AOT autograd (joint.py).

[Note: origins of traced nodes]
Each node the mode records says which node of the traced graph it came from ([Note:
provenance] in tracer/fx/provenance.py): a captured graph is run node by node
(`run_noting_origins`), so while `%sin` of the captured graph runs, every op it dispatches
(a composite decomposes into several) gets `meta["origins"] = ("sin",)` and sin's location.
While autograd runs a derivative formula under the mode (joint.py), the ops it records are
part of the gradient of one forward node: they get `meta["grad_of"]`, that node's name, and
its origins and location.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

from minitorch.dispatch import DispatchMode, current_mode
from minitorch.errors import CompileError
from minitorch.fake import fake_like, fake_result, is_fake
from minitorch.tensor import Tensor
from tracer.fx import Graph, GraphModule, Interpreter
from tracer.fx.node import Node, map_aggregate


class ProxyMode(DispatchMode):
    """Records every op into `graph`; each fake output remembers its node."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.node_of: dict[int, object] = {}  # id(fake tensor) -> its Node
        # id(fake tensor's array) -> its Node: `x.detach()` is a new tensor over x's array,
        # made without an op, and reads as x's node (without x's history)
        self.node_of_data: dict[int, object] = {}
        self._alive: list[Tensor] = []  # keeps traced tensors alive so ids stay unique
        self.constants: dict[str, Tensor] = {}  # real tensors met while tracing -> get_attr
        # see [Note: origins of traced nodes]
        self.origin: Node | None = None  # the node of the traced graph being run
        self.grad_of: Node | None = None  # the forward node whose derivative is being traced

    def track(self, tensor: Tensor, node) -> None:
        self.node_of[id(tensor)] = node
        self.node_of_data.setdefault(id(tensor._data), node)
        self._alive.append(tensor)
        node.meta["val"] = tensor

    def placeholder(self, name: str, tensor: Tensor) -> None:
        self.track(tensor, self.graph.placeholder(name))

    def to_node(self, value):
        if not isinstance(value, Tensor):
            return value
        node = self.node_of.get(id(value)) or self.node_of_data.get(id(value._data))
        if node is not None:
            return node
        if is_fake(value):
            raise CompileError("a fake tensor from outside this trace reached an op")
        # A real tensor created inside the function (a constant): read it as an attribute.
        name = f"_tensor_constant{len(self.constants)}"
        self.constants[name] = value
        node = self.graph.get_attr(name)
        self.note_origin(node)
        self.track(value, node)
        return node

    def note_origin(self, node: Node) -> None:
        """Where `node` came from: see [Note: origins of traced nodes]."""
        source = self.grad_of
        if source is not None:
            node.meta["grad_of"] = source.name
            node.meta["origins"] = source.meta.get("origins", ())
            node.meta["location"] = source.meta.get("location")
        elif self.origin is not None:
            node.meta["origins"] = (self.origin.name,)
            node.meta["location"] = self.origin.meta.get("location")
        else:
            node.meta["origins"], node.meta["location"] = (), None

    def run(self, op, args, kwargs, meta):
        node = self.graph.call_function(
            op, map_aggregate(args, self.to_node), map_aggregate(kwargs, self.to_node)
        )
        self.note_origin(node)
        out = fake_result(op, args, kwargs, meta)  # a view's fake has eager's strides
        if type(meta) is not tuple:
            self.track(out, node)
            return out
        # Several outputs: one getitem node per output, as torch.fx does for tuples.
        outs = out
        node.meta["val"] = outs
        for i, out in enumerate(outs):
            item = self.graph.call_function(operator.getitem, (node, i))
            item.meta.update(node.meta)  # the op's origins
            self.track(out, item)
        return outs

    def output(self, values) -> None:
        self.graph.output(map_aggregate(values, self.to_node))


class _NotingOrigins(Interpreter):
    """Runs a graph node by node, telling `mode` which node is running."""

    def __init__(self, module: GraphModule, mode: ProxyMode) -> None:
        super().__init__(module)
        self.mode = mode

    def run_node(self, node: Node):
        self.mode.origin = node
        try:
            return super().run_node(node)
        finally:
            self.mode.origin = None


def run_noting_origins(fn: Callable, args: Sequence) -> object:
    """`fn(*args)`; a GraphModule traced under ProxyMode runs node by node instead, so that
    the nodes it records know their origins ([Note: origins of traced nodes])."""
    mode = current_mode()
    if isinstance(fn, GraphModule) and isinstance(mode, ProxyMode):
        return _NotingOrigins(fn, mode).run(*args)
    return fn(*args)


def make_fx(fn: Callable, names: Sequence[str] | None = None) -> Callable[..., GraphModule]:
    """`make_fx(f)(*example_inputs)` -> a GraphModule of `minitorch.ops` calls.

    Inputs are replaced by fake tensors of the same shape, dtype and strides, so the example
    inputs' data is never read.
    """

    def trace(*example_inputs) -> GraphModule:
        graph = Graph()
        mode = ProxyMode(graph)
        fakes = [fake_like(x, requires_grad=False) for x in example_inputs]
        for i, fake in enumerate(fakes):
            mode.placeholder(names[i] if names else f"arg{i}_1", fake)
        with mode:
            out = fn(*fakes)
            mode.output(out)
        return GraphModule(mode.constants, graph)

    return trace
