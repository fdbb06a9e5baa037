"""`minitorch.fx.passes.shape_prop`, as in torch.fx (implemented in tracer/fx/passes/)."""

from tracer.fx.passes.shape_prop import ShapeProp, TensorMetadata

__all__ = ["ShapeProp", "TensorMetadata"]
