"""Split a graph into compiled segments and extern steps: ops that do not lower still compile.

    steps = split_graph(graph, dtypes={"float32", "float64", "bool"})
    # [Segment part0: add, le, where, sin]   or   [ExternStep mm, Segment part0, ...]

[Note: extern kernels]
The loop-level IR lowers pointwise ops, reductions and views (ir/lowering.py LOWERINGS); mm,
gather, cat and the rest run as *extern kernels*: the op's eager implementation, called from the
compiled program between compiled segments, as Inductor's `make_fallback` does. One op that does
not lower never sends the whole graph back to eager mode. We cut at the level of the fx graph
into *steps* run in order over one environment of values:

    permute(w) -> mm(x, permute) -> add(mm, b) -> le, where (relu) -> sin
    step 0  extern   permute, mm            the op table's numpy kernels, as eager mode runs them
    step 1  segment  add, le, where, sin    a graph of its own through lower/schedule/codegen:
                                            one fused kernel

- A call_function node is *lowered* when its op has a lowering that accepts this call
  (`extern_reason` asks the lowering: pow with a tensor exponent answers Extern) and every
  tensor it reads and makes has a dtype the code generator compiles; any other node runs as an
  extern kernel, `node.target(*args)`.
- In a graph with extern steps, a view (permute, expand, reshape) that no lowered op reads runs
  as an extern step too: eagerly it is free (numpy strides); lowered, it would be a copy kernel.
  A graph whose ops all lower is one segment.
- Lowered nodes are grouped into *segments*, each compiled as one graph. A segment must come
  after every extern step it reads, and an extern step after every segment it reads. We number
  segments as early as that allows, which fixes where each extern step runs, then move each
  lowered node to the latest segment its users allow, so it lands in the segment of the ops
  that read it and fuses with them instead of being stored by one segment and loaded by the next.

[Note: transposed products]
A Linear layer's weight gradient comes out of AOT autograd as the transpose of a product,
`permute(mm(x^T, g), (1, 0))`: a transposed *view* of mm's output, column-major. Nothing is
wrong with its values, but everything that reads it row by row pays: SGD's update of a
256 x 784 weight runs ~7x slower on a column-major gradient. Before splitting, we rewrite
each such pair with (A B)^T = B^T A^T:

    permute(mm(a, b), (1, 0))   ->   mm(permute(b, (1, 0)), permute(a, (1, 0)))

so that BLAS writes the transposed product straight into row-major memory. The permutes on the
right are free (BLAS reads a transposed operand by its strides, with no copy), and a permute
of a permute is the node it started from: a product reading `permute(permute(w))` (the
backward of `x @ w.T @ ...` reads the forward's `w.T` transposed again) reads `w`. The
rewrite only fires when the permute is the product's only reader, so nothing can tell a view
from a copy, and it gives the layout PyTorch gives such a gradient (its `.grad` is row-major
like the weight). It builds a new graph (Inductor's post-grad passes edit theirs in place):
the traced graph stays as traced, for what is made of it later (a backward without some
tangents, the compiled-graph cache's key), and lowering changes nothing it is given.

Why at the graph level, and not an ExternKernel node in the loop IR as Inductor has: the
scheduler, memory planner, backends and interpreter all stay about loops, and a segment is an
ordinary graph for the same passes. A value that crosses an extern step is stored either way
(the eager op reads memory); what we give up is fusing loops across a segment boundary.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from minitorch import ops
from minitorch.dtype import DType, result_type
from minitorch.fake import FakeTensorMode, make_fake
from minitorch.ops.registry import OpDef, TensorMeta
from tracer.fx import Graph
from tracer.fx.node import Node, map_arg


@dataclass
class ExternStep:
    """An extern kernel: the op's eager implementation on the values of its inputs."""

    node: Node
    reason: str  # why it does not lower: "minitorch.ops.mm has no lowering"
    kernel: Callable[..., Any] | None = None  # the backend's own, run in place of the op's

    def run(self, env: dict[Node, Any]) -> None:
        args = map_arg(self.node.args, env.__getitem__)
        kwargs = map_arg(self.node.kwargs, env.__getitem__)
        env[self.node] = (self.kernel or self.node.target)(*args, **kwargs)

    def __str__(self) -> str:
        named = map_arg((self.node.args, self.node.kwargs), lambda n: n.name)
        args = [str(a) for a in named[0]] + [f"{k}={v}" for k, v in named[1].items()]
        call = f"{self.node.name} = {self.node.target!r}({', '.join(args)})"
        return f"extern:   {call}  # {self.reason}"


