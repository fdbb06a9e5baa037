"""The min-cut partitioner: save few bytes for the backward, recompute cheap ops there instead.

[Note: min-cut partitioning]
The "default" partitioner ([Note: partitioning]) saves whatever forward value the backward reads.
For sin(x)**2 + cos(x)**2 that is sin(x) and cos(x): two tensors of x's size, held from the
forward to the backward, and written to memory by a forward that would otherwise write only
its output. Saving x alone is enough: the backward can compute sin and cos again, in the same
fused loop that reads the incoming gradient, at no cost in memory traffic. Choosing what to
save is a minimum cut (the design of AOTAutograd's min_cut_rematerialization_partition, the
partitioner Inductor hands it, from its authors' description; the code here is ours):

    the network   each value v of the joint graph that does not depend on a tangent becomes
                  two vertices joined by an edge  v_in -> v_out  whose capacity is the cost
                  of saving v (its bytes); each use of v by another such value w is an edge
                  v_out -> w_in of infinite capacity
    source ->     every primal (an input cannot be computed again: only saved) and every
                  value of the forward that must not be recomputed (below), with infinite
                  capacity. (A value only the backward needs is computed once wherever it
                  lands: in the forward, then saved, or in the backward.)
    -> sink       every value the backward reads directly (a tangent-dependent node's
                  input, or a gradient itself), with infinite capacity

A finite cut separates the source from the sink by cutting v_in -> v_out edges only: the cut
values are the saved ones, and the values on the sink side are the ones the backward computes
again from them. An infinite edge cannot be cut, so every value the backward needs is saved
or recomputed from saved values, and nothing that must not be recomputed is. The minimum cut
(max_flow.py, [Note: max-flow, min-cut]) saves the fewest bytes, and of the equally cheap
cuts it takes the one nearest the backward, which recomputes least: for exp(2 * x) it saves
exp's output rather than x, as eager autograd does.

What may be recomputed (the policy):
- pointwise ops, views and constant factories that the code generator lowers into loops: a
  backward kernel computes them from values it reads anyway, so recomputing costs arithmetic,
  not memory traffic. (This is AOTAutograd's "fusible ops" rule.)
- never a random op (uniform, normal, randint, rng_state) nor dropout's mask (dropout_keep
  hashes the generator's state into it): the backward must see the forward's draws. PyTorch
  can recompute some of them by saving the generator's seed and offset instead (its
  functionalized random numbers); we save the mask, as its default does.
- a backward formula's own node that reads an input or an output of the forward (min's
  mask `x == min(x)`), when it may be recomputed, is recomputed, never saved: the backward
  reads the input or output itself. The caller holds it and may write it in place before
  `backward()`; eager autograd then raises (its node saved the tensor), and so must we, by
  the version check on saved tensors. Saving the mask, a byte an element against x's four,
  would give a gradient where eager refuses. (The "default" partitioner saves what the
  backward reads, so it saves the same tensors.)
- never an output of the forward (what the caller gets back, or writes into an input): for
  the same reason, an output a formula reads (exp's, tanh's, softmax's read their result)
  must be saved, not recomputed from x, where its new values would go unnoticed. So an
  output sits on the source side, and one the backward needs is saved, as eager saves it.
- never an extern op (mm, bmm, im2col, scatter_add, ...), a reduction or a gather: recomputing
  a matmul costs its flops again, and a reduction reads its whole input again, to spare a
  small saved result. AOTAutograd bans its compute-intensive ops (matmuls, convolutions) from
  recomputation for the same reason; we are stricter with reductions: one recomputed in the
  backward is a pass over its whole input, never inlined into the loop that reads it.

Bytes are not the whole cost. A value the forward writes to memory anyway (an input, an
output, the operand or result of an extern op) costs only the memory held until the
backward; any other value costs that and the forward's write and the backward's read of it.
So a saved value that a fused loop would otherwise keep in registers counts twice its bytes
(AOTAutograd weighs "materialized" values the same way). The partitioner reports the bytes
saved, unweighted.
"""

from __future__ import annotations

import math

from minitorch.ops.registry import OpDef
from tracer.aot.max_flow import FlowNetwork
from tracer.aot.partition import Joint, computed_from_tangents, nbytes, register_partitioner
from tracer.fx import Node

RECOMPUTED_KINDS = frozenset({"pointwise", "view", "factory"})
NEVER_RECOMPUTED = frozenset({"dropout_keep"})  # its mask is random: [Note: min-cut ...]


