"""Fallback kernels: ops with no lowering run their eager kernel inside the compiled program.

    program = compile_with_fallbacks(graph, compile_graph)   # codegen/inductor.py does this
    outputs = program(*tensors)                               # steps: eager mm, one fused kernel

[Note: fallback kernels]
The loop-level IR lowers pointwise ops, sums and views (ir/lowering.py LOWERINGS); mm, gather,
cat, amax and the rest have no lowering. One such op should not send the whole graph back to
eager mode: Inductor runs it as a *fallback kernel* (the op's eager implementation, called from
the compiled program) and still fuses and compiles everything around it. We do the same at the
level of the fx graph, cutting it into *steps* run in order over one environment of values:

    permute(w) -> mm(x, permute) -> add(mm, b) -> le, where (relu) -> sin
    step 0  eager     permute, mm           the op table's numpy kernels, as eager mode runs them
    step 1  compiled  add, le, where, sin   a graph of its own through lower/schedule/LLVM: one
                                            fused kernel

- A call_function node is *lowerable* when its op has a lowering and it reads and makes tensors;
  any other node runs eagerly, `node.target(*args)`.
- In a graph with fallbacks, a view (permute, expand, reshape) that no lowerable op reads runs
  eagerly too: eagerly it is free (numpy strides); lowered, it would be a copy kernel for eager
  readers or the caller. A graph whose ops all lower compiles whole, as before.
- Lowerable nodes are grouped into *segments*, each compiled as one graph. A segment must come
  after every fallback it reads, and a fallback after every segment it reads. We number segments
  as early as that allows, which fixes where each fallback runs, then move each lowerable node
  to the latest segment its users allow, so it lands in the segment of the ops that read it and
  fuses with them instead of being stored by one segment and loaded by the next.

Why at the graph level, and not an ExternKernel node in the loop IR as Inductor has: the
scheduler, memory planner, backends and interpreter all stay about loops, and a segment is an
ordinary graph for `compile_fx`'s passes. A value that crosses a fallback is stored either way
(the eager op reads memory); what we give up is fusing loops across a segment boundary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ir.lowering import LOWERINGS
from minitorch import _logging
from minitorch.fake import make_fake
from minitorch.ops.registry import TensorMeta
from minitorch.tensor import Tensor
from tracer.fx import Graph
from tracer.fx.node import Node, map_arg

CompileGraph = Callable[[Graph, str], Callable]  # (segment graph, its name) -> compiled callable


def lowerable_nodes(graph: Graph) -> set[Node]:
    """The call_function nodes that go to compiled segments (rules in [Note: fallback kernels])."""
    live = [n for n in graph.nodes if n.op == "call_function" and n.users]
    lowerable = {node for node in live if _has_lowering(node)}
    if len(lowerable) == len(live):
        return lowerable  # nothing runs eagerly: the whole graph compiles, as it always did
    for node in reversed(live):  # users first: a view's placement depends on them
        if getattr(node.target, "kind", None) == "view" and not lowerable & set(node.users):
            lowerable.discard(node)  # free eagerly; lowered, a copy kernel for eager readers
    return lowerable


def has_fallbacks(graph: Graph) -> bool:
    """Whether some live op of `graph` has to run eagerly."""
    live = [n for n in graph.nodes if n.op == "call_function" and n.users]
    return len(lowerable_nodes(graph)) < len(live)


def compile_with_fallbacks(graph: Graph, compile_graph: CompileGraph) -> FallbackProgram:
    """Cut `graph` into eager fallback steps and compiled segments; the program runs them."""
    lowerable = lowerable_nodes(graph)
    segment_of, after_segment = _place(graph, lowerable)
    groups: dict[int, list[Node]] = {}
    for node in graph.nodes:
        if node in segment_of:
            groups.setdefault(segment_of[node], []).append(node)

    # steps in order: segment k, then the fallbacks that run after it (-1: before segment 0)
    keyed: list[tuple[tuple[int, int, int], Step]] = []
    for k, nodes in groups.items():
        keyed.append(((k, 0, 0), _compile_segment(nodes, compile_graph, f"part{k}")))
    for position, node in enumerate(graph.nodes):
        if node in after_segment:
            keyed.append(((after_segment[node], 1, position), EagerStep(node)))
    steps = [step for _, step in sorted(keyed, key=lambda item: item[0])]
    if _logging.enabled("loop_ir"):
        plan = "\n".join(str(step) for step in steps)
        _logging.artifact("loop_ir", f"{len(steps)} step(s) with fallback kernels", plan, 0.0)
    return FallbackProgram(graph, steps)


def _place(graph: Graph, lowerable: set[Node]) -> tuple[dict[Node, int], dict[Node, int]]:
    """Each lowerable node's segment, and for each eager node the segment it runs after."""
    earliest: dict[Node, int] = {}
    after: dict[Node, int] = {}
    for node in graph.nodes:
        if node.op != "call_function" or not node.users:
            continue
        from_segments = [earliest[i] for i in node.all_input_nodes if i in earliest]
        from_eager = [after[i] for i in node.all_input_nodes if i in after]
        if node in lowerable:  # in a segment after the fallbacks it reads
            earliest[node] = max(from_segments + [k + 1 for k in from_eager], default=0)
        else:  # after the segments (and fallbacks) it reads
            after[node] = max(from_segments + from_eager, default=-1)
    last = max(earliest.values(), default=0)
    latest: dict[Node, int] = {}
    for node in reversed(graph.nodes):  # as late as every user allows
        if node in earliest:
            latest[node] = min(
                latest[u] if u in latest else after[u] if u in after else last for u in node.users
            )
    return latest, after