@dataclass
class Segment:
    """Lowered nodes as a graph of their own, from `inputs` to `outputs` (nodes of the whole
    graph: what the segment reads from outside, and what is read after it)."""

    name: str  # 'part0', 'part1', ...; the whole graph's name when it is the only step
    graph: Graph
    inputs: list[Node]
    outputs: list[Node] = field(default_factory=list)

    def __str__(self) -> str:
        outputs = ", ".join(node.name for node in self.outputs)
        inputs = ", ".join(node.name for node in self.inputs)
        return f"segment:  {outputs} = {self.name}({inputs})"


Step = Segment | ExternStep


def split_graph(graph: Graph, dtypes: Collection[str]) -> list[Step]:
    """The steps that run `graph`, in order ([Note: extern kernels]); `dtypes` are the element
    types the code generator compiles. The driver rewrites the transposed products first
    (`transpose_products`, [Note: transposed products]). `graph` is not changed."""
    live = [n for n in graph.nodes if _runs(n)]
    externs = _extern_nodes(live, dtypes)
    if not externs:
        return [_segment(graph.nodes, "graph")]
    segment_of, after_segment = _place(graph, {node for node in live if node not in externs})
    groups: dict[int, list[Node]] = {}
    for node in graph.nodes:
        if node in segment_of:
            groups.setdefault(segment_of[node], []).append(node)

    # steps in order: segment k, then the extern steps that run after it (-1: before segment 0)
    keyed: list[tuple[tuple[int, int, int], Step]] = []
    for k, nodes in groups.items():
        keyed.append(((k, 0, 0), _segment(nodes, f"part{k}")))
    for position, node in enumerate(graph.nodes):
        if node in after_segment:
            keyed.append(((after_segment[node], 1, position), ExternStep(node, externs[node])))
    return [step for _, step in sorted(keyed, key=lambda item: item[0])]


def transpose_products(graph: Graph) -> Graph:
    """permute(mm(a, b), (1, 0)) -> mm(b^T, a^T) where the permute is mm's only reader, and
    mm((x^T)^T, ...) -> mm(x, ...) ([Note: transposed products]), in a new graph: `graph`
    itself where there is nothing to rewrite, and `graph` stays as it was either way."""
    if not any(_rewrites(node) for node in graph.nodes):
        return graph
    graph = copy.deepcopy(graph)  # new nodes, the same names, targets and meta values
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is ops.mm:
            _fold_double_transposes(graph, node)
        product = node.args[0] if _is_transpose(node) else None
        if not (
            isinstance(product, Node) and product.target is ops.mm and list(product.users) == [node]
        ):
            continue
        a, b = product.args
        with graph.inserting_before(node):
            swapped = graph.call_function(ops.mm, (_transposed(graph, b), _transposed(graph, a)))
        with FakeTensorMode():
            swapped.meta["val"] = ops.mm(*(n.meta["val"] for n in swapped.args))
        node.replace_all_uses_with(swapped)
        graph.erase_node(node)
        graph.erase_node(product)
        for operand in (a, b):  # a transpose that _transposed folded away
            _erase_unused_transposes(graph, operand)
    return graph


def _rewrites(node: Node) -> bool:
    """Whether `transpose_products` rewrites `node`: a product that reads a double
    transpose, or the transpose that is a product's only reader."""
    if node.op != "call_function":
        return False
    if node.target is ops.mm:
        return any(_is_transpose(a) and _is_transpose(a.args[0]) for a in node.args)
    product = node.args[0] if _is_transpose(node) else None
    return isinstance(product, Node) and product.target is ops.mm and list(product.users) == [node]


def _fold_double_transposes(graph: Graph, product: Node) -> None:
    """Let `product` read x where it reads permute(permute(x)) (values alike, strides aside,
    and BLAS reads either)."""
    for operand in product.args:
        if _is_transpose(operand) and _is_transpose(operand.args[0]):
            product.replace_input_with(operand, operand.args[0].args[0])
            _erase_unused_transposes(graph, operand)


def _erase_unused_transposes(graph: Graph, node: Node) -> None:
    """Erase `node`, and the transpose it reads, while they are transposes nobody reads."""
    while _is_transpose(node) and not node.users:
        inner = node.args[0]
        graph.erase_node(node)
        node = inner


def _is_transpose(node: Node) -> bool:
    """Whether `node` is permute(x, (1, 0)) of a matrix."""
    return (
        node.op == "call_function" and node.target is ops.permute and tuple(node.args[1]) == (1, 0)
    )


