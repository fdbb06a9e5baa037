"""`minitorch.fx.node`, as torch.fx.node (implemented in tracer/fx/node.py)."""

from tracer.fx.node import Argument, Node, Target, map_arg

__all__ = ["Argument", "Node", "Target", "map_arg"]
