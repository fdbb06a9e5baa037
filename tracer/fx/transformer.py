"""`Transformer`: an Interpreter that builds a new graph instead of computing values.

Each opcode method returns a Proxy into the new graph, so a subclass rewrites a graph by
overriding the method of the nodes it cares about, and returning any other value-in-the-graph
removes or replaces the node. Removing every Dropout (seed 001):

    class DropoutRemover(Transformer):
        def call_module(self, target, args, kwargs):
            if isinstance(self.submodules[target], nn.Dropout):
                return args[0]              # the dropout's input takes its place
            return super().call_module(target, args, kwargs)

    gm = DropoutRemover(symbolic_trace(model)).transform()
    print(gm.code)
    def forward(self, x):
        linear = self.linear(x);  x = None
        relu = linear.relu();  linear = None
        return relu
"""

from __future__ import annotations

from typing import Any

from minitorch.nn.module import Module
from minitorch.tensor import Tensor
from tracer.fx.graph import Graph
from tracer.fx.graph_module import GraphModule
from tracer.fx.interpreter import Interpreter
from tracer.fx.node import Node
from tracer.fx.proxy import Proxy
from tracer.fx.symbolic_trace import Tracer


class Transformer(Interpreter):
    """Re-run `module.graph` on Proxies; `transform()` returns the GraphModule they record."""

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.submodules: dict[str, Module] = dict(module.named_modules())
        # NOTE: a Tracer records into new_graph, so that a Proxy-returning override such as
        # `return args[0] * 2` lands in the new graph just as symbolic tracing would record it.
        self.tracer = _GraphTracer()
        self.tracer.graph = self.new_graph
        self.tracer.root = module
        self.tracer._tensor_paths = {
            id(t): name for name, t in [*module.named_parameters(), *module.named_buffers()]
        }
        self._old_node: Node | None = None  # the node being copied, for its name and meta

    def transform(self) -> GraphModule:
        """The rewritten module: same root (submodules, parameters), the new graph."""
        result = self.run()  # it stops at the output node, which _old_node is then
        output = self.tracer.create_node("output", "output", (self.tracer.create_arg(result),), {})
        if self._old_node is not None:  # an empty graph has no output node to copy from
            _carry_meta(self._old_node, output)
        class_name = getattr(self.module, "_class_name", type(self.module).__name__)
        return GraphModule(self.module, self.new_graph, class_name)

    def run_node(self, node: Node) -> Any:
        self._old_node = node
        known = len(self.new_graph._nodes)
        result = super().run_node(node)
        if isinstance(result, Proxy) and result.node in self.new_graph._nodes[known:]:
            _carry_meta(node, result.node)
        return result

    # ---- one method per opcode: each records into new_graph and returns a Proxy ------------

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        # keeps the input's name and its default value
        return self.tracer.create_proxy("placeholder", target, args, kwargs, name=target)

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        return self._record("get_attr", target, args, kwargs)

    def call_function(self, target, args: tuple, kwargs: dict) -> Proxy:
        return self._record("call_function", target, args, kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        return self._record("call_method", target, args, kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        return self._record("call_module", target, args, kwargs)

    def _record(self, op: str, target: Any, args: tuple, kwargs: dict) -> Proxy:
        old = self._old_node
        # An unchanged node keeps its name; a changed one is named after its new target.
        same = old is not None and old.op == op and old.target == target
        return self.tracer.create_proxy(op, target, args, kwargs, old.name if same else None)


class _GraphTracer(Tracer):
    """A Tracer that accepts any constant: the old graph already held it as an argument."""

    def _arg_leaf(self, a: Any) -> Any:
        if isinstance(a, (Proxy, Tensor)):
            return super()._arg_leaf(a)
        return a


def _carry_meta(old: Node, new: Node) -> None:
    """Give `new` the metadata of the node it came from; only the source line if it changed."""
    if old.op == new.op and old.target == new.target:
        new.meta.update(old.meta)
    elif "stack_trace" in old.meta:
        new.meta["stack_trace"] = old.meta["stack_trace"]
