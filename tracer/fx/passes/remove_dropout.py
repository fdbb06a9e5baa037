"""Dropout removal: take every dropout out of a graph that will only run inference.

    >>> model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.ReLU())
    >>> print(remove_dropout(symbolic_trace(model)).code)
    def forward(self, input_1):
        _0 = getattr(self, '0')(input_1);  input_1 = None
        _2 = getattr(self, '2')(_0);  _0 = None
        return _2

In eval mode dropout is the identity, so its node only costs a call: each `nn.Dropout` layer
(a call_module node) and each `F.dropout(x, ...)` call is dropped and its users read `x`
instead. The result computes the eval-mode function in either mode: it no longer drops
anything while training.

Works on symbolic_trace graphs. jit.trace records no dropout for an eval-mode model (eval
dropout returns its input without running an op), so trace in eval mode instead; a
training-mode trace holds the random mask it drew (`dropout_mask`, `mul`), left as it is.
"""

from __future__ import annotations

import copy

from minitorch.nn import functional as F
from minitorch.nn.dropout import Dropout
from minitorch.nn.module import Module
from tracer.fx.graph_module import GraphModule
from tracer.fx.node import Node
from tracer.fx.symbolic_trace import symbolic_trace


def remove_dropout(gm: Module) -> GraphModule:
    """A new GraphModule without dropout nodes; `gm` itself is left as it was.

    A plain Module is traced with symbolic_trace first.
    """
    gm = gm if isinstance(gm, GraphModule) else symbolic_trace(gm)
    graph = copy.deepcopy(gm.graph)
    modules = dict(gm.named_modules())
    for node in graph.nodes:
        if not _is_dropout(node, modules):
            continue
        source = node.args[0] if node.args else node.kwargs.get("input")
        if not isinstance(source, Node):
            continue  # dropout of a constant: nothing reads a node we could pass on instead
        node.replace_all_uses_with(source)
        graph.erase_node(node)
    return GraphModule(gm, graph, gm._class_name)


def _is_dropout(node: Node, modules: dict[str, Module]) -> bool:
    if node.op == "call_module":
        return isinstance(modules[node.target], Dropout)
    return node.op == "call_function" and node.target is F.dropout
