"""A torch.fx-like graph IR: Graph, Node, GraphModule, Interpreter, and symbolic tracing.

Rewriting tools live beside it: `Transformer` (transformer.py), `subgraph_rewriter`, and the
passes in `passes/` (imported by their own paths, as in torch.fx).
"""

from tracer.fx.graph import Graph, GraphLintError
from tracer.fx.graph_module import GraphModule, lint_after
from tracer.fx.interpreter import Interpreter
from tracer.fx.node import Node, map_arg
from tracer.fx.proxy import GraphAppendingTracer, Proxy, TraceError
from tracer.fx.symbolic_trace import Tracer, symbolic_trace
from tracer.fx.transformer import Transformer
from tracer.fx.wrap import wrap

__all__ = [
    "Graph",
    "GraphAppendingTracer",
    "GraphLintError",
    "GraphModule",
    "Interpreter",
    "Node",
    "Proxy",
    "TraceError",
    "Tracer",
    "Transformer",
    "map_arg",
    "lint_after",
    "symbolic_trace",
    "wrap",
]
