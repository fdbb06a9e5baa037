"""Split the joint graph into a forward graph and a backward graph.

[Note: partitioning]
The forward graph computes the user's outputs, plus the values the backward will need ("saved
for backward"); the backward computes the gradients from the saved values and the tangents.
Which values to save is a choice, and config.partitioner names the partitioner that makes it,
one of those registered with `register_partitioner(name, fn)`: `fn(joint)` gets a `Joint` (the
joint graph, its primals, tangents, forward outputs and gradients, and the nodes the outputs
need) and returns the nodes to save. Two are in the tree, each registered by its own module:

- "default" (below) keeps the forward minimal: it holds only the nodes the outputs need. Every other
  node is the backward's, and the saved values are exactly the forward nodes (or primals) that
  a backward node reads. For sin(x)**2 + cos(x)**2 that saves sin(x) and cos(x) and recomputes
  `2 * sin(x)` in the backward, instead of storing it.
- "min_cut" (min_cut.py, [Note: min-cut partitioning]) saves the fewest bytes: x alone, with
  sin(x) and cos(x) computed again in the backward. Random values, reductions and extern ops
  (mm) are never recomputed.

Whatever the partitioner, the forward computes what its outputs and the saved values need,
and the backward everything between the saved values and the gradients:

    forward:  (primals...)          -> (outputs..., saved...)
    backward: (saved..., tangents...) -> (grads of the primals that require grad...)

`partition_joint` checks what a partitioner chose, whoever wrote it: every saved value is a
node of the forward side (no tangent flows into it), the backward can compute every gradient
from the saved values and the tangents, and no random op (uniform, normal, dropout's mask) is
computed again in the backward, where it would draw other numbers than the forward did. A
choice that breaks one is a CompileError naming the partitioner.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from minitorch import _logging, config
from minitorch.errors import CompileError
from minitorch.fake import make_fake
from minitorch.ops.registry import OpDef, TensorMeta
from minitorch.tensor import Tensor
from tracer.aot.joint import JointSpec
from tracer.fx import Graph, GraphModule, Node
from tracer.fx.node import map_arg


@dataclass
class Partition:
    forward: GraphModule
    backward: GraphModule
    num_saved: int  # the forward's outputs after the user's outputs
    saved_bytes: int  # their sizes, summed: the memory held from forward to backward
    partitioner: str  # which chose them: a name of `partitioners()`


@dataclass
class Joint:
    """What a partitioner is given: the joint graph and its parts, as nodes of `gm.graph`."""

    gm: GraphModule
    primals: list[Node]  # the inputs
    tangents: list[Node]  # the gradients of the outputs, given to the backward
    outputs: list[Node]  # the forward's outputs
    grads: list[Node | None]  # the gradients of the primals (None: no gradient)
    forward_nodes: set[Node]  # what the outputs are computed from, primals included


Partitioner = Callable[[Joint], list[Node]]  # the nodes to save
_PARTITIONERS: dict[str, Partitioner] = {}


def register_partitioner(name: str, fn: Partitioner) -> None:
    """Make `config.partitioner = name` save what `fn(joint)` returns."""
    if not callable(fn):
        raise CompileError(f"register_partitioner: {name!r} is not callable: {fn!r}")
    if name in _PARTITIONERS:
        raise CompileError(f"a partitioner named {name!r} is already registered")
    _PARTITIONERS[name] = fn


def unregister_partitioner(name: str) -> None:
    _PARTITIONERS.pop(name, None)


def partitioners() -> dict[str, Partitioner]:
    """The registered partitioners by name, in registration order."""
    return dict(_PARTITIONERS)


def nbytes(node: Node) -> int:
    """The bytes of `node`'s value; a value that is not a tensor counts as one word."""
    val = node.meta.get("val")
    if not isinstance(val, Tensor):
        return 8
    return val.numel() * val.dtype.itemsize


def _ancestors(roots: list, stop: set[Node] = frozenset()) -> set[Node]:
    """The nodes `roots` are computed from, themselves included; not looking past `stop`."""
    seen: set[Node] = set()
    stack = [r for r in roots if isinstance(r, Node)]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            if node not in stop:
                stack.extend(node.all_input_nodes)
    return seen