def _has_lowering(node: Node) -> bool:
    """Whether the op has a lowering and every tensor it touches has a known shape."""
    name = getattr(node.target, "name", None)
    return name in LOWERINGS and all(
        isinstance(n.meta.get("val"), Tensor) for n in (node, *node.all_input_nodes)
    )


class Step:
    """One step of a FallbackProgram: reads values from `env` and adds its results."""

    def run(self, env: dict[Node, Any]) -> None:
        raise NotImplementedError


@dataclass
class EagerStep(Step):
    """A fallback kernel: the op's eager implementation on the values of its inputs."""

    node: Node

    def run(self, env: dict[Node, Any]) -> None:
        args = map_arg(self.node.args, env.__getitem__)
        kwargs = map_arg(self.node.kwargs, env.__getitem__)
        env[self.node] = self.node.target(*args, **kwargs)

    def __str__(self) -> str:
        named = map_arg((self.node.args, self.node.kwargs), lambda n: n.name)
        args = [str(a) for a in named[0]] + [f"{k}={v}" for k, v in named[1].items()]
        return f"eager:    {self.node.name} = {self.node.target!r}({', '.join(args)})"


@dataclass
class CompiledStep(Step):
    """A segment of lowerable nodes, compiled as a graph from `inputs` to `outputs`."""

    name: str  # 'part0', 'part1', ...
    inputs: list[Node]
    outputs: list[Node]
    compiled: Callable

    def run(self, env: dict[Node, Any]) -> None:
        results = self.compiled(*(env[node] for node in self.inputs))
        env.update(zip(self.outputs, results, strict=True))

    def __str__(self) -> str:
        outputs = ", ".join(node.name for node in self.outputs)
        inputs = ", ".join(node.name for node in self.inputs)
        kernels = len(self.compiled.kernels)
        return f"compiled: {outputs} = {self.name}({inputs})  # {kernels} fused kernel(s)"


def _compile_segment(nodes: list[Node], compile_graph: CompileGraph, name: str) -> CompiledStep:
    """A graph of `nodes` alone: what they read from outside becomes placeholders, and what is
    read after them (by a later step or the graph's output) becomes its outputs."""
    inside = set(nodes)
    graph = Graph()
    env: dict[Node, Node] = {}
    inputs: list[Node] = []

    def read(node: Node) -> Node:
        if node not in env:  # from outside the segment: a placeholder
            env[node] = graph.placeholder(node.name)
            val = node.meta["val"]
            if node.op != "placeholder":  # an eager result: compile for a fresh contiguous one
                val = make_fake(TensorMeta(tuple(val.shape), val.dtype))
            env[node].meta["val"] = val
            inputs.append(node)
        return env[node]

    for node in nodes:
        env[node] = graph.node_copy(node, read)
    outputs = [node for node in nodes if not set(node.users) <= inside]
    graph.output(tuple(env[node] for node in outputs))
    return CompiledStep(name, inputs, outputs, compile_graph(graph, name))


class FallbackProgram:
    """Runs the steps in order over an environment of values, then returns the graph's outputs."""

    def __init__(self, graph: Graph, steps: list[Step]) -> None:
        self.placeholders = [node for node in graph.nodes if node.op == "placeholder"]
        self.results = graph.nodes[-1].args[0]
        self.steps = steps
        self.kernels = [k for s in steps if isinstance(s, CompiledStep) for k in s.compiled.kernels]

    def __call__(self, *inputs: Tensor) -> tuple:
        env: dict[Node, Any] = dict(zip(self.placeholders, inputs, strict=True))
        for step in self.steps:
            step.run(env)
        results = map_arg(self.results, env.__getitem__)
        return tuple(results) if isinstance(results, (tuple, list)) else (results,)
