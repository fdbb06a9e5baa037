"""`minitorch.fx.passes.graph_drawer`, as in torch.fx (implemented in tracer/fx/passes/)."""

from tracer.fx.passes.graph_drawer import DotGraph, FxGraphDrawer, GraphvizError

__all__ = ["DotGraph", "FxGraphDrawer", "GraphvizError"]
