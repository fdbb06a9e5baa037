"""`replace_pattern`: find every copy of a small graph inside a bigger one and swap it out.

    def pattern(x, y):
        return minitorch.relu(minitorch.add(x, y))

    def replacement(x, y):
        return minitorch.clamp(x + y, min=0.0)

    matches = replace_pattern(gm, pattern, replacement)   # gm's code now calls clamp

[Note: how a pattern matches] Both functions are traced with `symbolic_trace`. A match is
found by walking backwards from the node the pattern returns (the anchor) through the args,
side by side with a candidate node of the graph:
  - a pattern placeholder is a wildcard: it matches any node (the same node each time it is
    read), never a constant, and the node becomes the replacement's matching input;
  - any other pattern node matches a graph node with the same opcode, target, constants and
    kwargs names, whose args match in turn, position by position (no commutativity: `x + y`
    does not match `y + x` with the inputs swapped, as in torch.fx).
A match is kept only if it is *self-contained*: no value computed inside it, other than the
anchor, is read by a node outside it (else removing it would break that reader). Matches are
tried in graph order and never overlap; the placeholders of a later match may read the anchor
of an earlier one, which then reads the earlier replacement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minitorch.errors import InvalidArgumentError, at_user_line
from minitorch.nn.module import Module
from tracer.fx.graph import Graph
from tracer.fx.graph_module import GraphModule, _copy_attr
from tracer.fx.node import Node, map_arg
from tracer.fx.symbolic_trace import symbolic_trace


@dataclass
class Match:
    """One place the pattern was found (its nodes are erased once replaced)."""

    anchor: Node  # the graph node that matched the pattern's returned node
    nodes_map: dict[Node, Node]  # pattern node -> graph node, placeholders included


def replace_pattern(
    gm: GraphModule, pattern: Callable | Module, replacement: Callable | Module
) -> list[Match]:
    """Replace every self-contained, non-overlapping match of `pattern` in `gm` by `replacement`.

    `gm` is edited in place and recompiled; the matches are returned in graph order.
    """
    pattern_graph = _as_graph_module(pattern).graph
    replacement_gm = _as_graph_module(replacement)
    anchor = _returned_node(pattern_graph, "pattern")
    _returned_node(replacement_gm.graph, "replacement")
    pattern_inputs = pattern_graph.find_nodes(op="placeholder")
    _check_inputs(pattern_inputs, replacement_gm.graph.find_nodes(op="placeholder"))

    matches: list[Match] = []
    taken: set[Node] = set()  # graph nodes inside an accepted match
    for node in gm.graph.nodes:
        nodes_map = _match_at(anchor, node)
        if nodes_map is None:
            continue
        inside = _inner_nodes(nodes_map)
        if inside & taken:
            continue
        taken |= inside
        matches.append(Match(node, nodes_map))

    renamed = _copy_replacement_attrs(replacement_gm, gm) if matches else {}
    rewired: dict[Node, Node] = {}  # an erased anchor -> the node that now holds its value
    for match in matches:
        # An input the pattern never reads is unbound; the replacement does not read it either.
        inputs = [
            _follow(rewired, match.nodes_map[p]) if p in match.nodes_map else None
            for p in pattern_inputs
        ]
        rewired[match.anchor] = _splice(gm.graph, match, inputs, replacement_gm.graph, renamed)
    gm.graph.lint()
    gm.recompile()
    return matches


# ---- matching ([Note: how a pattern matches]) ----------------------------------------------


def _match_at(anchor: Node, candidate: Node) -> dict[Node, Node] | None:
    """The pattern-node -> graph-node map if the pattern ends at `candidate`, else None."""
    nodes_map: dict[Node, Node] = {}
    if not _match_node(anchor, candidate, nodes_map):
        return None
    inside = _inner_nodes(nodes_map)
    wildcards = {g for p, g in nodes_map.items() if p.op == "placeholder"}
    if inside & wildcards:
        return None  # an input of the match cannot also be computed inside it
    for pattern_node, node in nodes_map.items():
        if pattern_node.op == "placeholder" or node is candidate:
            continue
        if any(user not in inside for user in node.users):
            return None  # a value inside the match escapes: removing it would break a reader
    return nodes_map


def _match_node(p: Node, g: Node, nodes_map: dict[Node, Node]) -> bool:
    if p in nodes_map:
        return nodes_map[p] is g  # a pattern value read twice is one graph value
    if p.op == "placeholder":
        nodes_map[p] = g
        return True
    if p.op != g.op or p.target != g.target or g in nodes_map.values():
        return False
    if len(p.args) != len(g.args) or p.kwargs.keys() != g.kwargs.keys():
        return False
    nodes_map[p] = g
    return _match_arg(p.args, g.args, nodes_map) and all(
        _match_arg(p.kwargs[k], g.kwargs[k], nodes_map) for k in p.kwargs
    )


def _match_arg(p: Any, g: Any, nodes_map: dict[Node, Node]) -> bool:
    if isinstance(p, Node):
        return isinstance(g, Node) and _match_node(p, g, nodes_map)
    if isinstance(p, (tuple, list)):
        return (
            type(p) is type(g)
            and len(p) == len(g)
            and all(_match_arg(a, b, nodes_map) for a, b in zip(p, g))
        )
    return type(p) is type(g) and p == g  # constants: 1 matches 1, not 1.0 or True


def _inner_nodes(nodes_map: dict[Node, Node]) -> set[Node]:
    return {g for p, g in nodes_map.items() if p.op != "placeholder"}


# ---- replacing -----------------------------------------------------------------------------


def _splice(
    graph: Graph,
    match: Match,
    inputs: list[Node | None],
    replacement: Graph,
    renamed: dict[str, str],
) -> Node:
    """Copy `replacement` in before the anchor, reroute the anchor's users, erase the match."""
    env: dict[Node, Any] = {}
    inputs_left = iter(inputs)
    with graph.inserting_before(match.anchor):
        for node in replacement.nodes:
            if node.op == "placeholder":
                env[node] = next(inputs_left)
            elif node.op == "output":
                result = map_arg(node.args[0], env.__getitem__)
            else:
                copy = graph.node_copy(node, env.__getitem__)
                if node.op in ("get_attr", "call_module"):
                    copy.target = renamed[node.target]
                env[node] = copy
    match.anchor.replace_all_uses_with(result)
    order = {n: i for i, n in enumerate(graph.nodes)}
    for node in sorted(_inner_nodes(match.nodes_map), key=order.__getitem__, reverse=True):
        graph.erase_node(node)  # users first: every reader of a match node is in the match
    return result


