"""`minitorch.fx.passes`, as `torch.fx.passes` (implemented in tracer/fx/passes/)."""

from minitorch.fx.passes import graph_drawer, shape_prop

__all__ = ["graph_drawer", "shape_prop"]
