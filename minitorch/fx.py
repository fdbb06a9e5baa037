"""`minitorch.fx`, as `torch.fx`: symbolic tracing and the graph toolkit (implemented in tracer.fx).

    gm = minitorch.fx.symbolic_trace(module)
    print(gm.graph); print(gm.code)
"""

from tracer.fx import (
    Graph,
    GraphModule,
    Interpreter,
    Node,
    Proxy,
    TraceError,
    Tracer,
    map_arg,
    symbolic_trace,
)

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "Proxy", "TraceError", "Tracer",
           "map_arg", "symbolic_trace"]