def _copy_replacement_attrs(replacement: GraphModule, gm: GraphModule) -> dict[str, str]:
    """Give `gm` the parameters and submodules the replacement reads; old path -> new path."""
    renamed: dict[str, str] = {}
    for node in replacement.graph.nodes:
        if node.op not in ("get_attr", "call_module") or node.target in renamed:
            continue
        value = _lookup(replacement, node.target)
        path, count = node.target, 0
        while _lookup(gm, path) is not None and _lookup(gm, path) is not value:
            count += 1  # the name already means something else in gm
            path = f"{node.target.replace('.', '_')}_{count}"
        if _lookup(gm, path) is None:
            _copy_attr({path: value}, gm, path)
        renamed[node.target] = path
    return renamed


def _lookup(module: Module, path: str) -> Any:
    value: Any = module
    for part in path.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value


def _follow(rewired: dict[Node, Node], node: Node) -> Node:
    while node in rewired:
        node = rewired[node]
    return node


# ---- checking the inputs -------------------------------------------------------------------


def _as_graph_module(fn: Callable | Module) -> GraphModule:
    return fn if isinstance(fn, GraphModule) else symbolic_trace(fn)


def _returned_node(graph: Graph, what: str) -> Node:
    outputs = graph.find_nodes(op="output")
    returned = outputs[0].args[0] if outputs else None
    is_input = isinstance(returned, Node) and returned.op == "placeholder"
    if not isinstance(returned, Node) or (is_input and what == "pattern"):
        raise InvalidArgumentError(
            at_user_line(
                f"replace_pattern: the {what} must return one value computed from its inputs, "
                f"but it returns {returned!r}"
            )
        )
    return returned


def _check_inputs(pattern_inputs: list[Node], replacement_inputs: list[Node]) -> None:
    if len(pattern_inputs) != len(replacement_inputs):
        raise InvalidArgumentError(
            at_user_line(
                f"replace_pattern: the pattern takes {len(pattern_inputs)} inputs and the "
                f"replacement {len(replacement_inputs)}; they are paired by position, so the "
                "counts must agree"
            )
        )
    for p, r in zip(pattern_inputs, replacement_inputs):
        if not p.users and r.users:
            raise InvalidArgumentError(
                at_user_line(
                    f"replace_pattern: the pattern never reads its input {p.name}, so a match "
                    f"cannot say what to pass as the replacement's {r.name}"
                )
            )
