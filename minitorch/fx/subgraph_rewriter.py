"""`minitorch.fx.subgraph_rewriter`, as in torch.fx (implemented in tracer/fx/)."""

from tracer.fx.subgraph_rewriter import Match, replace_pattern

__all__ = ["Match", "replace_pattern"]