def _transposed(graph: Graph, node: Node) -> Node:
    """A node for node^T: what it transposes, if it is a transpose itself."""
    if _is_transpose(node):
        return node.args[0]
    transposed = graph.call_function(ops.permute, (node, (1, 0)))
    with FakeTensorMode():
        transposed.meta["val"] = ops.permute(node.meta["val"], (1, 0))
    return transposed


def _extern_nodes(live: list[Node], dtypes: Collection[str]) -> dict[Node, str]:
    """Those of the `live` call_function nodes that run as extern kernels, with their reasons."""
    # NOTE: imported here, so that importing ExternStep does not import the lowering, which a
    # process whose graphs all come from the disk never runs
    from ir.lowering import extern_reason

    externs: dict[Node, str] = {}
    for node in live:
        reason = extern_reason(node)
        if reason is None:
            unsupported = {
                dtype.name for dtype in _dtypes_computed_in(node) if dtype.name not in dtypes
            }
            if unsupported:
                reason = f"the code generator does not compile {', '.join(sorted(unsupported))}"
        if reason is not None:
            externs[node] = reason
    if not externs:
        return externs
    for node in reversed(live):  # users first: a view's placement depends on them
        if node not in externs and node.target.kind == "view":
            if all(user in externs or user.op == "output" for user in node.users):
                externs[node] = "a view only extern steps read: free eagerly"
    return externs


def _dtypes_computed_in(node: Node) -> list[DType]:
    """The dtypes a kernel for `node` holds: its result's and its tensors', and the dtype a
    Python number is promoted to with them (`mask > 0` compares a bool mask in int64)."""
    values = [n.meta["val"] for n in (node, *node.all_input_nodes)]
    numbers = [a for a in node.args if isinstance(a, (bool, int, float))]
    if not numbers or node.target.kind != "pointwise":
        return [v.dtype for v in values]
    return [v.dtype for v in values] + [result_type(*values[1:], *numbers)]


def _place(graph: Graph, lowered: set[Node]) -> tuple[dict[Node, int], dict[Node, int]]:
    """Each lowered node's segment, and for each extern node the segment it runs after."""
    earliest: dict[Node, int] = {}
    after: dict[Node, int] = {}
    draws: list[Node] = []  # the random extern steps so far, in graph order
    for node in graph.nodes:
        if not _runs(node):
            continue
        from_segments = [earliest[i] for i in node.all_input_nodes if i in earliest]
        from_extern = [after[i] for i in node.all_input_nodes if i in after]
        if node in lowered:  # in a segment after the extern steps it reads
            earliest[node] = max(from_segments + [k + 1 for k in from_extern], default=0)
        else:  # after the segments (and extern steps) it reads
            after[node] = max(from_segments + from_extern, default=-1)
            if node.target.kind == "random":  # draws share the generator: keep their order
                after[node] = max([after[node], *(after[n] for n in draws[-1:])])
                draws.append(node)
    last = max(earliest.values(), default=0)
    latest: dict[Node, int] = {}
    for node in reversed(graph.nodes):  # as late as every user allows
        if node in earliest:
            latest[node] = min(
                latest[u] if u in latest else after[u] if u in after else last for u in node.users
            )
    return latest, after


def _runs(node: Node) -> bool:
    """Whether a step runs `node`: an op something reads, or a draw from the generator, which
    runs even unread, as in eager: the draws after it (a later dropout's mask) are eager's."""
    if node.op != "call_function":
        return False
    return bool(node.users) or (isinstance(node.target, OpDef) and node.target.kind == "random")


def _segment(nodes: list[Node], name: str) -> Segment:
    """A graph of the call_function `nodes` alone: what they read from outside becomes
    placeholders, and what is read after them (a later step, the graph's output) its outputs."""
    inside = {node for node in nodes if node.op == "call_function" and node.users}
    graph = Graph()
    env: dict[Node, Node] = {}
    segment = Segment(name, graph, [])

    def read(node: Node) -> Node:
        if node not in env:  # from outside the segment: a placeholder
            env[node] = graph.placeholder(node.name)
            val = node.meta["val"]
            if node.op != "placeholder":  # an extern result: compile for a fresh contiguous one
                val = make_fake(TensorMeta(tuple(val.shape), val.dtype))
            env[node].meta["val"] = val
            segment.inputs.append(node)
        return env[node]

    for node in nodes:
        if node in inside:
            env[node] = graph.node_copy(node, read)
    segment.outputs = [node for node in nodes if node in inside and not set(node.users) <= inside]
    graph.output(tuple(env[node] for node in segment.outputs))
    return segment