def recomputable(node: Node) -> bool:
    """Whether the backward may compute `node` again rather than have it saved."""
    if node.op == "get_attr":  # a constant: the backward reads it too
        return True
    op = node.target
    return (
        node.op == "call_function"
        and isinstance(op, OpDef)
        and op.lowering == "lowered"
        and op.kind in RECOMPUTED_KINDS
        and op.name not in NEVER_RECOMPUTED
    )


def min_cut_saved(
    nodes: list[Node], fw_outs: list[Node], grads: list, forward: set[Node]
) -> list[Node]:
    """The values the forward saves for the backward, by a minimum cut of the joint graph
    `nodes` ([Note: min-cut partitioning]); `forward` holds what the forward outputs need."""
    from_tangents = computed_from_tangents(nodes)
    read = _read_by_backward(nodes, grads, from_tangents)
    candidates = _candidates(nodes, read, from_tangents)
    written = _written_anyway(fw_outs, forward)
    outputs = set(fw_outs)  # never recomputed: see the policy
    readers = _formula_readers(nodes, forward, outputs)
    net = FlowNetwork()
    for node in candidates:
        weight = math.inf if node in readers else nbytes(node) * (1 if node in written else 2)
        net.add_edge((node, "in"), (node, "out"), weight)
        if (
            node.op == "placeholder"
            or node in outputs
            or (node in forward and not recomputable(node))
        ):
            net.add_edge("source", (node, "in"), math.inf)
        for user in node.users:
            if user in candidates:
                net.add_edge((node, "out"), (user, "in"), math.inf)
        if node in read:
            net.add_edge((node, "out"), "sink", math.inf)
    _, source_side = net.min_cut("source", "sink")
    return [n for n in candidates if (n, "in") in source_side and (n, "out") not in source_side]


def _read_by_backward(nodes: list[Node], grads: list, from_tangents: set[Node]) -> set[Node]:
    """The nodes not computed from tangents that the backward reads: inputs of its nodes, and
    gradients computed without a tangent (a constant gradient)."""
    read = {g for g in grads if isinstance(g, Node) and g not in from_tangents}
    for node in nodes:
        if node in from_tangents and node.op != "output":
            read.update(n for n in node.all_input_nodes if n not in from_tangents)
    return read


def _formula_readers(nodes: list[Node], forward: set[Node], outputs: set[Node]) -> set[Node]:
    """The recomputable nodes of eager's backward formulas (outside the forward) that read an
    input or an output the caller holds: never saved ([Note: min-cut partitioning], the
    policy)."""
    held = outputs | {
        n for n in nodes if n.op == "placeholder" and not n.name.startswith("tangents_")
    }
    return {
        n
        for n in nodes
        if n not in forward
        and n.op != "output"
        and recomputable(n)
        and any(i in held for i in n.all_input_nodes)
    }


def _candidates(nodes: list[Node], read: set[Node], from_tangents: set[Node]) -> list[Node]:
    """The values that could be saved or recomputed: what the backward reads, and what that is
    computed from (in graph order). Only these are vertices of the network."""
    found: set[Node] = set()
    for node in reversed(nodes):
        if node in read or any(u in found for u in node.users):
            if node not in from_tangents and node.op != "output":
                found.add(node)
    return [n for n in nodes if n in found]


def _written_anyway(fw_outs: list[Node], forward: set[Node]) -> set[Node]:
    """Values the forward has in memory whatever it saves: inputs, outputs, and the operands
    and results of ops that are not lowered into loops (extern and random ops). Not a view
    of one: saving it makes the forward write a copy (the backward takes saved values
    row-major), where the value it views could be saved as it is."""
    written = set(fw_outs) | {n for n in forward if n.op == "placeholder"}
    for node in forward:
        if node.op == "call_function" and getattr(node.target, "lowering", None) != "lowered":
            written.add(node)
            written.update(n for n in node.all_input_nodes if not _is_view(n))
    return written


def _is_view(node: Node) -> bool:
    return getattr(node.target, "kind", None) == "view"


def min_cut_partitioner(joint: Joint) -> list[Node]:
    """The partitioner "min_cut": `min_cut_saved` of the joint graph."""
    nodes = joint.gm.graph.nodes
    return min_cut_saved(nodes, joint.outputs, joint.grads, joint.forward_nodes)


register_partitioner("min_cut", min_cut_partitioner)
