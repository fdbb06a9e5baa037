"""Outputs that are views: taken out of the graph and remade after it, so eager's aliasing holds.

[Note: output aliasing]
A traced graph is pure: whatever it returns is a new tensor. Eager code is not: `x.t()` is a
view sharing `x`'s memory, and a write into it reaches `x`. A compiled function that returned
the graph's own transpose (a copy, for Inductor) would give the right values and the wrong
memory: the caller's next `out.add_(1)` would no longer reach `x`. AOTAutograd's answer, and
ours: an output that is a chain of view ops from an input, or from another output, is taken out
of the graph, and the chain is replayed eagerly on the real tensors after the graph has run:

    def f(x):                 the graph returns          after it, the caller gets
        y = x * 2                 (mul,)                     out0 = mul
        return y, y.t(), x[0]                                out1 = ops.permute(out0, (1, 0))
                                                             out2 = ops.index(x, (0,))

Outputs that are views of one intermediate the function does not return (`y = x * 2;
return y[0], y[1:]`) share memory in eager too, so the graph returns that intermediate (their
*base*) instead, and both are replayed from it. A lone view of an intermediate stays in the
graph: nothing else can see its memory. A chain stops at the nearest other output it passes:
`flat = y.flatten(); return flat, flat[0]` remakes `flat[0]` from `flat`, which may be a copy.
What the graph must return instead is traced again (`OutputAliases.computing`), from the
user's function, so that what the first trace read without an op (`x.detach()`) stays as it
was; such outputs are remade as `detach()` of what they read.

The replay runs the view ops of the op table under the caller's grad mode, so autograd sees
what eager sees: a view of an input that requires grad gets the view's backward, the view's
`_base` is the input, and a write into it is an in-place write into a view (CopySlices).
Mutations need no such step here: capture records an in-place op on an input as its
out-of-place op and copies the result back after the graph (tracer/dynamo/side_effects.py).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from minitorch import ops
from minitorch.device import module_of
from minitorch.dispatch import current_mode
from minitorch.tensor import Tensor
from tracer.fx import GraphModule, Node
from tracer.fx.node import map_arg

# (op, arguments after the viewed tensor, kwargs): one step of a chain of views
ViewStep = tuple[object, tuple, dict]


@dataclass(frozen=True)
class RemadeOutput:
    """How to get one of the user's outputs: views of an input, of one of the graph's outputs,
    or of another of the user's outputs (`y.flatten()` and its row: the row is a view of the
    flattened tensor, which may be a copy)."""

    source: str  # "input" | "graph" | "output"
    index: int  # which input, graph output or user output
    views: tuple[ViewStep, ...] = ()  # () for the tensor itself
    detached: bool = False  # x.detach() of the input: its memory, not its autograd history

    def get(self, base: Tensor) -> Tensor:
        if self.detached:
            base = base.detach()
        if not self.views:
            return base
        out = replay(base, self.views)
        # As eager marks views (functional/views.py): reshape copies when the strides do not
        # allow a view; every other view op makes a view, an empty one too.
        copies = any(op is ops.reshape for op, _, _ in self.views)
        if not copies or module_of(base._data).may_share_memory(out._data, base._data):
            out._make_view_of(base, lambda t: replay(t, self.views))
        return out


@dataclass(frozen=True)
class OutputAliases:
    """Every output of the user's function, each remade from the inputs or the graph's outputs;
    and what the graph returns instead: `returned[k] = (i, up)`, the tensor `up` view steps
    above the user's output i (0: output i itself, kept; more: the base it is a view of)."""

    outputs: tuple[RemadeOutput, ...]
    returned: tuple[tuple[int, int], ...]

    def remake(self, inputs: Sequence[Tensor], graph_outputs: Sequence[Tensor]) -> tuple:
        made: dict[int, Tensor] = {}

        def output(i: int) -> Tensor:  # an output, after the one it is a view of
            if i not in made:
                how = self.outputs[i]
                base = (
                    inputs[how.index]
                    if how.source == "input"
                    else graph_outputs[how.index]
                    if how.source == "graph"
                    else output(how.index)
                )
                made[i] = how.get(base)
            return made[i]

        return tuple(output(i) for i in range(len(self.outputs)))

    def around(self, run: Callable[..., Sequence[Tensor]]) -> Callable[..., tuple]:
        """`run` (the compiled graph), then the user's outputs remade from its."""
        return lambda *inputs: self.remake(inputs, run(*inputs))

    def computing(self, flat: Callable[..., tuple]) -> Callable[..., tuple]:
        """The function to trace again: `flat`, returning `returned`. It runs under the tracer
        (make_fx.py), whose nodes lead from an output up its views to the base."""

        def graph_outputs(*args) -> tuple:
            outs, tracer = flat(*args), current_mode()
            found = []
            for i, up in self.returned:
                node = tracer.to_node(outs[i])
                for _ in range(up):
                    node = node.args[0]
                found.append(node.meta["val"])
            return tuple(found)

        graph_outputs.__wrapped__ = flat
        return graph_outputs


