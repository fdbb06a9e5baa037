"""`Graph`: an ordered list of Nodes, built by tracers and rewritten by passes.

    graph():
        %x : [num_users=2] = placeholder[target=x]
        %sin : [num_users=1] = call_function[target=minitorch.sin](args = (%x,), kwargs = {})
        %pow_1 : [num_users=1] = call_function[target=operator.pow](args = (%sin, 2), kwargs = {})
        ...
        return (add,)

The graph owns the names of its nodes (unique, valid Python identifiers, never a builtin) and
the insertion point where new nodes go.
"""

from __future__ import annotations

import builtins
import contextlib
import keyword
import re
from collections.abc import Iterator
from typing import Any

from minitorch.errors import MinitorchError
from minitorch.ops import OpDef
from tracer.fx.node import Node, map_arg, target_name

_IMPURE_TARGETS: set = set()  # functions with side effects: never removed by dead-code elimination

# Functions, ops and methods that draw random numbers, by name (ops also say kind='random';
# the composite `dropout` does not, but its decomposition draws a `dropout_mask`).
RANDOM_NAMES = frozenset(
    {
        "rand",
        "randn",
        "randint",
        "rand_like",
        "randn_like",
        "randint_like",
        "randperm",
        "bernoulli",
        "multinomial",
        "normal",
        "dropout",
        "dropout_mask",
    }
)


def is_random(node: Node) -> bool:
    """Does `node` draw random numbers, so that two evaluations differ?"""
    target = node.target
    if isinstance(target, OpDef):
        return target.kind == "random" or target.name in RANDOM_NAMES
    if node.op == "call_method":
        return target in RANDOM_NAMES
    return node.op == "call_function" and getattr(target, "__name__", None) in RANDOM_NAMES


class GraphLintError(MinitorchError):
    """A graph broke one of the invariants `Graph.lint()` checks."""


