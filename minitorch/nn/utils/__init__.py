"""Utilities over modules: `fusion` (folding BatchNorm into the convolution before it) and
gradient clipping (`clip_grad_norm_`, `clip_grad_value_`)."""

from minitorch.nn.utils import fusion
from minitorch.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm_", "clip_grad_value_", "fusion"]