def replay(base: Tensor, views: tuple[ViewStep, ...]) -> Tensor:
    """The same views, made by the eager ops, of `base`."""
    for op, args, kwargs in views:
        base = op(base, *args, **kwargs)
    return base


def find_output_aliases(
    gm: GraphModule, num_outputs: int | None, seen: Sequence[tuple[bool, bool]] = ()
) -> OutputAliases | None:
    """The aliasing of the first `num_outputs` outputs of `gm` (a traced forward graph; None:
    all, for an inference graph), or None when each is a fresh tensor of its own.

    `x.detach()` records no node (make_fx.py): it reads as x. `seen[i]` says whether output i
    was an input itself and whether it required grad while traced; an output read as an
    input without being it, or without the requires_grad of the tensor it reads as, was made
    from `x.detach()`."""
    graph_outputs = list(gm.graph.find_nodes(op="output")[0].args[0][:num_outputs])
    first_output = {}  # a node -> the first user output it is
    for i, node in enumerate(graph_outputs):
        first_output.setdefault(node, i)
    chains = [_view_chain(node, first_output) for node in graph_outputs]
    sharing: dict[Node, int] = {}  # an intermediate root -> how many outputs view it
    for root, views in chains:
        if views and root.op != "placeholder" and root not in first_output:
            sharing[root] = sharing.get(root, 0) + 1
    returned: dict[Node, tuple[int, int]] = {}  # what the graph returns instead (see above)

    def graph_index(node: Node, i: int, up: int) -> int:
        returned.setdefault(node, (i, up))
        return list(returned).index(node)

    placeholders = gm.graph.find_nodes(op="placeholder")
    remade = []
    for i, (node, (root, views)) in enumerate(zip(graph_outputs, chains)):
        was_input, requires_grad = seen[i] if i < len(seen) else (True, None)
        detached = requires_grad is False and root.meta["val"].requires_grad
        if root.op == "placeholder":
            detached = detached or (not views and not was_input)
            remade.append(RemadeOutput("input", placeholders.index(root), views, detached))
        elif views and root in first_output:
            remade.append(RemadeOutput("output", first_output[root], views, detached))
        elif views and sharing[root] > 1:
            remade.append(RemadeOutput("graph", graph_index(root, i, len(views)), views, detached))
        else:
            remade.append(RemadeOutput("graph", graph_index(node, i, 0), (), detached))
    if list(returned) == graph_outputs and not any(r.detached for r in remade):
        return None  # each output is a fresh tensor of its own
    return OutputAliases(tuple(remade), tuple(returned.values()))


def saved_aliases(forward: GraphModule, num_outputs: int) -> tuple[tuple[int, ...], ...]:
    """For each value `forward` saves for the backward (its outputs after the first
    `num_outputs`), the user's outputs that share its memory in eager: views of it, or of
    what it is a view of. `v, i = x.max(dim=1)` returns `i`, a view of the indices max's
    backward reads; a write into `i` must fail the backward's version check, as in eager,
    however the compiled graph laid the two out (CompiledFunction shares their counters)."""
    outputs = list(forward.graph.find_nodes(op="output")[0].args[0])
    user, saved = outputs[:num_outputs], outputs[num_outputs:]
    roots = [_view_chain(n)[0] if isinstance(n, Node) else None for n in user]
    found = []
    for node in saved:
        root = _view_chain(node)[0]
        found.append(
            ()
            if root.op == "placeholder"
            else tuple(i for i, r in enumerate(roots) if r is root and user[i] is not node)
        )
    return tuple(found)


def escaping_nodes(outputs: Sequence[Node]) -> set[Node]:
    """The outputs and the nodes they are views of: tensors the caller will see as distinct
    (or as views of distinct ones), which common-subexpression elimination may not merge."""
    found = set()
    for node in outputs:
        while isinstance(node, Node):
            found.add(node)
            if not _view_chain(node)[1]:
                break
            node = node.args[0]
    return found


def _view_chain(node: Node, stop_at: Collection[Node] = ()) -> tuple[Node, tuple[ViewStep, ...]]:
    """(root, steps): `node` is the views `steps` of `root`, which is no view, or is one of
    `stop_at` (another output: views are remade from it)."""
    steps: list[ViewStep] = []
    while (
        node.op == "call_function"
        and getattr(node.target, "kind", None) == "view"
        and not _reads_nodes(node.args[1:], node.kwargs)  # x[idx] gathers: a copy
        and not (steps and node in stop_at)
    ):
        steps.append((node.target, node.args[1:], dict(node.kwargs)))
        node = node.args[0]
    return node, tuple(reversed(steps))


def _reads_nodes(args: tuple, kwargs: dict) -> bool:
    found = []
    map_arg((args, kwargs), found.append)
    return bool(found)