def default_partitioner(joint: Joint) -> list[Node]:
    """Save every forward value the backward reads ([Note: partitioning])."""
    # course: begin partitioner
    backward_nodes = _ancestors(joint.grads) - joint.forward_nodes
    return [
        n
        for n in joint.gm.graph.nodes
        if n in joint.forward_nodes and any(u in backward_nodes for u in n.users)
    ]
    # course: end partitioner


register_partitioner("default", default_partitioner)


def joint_of(joint: GraphModule, spec: JointSpec) -> Joint:
    """The `Joint` a partitioner is given for `joint`."""
    fw_outs, grads, primals, tangents = _joint_parts(joint, spec)
    forward_nodes = _ancestors(fw_outs) | set(primals)
    return Joint(joint, primals, tangents, fw_outs, grads, forward_nodes)


def saved_values(joint: GraphModule, spec: JointSpec, partitioner: str | None = None) -> list[Node]:
    """The nodes of `joint` that `partitioner` (by default config.partitioner) saves for the
    backward, in graph order, each once."""
    partitioner = partitioner or config.partitioner
    if partitioner not in _PARTITIONERS:
        raise CompileError(
            f"unknown partitioner {partitioner!r}; choose one of {', '.join(_PARTITIONERS)}"
        )
    chosen = _PARTITIONERS[partitioner](joint_of(joint, spec))
    nodes = joint.graph.nodes
    strays = [n for n in chosen if not isinstance(n, Node) or n not in set(nodes)]
    if strays:
        raise CompileError(
            f"partitioner {partitioner!r} saved {strays[0]!r}, which is not a node of the joint "
            "graph it was given"
        )
    chosen = set(chosen)
    return [n for n in nodes if n in chosen]


def partition_joint(
    joint: GraphModule, spec: JointSpec, partitioner: str | None = None
) -> Partition:
    """The forward and backward graphs of `joint`, saving what `partitioner` (by default
    config.partitioner) chooses: see [Note: partitioning]."""
    nodes = joint.graph.nodes
    fw_outs, grads, primals, tangents = _joint_parts(joint, spec)
    partitioner = partitioner or config.partitioner
    saved = saved_values(joint, spec, partitioner)
    # A draw nothing reads still advances the generator, as it did in eager: the forward keeps
    # it, so that the draws after it (a later dropout's mask) are eager's.
    from_tangents = computed_from_tangents(nodes)
    draws = [n for n in nodes if _is_random(n) and n not in from_tangents]
    forward_nodes = _ancestors([*fw_outs, *saved, *draws]) | set(primals)
    bw_inputs = saved + tangents  # every tangent is an input, used or not (a fixed signature)
    backward_nodes = _ancestors(grads, stop=set(bw_inputs))
    _check_choice(partitioner, from_tangents, saved, forward_nodes, backward_nodes, bw_inputs)
    forward = _extract(joint, primals, [n for n in nodes if n in forward_nodes], (*fw_outs, *saved))
    backward = _extract(joint, bw_inputs, [n for n in nodes if n in backward_nodes], tuple(grads))
    _row_major_saved(backward, {n.name for n in saved if n not in primals})
    return Partition(forward, backward, len(saved), sum(map(nbytes, saved)), partitioner)


def _check_choice(
    partitioner: str,
    from_tangents: set[Node],  # computed_from_tangents of the joint graph's nodes
    saved: list[Node],
    forward: set[Node],
    backward: set[Node],
    inputs: list,
) -> None:
    """What any partitioner's choice must keep (see the end of [Note: partitioning])."""
    given = set(inputs)
    for node in saved:
        if node in from_tangents:
            raise CompileError(
                f"partitioner {partitioner!r} saved {node.name}, which is computed from a "
                "tangent: the forward cannot compute it"
            )
    missing = [n.name for n in backward if n.op == "placeholder" and n not in given]
    if missing:
        raise CompileError(
            f"partitioner {partitioner!r}: the backward needs {', '.join(sorted(missing))}, an "
            "input of the forward that is neither saved nor computed from saved values"
        )
    random = [n.name for n in backward - given if n in forward and _is_random(n)]
    if random:
        raise CompileError(
            f"partitioner {partitioner!r}: the backward would compute {', '.join(random)} again, "
            "a random op: it would draw other numbers than the forward; save it instead"
        )


