"""`minitorch.fx`, as `torch.fx`: symbolic tracing and the graph toolkit (implemented in tracer.fx).

gm = minitorch.fx.symbolic_trace(module)
print(gm.graph); print(gm.code)
minitorch.fx.wrap("my_fn")                          # keep a module-level function a leaf

from minitorch.fx import subgraph_rewriter          # replace_pattern
from minitorch.fx.proxy import GraphAppendingTracer # build graphs by hand with Proxies
from minitorch.fx.passes.shape_prop import ShapeProp
from minitorch.fx.passes.graph_drawer import FxGraphDrawer
"""

from minitorch.fx import node, passes, proxy, subgraph_rewriter
from tracer.fx import (
    Graph,
    GraphModule,
    Interpreter,
    Node,
    Proxy,
    TraceError,
    Tracer,
    Transformer,
    map_arg,
    symbolic_trace,
    wrap,
)

__all__ = [
    "Graph",
    "GraphModule",
    "Interpreter",
    "Node",
    "Proxy",
    "TraceError",
    "Tracer",
    "Transformer",
    "map_arg",
    "node",
    "passes",
    "proxy",
    "subgraph_rewriter",
    "symbolic_trace",
    "wrap",
]