class Graph:
    """A straight-line program of Nodes (see module docstring for the printed form)."""

    def __init__(self) -> None:
        self._nodes: list[Node] = []
        self._used_names: set[str] = set()
        self._name_counters: dict[str, int] = {}
        self._insert_at: tuple[Node | None, int] = (None, 0)  # (anchor, 0 before / 1 after)

    @property
    def nodes(self) -> list[Node]:
        """The nodes in program order (a copy: erasing while iterating is safe)."""
        return list(self._nodes)

    # ---- building --------------------------------------------------------------------------

    def create_node(
        self,
        op: str,
        target: Any,
        args: tuple = (),
        kwargs: dict | None = None,
        name: str | None = None,
    ) -> Node:
        node = Node(
            self,
            self._unique_name(name or _candidate_name(op, target)),
            op,
            target,
            tuple(args),
            dict(kwargs or {}),
        )
        anchor, after = self._insert_at
        if anchor is None:
            self._nodes.append(node)
        else:
            self._nodes.insert(self._nodes.index(anchor) + after, node)
            if after:
                self._insert_at = (node, 1)  # keep inserting in order after the anchor
        return node

    def placeholder(self, name: str, type_expr: Any = None) -> Node:
        node = self.create_node("placeholder", name, name=name)
        node.meta["type"] = type_expr
        return node

    def get_attr(self, qualified_name: str) -> Node:
        return self.create_node("get_attr", qualified_name)

    def call_function(
        self, the_function: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Node:
        return self.create_node("call_function", the_function, args, kwargs)

    def call_method(self, method_name: str, args: tuple = (), kwargs: dict | None = None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs)

    def call_module(self, module_name: str, args: tuple = (), kwargs: dict | None = None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs)

    def output(self, result: Any) -> Node:
        return self.create_node("output", "output", (result,), name="output")

    def node_copy(self, node: Node, arg_transform=lambda n: n) -> Node:
        """Copy `node` (from any graph) into this one, mapping its input nodes."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        copy = self.create_node(node.op, node.target, args, kwargs, name=node.name)
        copy.meta = dict(node.meta)
        return copy

    def __deepcopy__(self, memo: dict) -> Graph:
        """`copy.deepcopy(graph)`: new nodes with the same names; targets are shared, not copied.

        NOTE: the default deepcopy would also copy each target, and an op of the table
        (`minitorch.ops.add`) compares by identity: the copy's targets would match nothing.
        """
        new = Graph()
        memo[id(self)] = new
        new._name_counters = dict(self._name_counters)  # later nodes are named as they would be
        env: dict[Node, Node] = {}
        for node in self._nodes:
            env[node] = new.node_copy(node, env.__getitem__)
        return new

    @contextlib.contextmanager
    def inserting_before(self, node: Node) -> Iterator[None]:
        saved, self._insert_at = self._insert_at, (node, 0)
        try:
            yield
        finally:
            self._insert_at = saved

    @contextlib.contextmanager
    def inserting_after(self, node: Node) -> Iterator[None]:
        saved, self._insert_at = self._insert_at, (node, 1)
        try:
            yield
        finally:
            self._insert_at = saved

    def erase_node(self, node: Node) -> None:
        if node.users:
            raise GraphLintError(
                f"cannot erase node {node.name}: it still has users {list(node.users)}"
            )
        node._update_args((), {})  # unlink from the nodes it read
        self._nodes.remove(node)
        self._used_names.discard(node.name)

    def eliminate_dead_code(self) -> bool:
        """Remove nodes whose values nobody uses; returns whether anything changed.

        A node that draws random numbers stays: it advances the generator, so every later
        draw depends on it (`F.dropout(x); return F.dropout(x)` returns eager's second mask).
        """
        changed = False
        for node in reversed(self._nodes):
            if node.op in ("placeholder", "output") or node.users or is_random(node):
                continue
            if node.op == "call_function" and node.target in _IMPURE_TARGETS:
                continue
            self.erase_node(node)
            changed = True
        return changed

    def find_nodes(self, *, op: str, target: Any = None) -> list[Node]:
        return [n for n in self._nodes if n.op == op and (target is None or n.target == target)]

    # ---- checking and printing -------------------------------------------------------------

    def lint(self) -> None:
        """Check the invariants every pass may rely on; raise GraphLintError naming the node.

        Names are unique; placeholders come first and one output last; each node reads only
        nodes of this graph defined before it; `users` lists exactly the nodes that read a
        node (none erased or of another graph); targets have the type their opcode needs.
        """
        in_graph = set(self._nodes)
        reads = {node: _inputs(node) for node in self._nodes}  # from args as they are now
        seen: set[Node] = set()
        names: set[str] = set()
        first_op: Node | None = None  # the first node that is not a placeholder
        for node in self._nodes:
            if node.graph is not self:
                raise GraphLintError(f"node {node.name} belongs to another graph")
            if node.name in names:
                raise GraphLintError(f"two nodes are named {node.name}")
            names.add(node.name)
            if node.op == "placeholder" and first_op is not None:
                raise GraphLintError(f"placeholder {node.name} comes after {first_op.name}")
            if node.op != "placeholder" and first_op is None:
                first_op = node
            for inp in reads[node]:
                if inp not in seen:
                    raise GraphLintError(
                        f"node {node.name} uses {inp.name} before it is defined"
                        if inp in in_graph
                        else f"node {node.name} uses {inp.name}, which is not in this graph"
                    )
                if node not in inp.users:
                    raise GraphLintError(f"{inp.name}.users is missing its user {node.name}")
            for user in node.users:
                if user not in in_graph:
                    raise GraphLintError(
                        f"{node.name} lists {user.name} as a user, but {user.name} is not in "
                        "this graph (erased?)"
                    )
                if node not in reads[user]:
                    raise GraphLintError(
                        f"{node.name} lists {user.name} as a user, but {user.name} does not read it"
                    )
            _check_target(node)
            seen.add(node)
        outputs = [n for n in self._nodes if n.op == "output"]
        if not outputs:
            raise GraphLintError("the graph has no output node: a graph ends in one")
        if len(outputs) > 1 or outputs[0] is not self._nodes[-1]:
            raise GraphLintError(
                f"a graph has at most one output node, and it comes last: this one has "
                f"{len(outputs)}, and ends in {self._nodes[-1].name}"
            )

    def __str__(self) -> str:
        lines = ["graph():"] + ["    " + n.format_node() for n in self._nodes]
        return "\n".join(lines)

    def print_tabular(self) -> None:
        """Print one row per node: opcode, name, target, args, kwargs (torch.fx's table)."""
        print(self.tabular())

    def tabular(self) -> str:
        rows = [("opcode", "name", "target", "args", "kwargs")]
        for n in self._nodes:
            target = n.target if isinstance(n.target, str) else _table_target(n.target)
            rows.append((n.op, n.name, str(target), _plain(n.args), _plain(n.kwargs)))
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        rows.insert(1, tuple("-" * w for w in widths))
        return "\n".join(
            "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows
        )

    def python_code(self, root_module: str = "self") -> str:
        from tracer.fx.python_code import python_code

        return python_code(self, root_module).source

    # ---- names -----------------------------------------------------------------------------

    def _unique_name(self, candidate: str) -> str:
        if (
            candidate.isidentifier()
            and candidate not in self._used_names
            and not keyword.iskeyword(candidate)
            and not hasattr(builtins, candidate)
        ):
            # most names: taken as they are, as the general path below would take them
            self._used_names.add(candidate)
            return candidate
        name = re.sub(r"\W", "_", candidate) or "_"
        if name[0].isdigit():
            name = "_" + name
        base = re.sub(r"_\d+$", "", name) or name
        if name in self._used_names or keyword.iskeyword(name) or hasattr(builtins, name):
            while True:
                self._name_counters[base] = self._name_counters.get(base, 0) + 1
                name = f"{base}_{self._name_counters[base]}"
                if name not in self._used_names:
                    break
        self._used_names.add(name)
        return name


def _inputs(node: Node) -> dict[Node, None]:
    """The nodes `node`'s args and kwargs hold, once each, in order."""
    found: dict[Node, None] = {}
    map_arg((node.args, node.kwargs), lambda n: found.setdefault(n, None))
    return found


def _candidate_name(op: str, target: Any) -> str:
    if op in ("get_attr", "call_module"):
        return target.replace(".", "_")
    if isinstance(target, str):
        return target
    return getattr(target, "name", None) or getattr(target, "__name__", "node")


def _check_target(node: Node) -> None:
    wants_str = node.op in ("placeholder", "get_attr", "call_method", "call_module", "output")
    if wants_str and not isinstance(node.target, str):
        raise GraphLintError(
            f"node {node.name}: {node.op} needs a string target, got {node.target!r}"
        )
    if node.op == "call_function" and not callable(node.target):
        raise GraphLintError(
            f"node {node.name}: call_function target {node.target!r} is not callable"
        )


def _table_target(target: Any) -> str:
    return (
        str(target)
        if type(target).__name__ == "builtin_function_or_method"
        else target_name(target)
    )


def _plain(a: Any) -> str:
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k!r}: {_plain(v)}" for k, v in a.items()) + "}"
    if isinstance(a, tuple):
        inner = ", ".join(_plain(x) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_plain(x) for x in a) + "]"
    return a.name if isinstance(a, Node) else repr(a)
