"""The joint graph: forward and backward traced together, by running autograd under a trace.

    def joint(primals, tangents):
        outs = f(*primals)                                    # records forward ops
        grads = autograd(outs, primals, grad_outputs=tangents) # records the derivative formulas
        return (*outs, *grads)

Placeholders are named `primals_1, ...` and `tangents_1, ...`, as in PyTorch's AOTAutograd.
Common subexpressions are merged afterwards, so `cos(x)` needed by sin's derivative reuses the
forward's `cos(x)`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from minitorch.autograd.engine import run_backward
from minitorch.errors import CompileError
from minitorch.fake import fake_like, make_fake
from minitorch.ops.registry import TensorMeta
from minitorch.tensor import Tensor
from tracer.aot.aliasing import escaping_nodes
from tracer.aot.make_fx import ProxyMode
from tracer.fx import Graph, GraphModule, Node


@dataclass(frozen=True)
class JointSpec:
    """How the joint graph's inputs and outputs line up with the user function's."""

    num_primals: int  # inputs of the user function
    num_outputs: int  # forward outputs (a flat tuple)
    grad_inputs: tuple[int, ...]  # which primals get a gradient (those that require grad)
    differentiable_outputs: tuple[int, ...]  # forward outputs that require grad: one tangent each
    # Filled in once the backward is partitioned (partition.tangents_read): for each gradient,
    # the tangents it is computed from (none arrived: the gradient is None, as in eager), and
    # for each saved value, the tangents whose gradients read it (only if one arrives is a
    # saved tensor written in place before backward() an error).
    tangents_read: tuple[tuple[int, ...], ...] = ()
    saved_read_by: tuple[tuple[int, ...], ...] = ()
    # for each saved value, the outputs sharing its memory in eager (aliasing.saved_aliases)
    saved_aliases: tuple[tuple[int, ...], ...] = ()
    # (output, composite, tangents) for each output whose maker's derivative in PyTorch reads
    # it (relu): its node checks that it was not written in place ([Note: outputs PyTorch
    # saves]) when a gradient arrives at one of `tangents`, the outputs whose gradients flow
    # through that maker in eager autograd (none arrived: eager never runs it, nor checks)
    kept_outputs: tuple[tuple[int, str, tuple[int, ...]], ...] = ()
    # the graph turns grad on (a traced `with enable_grad():`): its outputs may need grad
    # even when it is called under no_grad (aot_autograd.turns_grad_on)
    turns_grad_on: bool = False


def trace_joint(fn: Callable, example_inputs: Sequence[Tensor]) -> tuple[GraphModule, JointSpec]:
    """Trace `fn` (returning a tuple of tensors) and its backward into one graph."""
    graph = Graph()
    mode = ProxyMode(graph)
    primals = [fake_like(x) for x in example_inputs]
    for i, p in enumerate(primals):
        mode.placeholder(f"primals_{i + 1}", p)
    with mode:
        outs = tuple(fn(*primals))
        for o in outs:
            if not isinstance(o, Tensor):
                raise CompileError(f"AOT autograd expects tensor outputs, got {type(o).__name__}")
        diff_outs = tuple(i for i, o in enumerate(outs) if o.requires_grad)
        grad_inputs = tuple(i for i, p in enumerate(primals) if p.requires_grad)
        tangents = []
        for n, i in enumerate(diff_outs):
            tangent = make_fake(TensorMeta(tuple(outs[i].shape), outs[i].dtype))
            mode.placeholder(f"tangents_{n + 1}", tangent)
            tangents.append(tangent)
        made_by = _forward_nodes(mode)

        def note_grad_of(autograd_node) -> None:  # [Note: origins of traced nodes]
            mode.grad_of = made_by.get(id(autograd_node))

        grads = run_backward(
            [outs[i] for i in diff_outs],
            tangents,
            inputs=[primals[i] for i in grad_inputs],
            retain_graph=True,
            on_node=note_grad_of,
        )
        mode.grad_of = None
        mode.output((*outs, *grads))
    _move_placeholders_first(graph)
    eliminate_common_subexpressions(
        graph, keep_apart=escaping_nodes([mode.to_node(o) for o in outs])
    )
    graph.eliminate_dead_code()  # derivatives for inputs that need none (constants) go unused
    kept_outs = [i for i, o in enumerate(outs) if getattr(o._grad_fn, "kept_by", None) is not None]
    reached = [_reachable(outs[i]._grad_fn) for i in diff_outs] if kept_outs else []
    kept = tuple(
        (
            i,
            outs[i]._grad_fn.kept_by,
            tuple(t for t, r in enumerate(reached) if id(outs[i]._grad_fn) in r),
        )
        for i in kept_outs
    )
    spec = JointSpec(len(primals), len(outs), grad_inputs, diff_outs, kept_outputs=kept)
    return GraphModule(mode.constants, graph), spec


def _reachable(root: Any) -> dict[int, Any]:
    """The autograd nodes a gradient at `root` flows through (root included), by id: eager
    autograd runs exactly these for that gradient, so only they ever check what they saved."""
    seen: dict[int, Any] = {}  # NOTE: holds the nodes, so that their ids stay theirs
    stack = [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        stack += [next_node for next_node, _ in node.next_functions]
    return seen


def _forward_nodes(mode: ProxyMode) -> dict[int, Node]:
    """id(autograd node) -> the joint graph's node of the forward op that made it, for every
    tensor traced so far (an op of several outputs: the op's node, not a getitem)."""
    made_by: dict[int, Node] = {}
    for tensor in mode._alive:
        grad_fn, node = tensor._grad_fn, mode.node_of.get(id(tensor))
        if grad_fn is not None and node is not None:
            if node.target is operator.getitem:
                node = node.args[0]
            made_by.setdefault(id(grad_fn), node)
    return made_by


def _move_placeholders_first(graph: Graph) -> None:
    """Tangent placeholders are created mid-trace; inputs belong at the top of a graph."""
    nodes = graph._nodes
    nodes.sort(key=lambda n: 0 if n.op == "placeholder" else 1)  # stable: order kept


def eliminate_common_subexpressions(graph: Graph, keep_apart: set[Node] = frozenset()) -> None:
    """Merge call_function nodes with the same target and the same arguments.

    Random ops are never merged: two dropout masks drawn from the same input differ. Nor are
    two of `keep_apart` (the user's outputs): `a, b = x.exp(), x.exp()` are two tensors, and a
    write into one must not reach the other.
    """
    seen: dict[tuple, object] = {}
    merged: dict[str, str] = {}  # an erased node's name -> the node that stands for it
    for node in graph.nodes:
        if node.op != "call_function" or getattr(node.target, "kind", None) == "random":
            continue
        key = (node.target, _hashable(node.args), _hashable(node.kwargs))
        first = seen.setdefault(key, node)
        if first is not node and not (first in keep_apart and node in keep_apart):
            node.replace_all_uses_with(first)
            graph.erase_node(node)
            merged[node.name] = first.name
    for node in graph.nodes:  # a derivative of an erased node: of the one that stands for it
        if node.meta.get("grad_of") in merged:
            node.meta["grad_of"] = merged[node.meta["grad_of"]]


def _hashable(a):
    if isinstance(a, slice):  # hashable only from Python 3.12
        return ("slice", _hashable(a.start), _hashable(a.stop), _hashable(a.step))
    if isinstance(a, (tuple, list)):
        return (type(a).__name__, *(_hashable(x) for x in a))
    if isinstance(a, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in a.items()))
    return (type(a).__name__, a) if isinstance(a, (int, float, bool)) else a
