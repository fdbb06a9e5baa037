"""`Interpreter`: run a GraphModule node by node, one overridable method per opcode.

This is the definition of what a graph means; the generated code must agree with it.

    class CountCalls(Interpreter):
        def call_function(self, target, args, kwargs):
            self.count += 1
            return super().call_function(target, args, kwargs)
"""

from __future__ import annotations

from typing import Any

from minitorch.errors import ArgumentTypeError
from tracer.fx.node import Node, map_arg

_MISSING = object()  # run() was given fewer inputs than the graph has placeholders


class Interpreter:
    """Executes `module.graph` with real values."""

    def __init__(self, module) -> None:
        self.module = module
        self.env: dict[Node, Any] = {}

    def run(self, *args) -> Any:
        self.env = {}
        self._args = iter(args)
        for node in self.module.graph.nodes:
            self.env[node] = self.run_node(node)
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, node: Node) -> Any:
        args = map_arg(node.args, self.env.__getitem__)
        kwargs = map_arg(node.kwargs, self.env.__getitem__)
        return getattr(self, node.op)(node.target, args, kwargs)  # dispatch by opcode name

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Any:
        """The next input of run(); past the last, the input's default value (args[0])."""
        value = next(self._args, _MISSING)
        if value is not _MISSING:
            return value
        if not args:  # as the generated forward would: a TypeError naming the input
            raise ArgumentTypeError(f"forward() missing a value for its input {target!r}")
        return args[0]

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Any:
        value = self.module
        for part in target.split("."):
            value = getattr(value, part)
        return value

    def call_function(self, target, args: tuple, kwargs: dict) -> Any:
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.get_attr(target, (), {})(*args, **kwargs)

    def output(self, target: str, args: tuple, kwargs: dict) -> Any:
        return args[0]
