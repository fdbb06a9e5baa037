"""Utilities over modules: `fusion` (folding BatchNorm into the convolution before it)."""

from minitorch.nn.utils import fusion

__all__ = ["fusion"]
