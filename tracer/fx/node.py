"""`Node`: one instruction of an fx graph, and `map_arg` over the nested args that hold nodes.

There are six opcodes, as in torch.fx:

    placeholder    an input of the graph                 target: the input's name
    get_attr       read a parameter/buffer of the module target: its dotted path
    call_function  call a Python function                target: the function (operator.add)
    call_method    call a method on args[0]              target: the method name ('sum')
    call_module    call a submodule                      target: its dotted path ('linear')
    output         the graph's result                    args[0]: the returned value
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import Any

OPCODES = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")

# For annotations, as in torch.fx.node:
Target = Callable[..., Any] | str  # what a node calls: a function, or a method/module/attr name
Argument = Any  # a node argument: Nodes, literals, and tuples/lists/dicts/slices of them


def map_aggregate(a: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply `fn` to every leaf of nested tuples, lists, dicts and slices."""
    if type(a) in _LEAVES:  # the common leaves, with one lookup
        return fn(a)
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(x, fn) for x in a)
        return type(a)(*mapped) if hasattr(a, "_fields") else mapped  # namedtuples too
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(
            map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn)
        )
    return fn(a)


def _add_nodes(a: Any, found: dict[Node, None]) -> None:
    """Add every Node inside nested args to `found`: map_arg's walk, without rebuilding."""
    if isinstance(a, Node):
        found.setdefault(a, None)
    elif isinstance(a, (tuple, list)):
        for x in a:
            _add_nodes(x, found)
    elif isinstance(a, dict):
        for x in a.values():
            _add_nodes(x, found)
    elif isinstance(a, slice):
        _add_nodes((a.start, a.stop, a.step), found)


def map_arg(a: Any, fn: Callable[[Node], Any]) -> Any:
    """Apply `fn` to every Node inside nested args, leaving other values alone."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


class Node:
    """One instruction: `%name = op[target](args, kwargs)`; knows its users."""

    def __init__(self, graph, name: str, op: str, target: Any, args: tuple, kwargs: dict) -> None:
        assert op in OPCODES, op
        self.graph = graph
        self.name = name  # unique in the graph; the variable name in generated code
        self.op = op
        self.target = target
        self.users: dict[Node, None] = {}  # nodes that read this one, in insertion order
        # free-form: 'val' (example/fake value), 'stack_trace'; and the provenance keys of
        # [Note: provenance] in provenance.py: 'location', 'call_stack' (capture), 'origins',
        # 'grad_of' (AOT autograd)
        self.meta: dict[str, Any] = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._input_nodes: dict[Node, None] = {}
        self._update_args(args, kwargs)

    # ---- args and the use-def edges -------------------------------------------------------

    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, value: tuple) -> None:
        self._update_args(tuple(value), self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value: dict) -> None:
        self._update_args(self._args, dict(value))

    @property
    def all_input_nodes(self) -> list[Node]:
        """Every node this one reads, once each, in order of appearance."""
        return list(self._input_nodes)

    def _update_args(self, args: tuple, kwargs: dict) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        self._input_nodes = {}
        _add_nodes((args, kwargs), self._input_nodes)
        for new in self._input_nodes:
            new.users.setdefault(self, None)

    def replace_all_uses_with(self, replacement: Node) -> list[Node]:
        """Make every user read `replacement` instead; returns the users changed."""
        users = list(self.users)
        for user in users:
            user.replace_input_with(self, replacement)
        return users

    def replace_input_with(self, old: Node, new: Node) -> None:
        swap = lambda n: new if n is old else n  # noqa: E731
        self._update_args(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # ---- printing --------------------------------------------------------------------------

    def format_node(self) -> str:
        """`%sin : [num_users=1] = call_function[target=minitorch.sin](args = (%x,), ...)`"""
        if self.op == "output":
            return f"return {_format_arg(self.args[0], plain=True)}"
        head = f"%{self.name} : [num_users={len(self.users)}] = {self.op}"
        if self.op in ("placeholder", "get_attr"):
            return f"{head}[target={self.target}]"
        args = _format_arg(self.args)
        kwargs = "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in self.kwargs.items()) + "}"
        return f"{head}[target={target_name(self.target)}](args = {args}, kwargs = {kwargs})"

    def __repr__(self) -> str:
        return self.name


def _format_arg(a: Any, plain: bool = False) -> str:
    prefix = "" if plain else "%"
    if isinstance(a, Node):
        return prefix + a.name
    if isinstance(a, tuple):
        items = [_format_arg(x, plain) for x in a]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(a, list):
        return "[" + ", ".join(_format_arg(x, plain) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v, plain)}" for k, v in a.items()) + "}"
    return repr(a)


def target_name(target: Any) -> str:
    """The readable, importable name of a call target: 'operator.add', 'minitorch.sin'."""
    if isinstance(target, str):
        return target
    import minitorch
    from minitorch.ops import OpDef

    if isinstance(target, OpDef):
        return f"minitorch.ops.{target.name}"
    name = getattr(target, "__name__", None)
    if name is None:
        return repr(target)
    if getattr(operator, name, None) is target:
        return f"operator.{name}"
    if getattr(builtins, name, None) is target:
        return name
    if getattr(minitorch, name, None) is target:
        return f"minitorch.{name}"
    module = getattr(target, "__module__", None) or "<unknown>"
    return f"{module}.{getattr(target, '__qualname__', name)}"


# Leaf types map_aggregate meets most (Node is defined above): a match skips the isinstance chain.
_LEAVES = frozenset({Node, int, float, bool, str, type(None)})
