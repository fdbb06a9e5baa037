"""`minitorch.fx.proxy`, as torch.fx.proxy (implemented in tracer/fx/proxy.py).

tracer = GraphAppendingTracer(graph)      # record into a graph built by hand
p = Proxy(node, tracer)                   # or Proxy(node): the same tracer, made for you
(p + 1).node                              # call_function[target=operator.add]
"""

from tracer.fx.proxy import Attribute, GraphAppendingTracer, Proxy, TraceError, TracerBase

__all__ = ["Attribute", "GraphAppendingTracer", "Proxy", "TraceError", "TracerBase"]
