"""Split the joint graph into a forward graph and a backward graph.

[Note: partitioning]
The forward graph computes the user's outputs, plus the values the backward will need ("saved
for backward"). We keep the forward minimal: it holds only the nodes the outputs need. Every
other node is the backward's, which recomputes what it can from the saved values; the saved
values are exactly the forward nodes (or primals) that a backward node reads. For sin(x)**2 +
cos(x)**2 that saves sin(x) and cos(x) and recomputes `2 * sin(x)` in the backward, instead of
storing it. (PyTorch's min-cut partitioner generalises this choice with a max-flow problem over
the cost of saving vs. recomputing each value.)

    forward:  (primals...)          -> (outputs..., saved...)
    backward: (saved..., tangents...) -> (grads of the primals that require grad...)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from minitorch.fake import make_fake
from minitorch.ops.registry import TensorMeta
from minitorch.tensor import Tensor
from tracer.aot.joint import JointSpec
from tracer.fx import Graph, GraphModule, Node
from tracer.fx.node import map_arg


@dataclass
class Partition:
    forward: GraphModule
    backward: GraphModule
    num_saved: int  # the forward's outputs after the user's outputs


def _ancestors(roots: list[Node]) -> set[Node]:
    seen: set[Node] = set()
    stack = [r for r in roots if isinstance(r, Node)]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(node.all_input_nodes)
    return seen


def partition_joint(joint: GraphModule, spec: JointSpec) -> Partition:
    """The forward and backward graphs of `joint` (see [Note: partitioning])."""
    nodes = joint.graph.nodes
    output = nodes[-1]
    fw_outs = list(output.args[0][: spec.num_outputs])
    grads = list(output.args[0][spec.num_outputs:])
    primals = [n for n in nodes if n.op == "placeholder" and n.name.startswith("primals_")]
    tangents = [n for n in nodes if n.op == "placeholder" and n.name.startswith("tangents_")]

    forward_nodes = _ancestors(fw_outs) | set(primals)
    backward_nodes = _ancestors(grads) - forward_nodes
    saved = [n for n in nodes if n in forward_nodes
             and any(u in backward_nodes for u in n.users)]

    forward = _extract(joint, primals, [n for n in nodes if n in forward_nodes],
                       (*fw_outs, *saved))
    bw_inputs = saved + tangents  # every tangent is an input, used or not (a fixed signature)
    backward = _extract(joint, bw_inputs, [n for n in nodes if n in backward_nodes], tuple(grads))
    _row_major_saved(backward, {n.name for n in saved if n not in primals})
    return Partition(forward, backward, len(saved))


def _extract(joint: GraphModule, inputs: list[Node], body: list[Node],
             outputs: tuple) -> GraphModule:
    """A new GraphModule with `inputs` as placeholders, `body` copied in order, and `outputs`."""
    graph = Graph()
    env: dict[Node, Node] = {}
    for node in inputs:
        env[node] = graph.placeholder(node.name)
        env[node].meta = dict(node.meta)
    for node in body:
        if node.op == "placeholder" or node in env:
            continue
        env[node] = graph.node_copy(node, lambda n: env[n])
    graph.output(map_arg(outputs, lambda n: env[n]))
    constants = {n.target: getattr(joint, n.target) for n in body if n.op == "get_attr"}
    return GraphModule(constants, graph)


def tangents_read(backward: GraphModule, num_saved: int
                  ) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """Which tangents each gradient of `backward` is computed from, and for each saved value
    (its first placeholders), the tangents whose gradients it is combined with: where it (or a
    value computed from saved values alone) first meets a gradient, the tangents that gradient
    comes from. A gradient none of whose tangents arrive is None, as in eager; and eager reads
    a saved tensor only when a gradient reaches the node that saved it."""
    nodes = backward.graph.nodes
    reached_by = _reached_by(nodes, num_saved)
    meets: dict[Node, set[int]] = {}  # node -> the tangents it is first combined with
    for node in reversed(nodes):
        meets[node] = set().union(*(reached_by[u] or meets[u] for u in node.users
                                    if u.op != "output"))
    grads = tuple(tuple(sorted(reached_by.get(g, ()))) for g in nodes[-1].args[0])
    saved = [n for n in nodes if n.op == "placeholder"][:num_saved]
    return grads, tuple(tuple(sorted(meets[s])) for s in saved)


def _reached_by(nodes: list[Node], num_saved: int) -> dict[Node, set[int]]:
    """node -> the tangents it is computed from (placeholders after the `num_saved` saved)."""
    placeholders = [n for n in nodes if n.op == "placeholder"]
    tangent_of = {t: k for k, t in enumerate(placeholders[num_saved:])}
    reached_by: dict[Node, set[int]] = {}
    for node in nodes:
        reached_by[node] = ({tangent_of[node]} if node in tangent_of else
                            set().union(*(reached_by[n] for n in node.all_input_nodes)))
    return reached_by


def _row_major_saved(backward: GraphModule, names: set[str]) -> None:
    """The backward takes the intermediates it saved as row-major: their layout is whatever
    the forward's backend wrote (a compiled kernel writes fresh row-major memory where eager
    made a view), not the traced view's strides."""
    for node in backward.graph.nodes:
        val = node.meta.get("val")
        if node.op == "placeholder" and node.name in names and isinstance(val, Tensor):
            node.meta["val"] = make_fake(TensorMeta(tuple(val.shape), val.dtype))


def without_tangents(backward: GraphModule, missing: frozenset[int], num_saved: int
                     ) -> GraphModule | None:
    """`backward` computing only what the tangents not `missing` contribute, or None when it
    cannot be pruned here (then the caller passes zeros for the missing ones).

    Eager autograd never runs the nodes that no gradient reaches. Passing zeros instead is not
    the same: 0 * inf is NaN. The backward is linear in the tangents, so a node reached only
    by missing tangents is exactly zero: it is dropped, and `add(g, zero)` becomes `g`.
    """
    graph = copy.deepcopy(backward.graph)
    nodes = graph.nodes
    reached_by = _reached_by(nodes, num_saved)
    tangents = [n for n in nodes if n.op == "placeholder"][num_saved:]
    zero: set[Node] = {t for k, t in enumerate(tangents) if k in missing}
    for node in nodes:
        from_tangents = [n for n in node.all_input_nodes if reached_by[n]]
        if node.op != "call_function" or not from_tangents:
            continue
        live = [n for n in from_tangents if n not in zero]
        if not live:
            zero.add(node)
        elif len(live) < len(from_tangents):  # a sum of a live and a zero gradient
            if getattr(node.target, "name", None) != "add" or len(node.args) != 2:
                return None
            (kept,) = live
            if tuple(kept.meta["val"].shape) != tuple(node.meta["val"].shape):
                return None
            node.replace_all_uses_with(kept)
    output = nodes[-1]
    output.args = (tuple(None if g in zero else g for g in output.args[0]),)
    graph.eliminate_dead_code()
    constants = {n.target: getattr(backward, n.target) for n in nodes if n.op == "get_attr"}
    return GraphModule(constants, graph)