def computed_from_tangents(nodes: list[Node]) -> set[Node]:
    """The tangents and every node computed from one (`nodes` in graph order): the
    backward's own nodes, which the forward cannot compute."""
    found: set[Node] = set()
    for node in nodes:
        if (node.op == "placeholder" and node.name.startswith("tangents_")) or any(
            n in found for n in node.all_input_nodes
        ):
            found.add(node)
    return found


def _is_random(node: Node) -> bool:
    """An op of the table that draws from the generator: uniform, normal, randint, rng_state
    (which dropout's mask is computed from)."""
    target = node.target
    return node.op == "call_function" and isinstance(target, OpDef) and target.kind == "random"


def _joint_parts(joint: GraphModule, spec: JointSpec) -> tuple[list, list, list, list]:
    """The joint graph's forward outputs, gradients, primals and tangents."""
    nodes = joint.graph.nodes
    outputs = nodes[-1].args[0]
    placeholders = [n for n in nodes if n.op == "placeholder"]
    return (
        list(outputs[: spec.num_outputs]),
        list(outputs[spec.num_outputs :]),
        [n for n in placeholders if n.name.startswith("primals_")],
        [n for n in placeholders if n.name.startswith("tangents_")],
    )


def describe_saved(joint: GraphModule, spec: JointSpec, parts: Partition) -> str:
    """What the forward saves, for the walkthrough's title of the forward graph:
    '1 saved for backward, 4,000 bytes: primals_1; partitioner "default" would save 2, 8,000
    bytes'. The other partitioner's choice is computed only when the walkthrough or
    MINITORCH_LOGS shows the forward."""
    names = [n.name for n in parts.forward.graph.nodes[-1].args[0][spec.num_outputs :]]
    shown = ", ".join(names if len(names) <= 6 else [*names[:6], "..."])
    text = f"{parts.num_saved} saved for backward, {parts.saved_bytes:,} bytes: {shown}"
    if not _logging.enabled("forward"):
        return text
    others = []
    for other in _PARTITIONERS:
        if other != parts.partitioner:
            saved = saved_values(joint, spec, other)
            others.append(f'"{other}" would save {len(saved)}, {sum(map(nbytes, saved)):,} bytes')
    return "; ".join([text, *(f"partitioner {o}" for o in others)])


def _extract(
    joint: GraphModule, inputs: list[Node], body: list[Node], outputs: tuple
) -> GraphModule:
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


def tangents_read(
    backward: GraphModule, num_saved: int
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
        meets[node] = set().union(
            *(reached_by[u] or meets[u] for u in node.users if u.op != "output")
        )
    grads = tuple(tuple(sorted(reached_by.get(g, ()))) for g in nodes[-1].args[0])
    saved = [n for n in nodes if n.op == "placeholder"][:num_saved]
    return grads, tuple(tuple(sorted(meets[s])) for s in saved)


def _reached_by(nodes: list[Node], num_saved: int) -> dict[Node, set[int]]:
    """node -> the tangents it is computed from (placeholders after the `num_saved` saved)."""
    placeholders = [n for n in nodes if n.op == "placeholder"]
    tangent_of = {t: k for k, t in enumerate(placeholders[num_saved:])}
    reached_by: dict[Node, set[int]] = {}
    for node in nodes:
        reached_by[node] = (
            {tangent_of[node]}
            if node in tangent_of
            else set().union(*(reached_by[n] for n in node.all_input_nodes))
        )
    return reached_by


def _row_major_saved(backward: GraphModule, names: set[str]) -> None:
    """The backward takes the intermediates it saved as row-major: their layout is whatever
    the forward's backend wrote (a compiled kernel writes fresh row-major memory where eager
    made a view), not the traced view's strides."""
    for node in backward.graph.nodes:
        val = node.meta.get("val")
        if node.op == "placeholder" and node.name in names and isinstance(val, Tensor):
            node.meta["val"] = make_fake(TensorMeta(tuple(val.shape), val.dtype))


def without_tangents(
    backward: GraphModule, missing: frozenset[int], num_saved: int
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
