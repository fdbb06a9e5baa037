"""Constant folding: compute now, once, what depends only on parameters and constants.

    >>> class Scale(nn.Module):      # forward(self, x): return x * self.w.exp()
    >>> print(fold_constants(symbolic_trace(Scale())).code)
    def forward(self, x):
        _folded_constant0 = self._folded_constant0
        mul = x * _folded_constant0;  x = _folded_constant0 = None
        return mul

A node is constant when it is a pure call (not random, not a module: [Note: what CSE may
merge] in cse.py) and every node it reads is a get_attr (a parameter, a buffer, a tensor
constant) or constant itself. The constants that the rest of the graph reads are evaluated
here, stored on the result as buffers `_folded_constant0`, `_folded_constant1`, ..., and read
back with get_attr; the nodes that computed them are erased.

[Note: folded constants are snapshots]
A folded value is computed from the parameters as they are when the pass runs, without
autograd. Afterwards, training, `load_state_dict` or an in-place write to those parameters no
longer reaches it, and no gradient flows back to them through it: folding is for inference,
and a changed model is folded again. For the same reason a graph that may write a tensor in
place (a training-mode BatchNorm, `x.add_(1)`) is not folded at all: a write between the fold
and a run could change a parameter that a folded value was computed from.
"""

from __future__ import annotations

import copy

from minitorch.autograd import no_grad
from minitorch.nn.module import Module
from minitorch.tensor import Tensor
from tracer.fx.graph import is_random
from tracer.fx.graph_module import GraphModule
from tracer.fx.interpreter import Interpreter
from tracer.fx.node import Node
from tracer.fx.passes.cse import may_write
from tracer.fx.symbolic_trace import symbolic_trace


def fold_constants(gm: Module) -> GraphModule:
    """A new GraphModule whose parameter-only subgraphs are precomputed attributes.

    `gm` itself is left as it was; a plain Module is traced with symbolic_trace first.
    """
    gm = gm if isinstance(gm, GraphModule) else symbolic_trace(gm)
    graph = copy.deepcopy(gm.graph)
    modules = dict(gm.named_modules())
    if any(may_write(node, modules) for node in graph.nodes):
        return GraphModule(gm, graph, gm._class_name)  # see [Note: folded constants are ...]

    constant = _constant_nodes(graph)
    runner = Interpreter(gm)  # evaluates our copy's nodes: it resolves targets on gm
    with no_grad():
        for node in constant:
            runner.env[node] = runner.run_node(node)
    # Only tensors become attributes; a constant Python value (`w.shape`) stays a node.
    folded = {n: None for n in constant if n.op != "get_attr" and isinstance(runner.env[n], Tensor)}

    staging = GraphModule(gm, graph, gm._class_name)  # holds what the new get_attrs read
    count = 0
    for node in folded:
        if all(user in folded for user in node.users):
            continue  # read only by other folded nodes: it is not needed at run time
        while hasattr(staging, f"_folded_constant{count}"):
            count += 1
        name = f"_folded_constant{count}"
        staging.register_buffer(name, runner.env[node])
        with graph.inserting_before(node):
            node.replace_all_uses_with(graph.get_attr(name))
    for node in reversed(graph.nodes):
        if node in constant and not node.users:
            graph.erase_node(node)  # pure, so unused means removable
    return GraphModule(staging, graph, gm._class_name)  # copies only what the graph reads


def _constant_nodes(graph) -> dict[Node, None]:
    """get_attr nodes, and pure calls that read only constant nodes, in program order."""
    constant: dict[Node, None] = {}
    for node in graph.nodes:
        if node.op == "get_attr":
            constant[node] = None
        elif (
            node.op in ("call_function", "call_method")
            and not is_random(node)
            and all(inp in constant for inp in node.all_input_nodes)
        ):
            constant[node] = None
    return constant
