"""Fold an eval-mode BatchNorm into the convolution that feeds it.

In eval mode BatchNorm is an affine map per channel with fixed statistics,

    bn(y) = (y - mean) / sqrt(var + eps) * gamma + beta = y * s + (beta - mean * s),
    s = gamma / sqrt(var + eps),

and a convolution is linear in its weight, so bn(conv(x; W, b)) = conv(x; W * s, (b - mean) * s
+ beta) with s applied per output channel: one layer instead of two, the same result.
"""

from __future__ import annotations

import copy

from minitorch.autograd.grad_mode import no_grad
from minitorch.errors import MinitorchError, at_user_line
from minitorch.factories_like import ones_like, zeros_like
from minitorch.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of `conv` whose weight and bias also apply `bn` (both in eval mode)."""
    if conv.training or bn.training:
        raise MinitorchError(at_user_line("Fusion only for eval!"))
    if transpose:
        raise MinitorchError(
            at_user_line("fuse_conv_bn_eval: transposed convolutions are not supported")
        )
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def fuse_conv_bn_weights(
    conv_w, conv_b, bn_rm, bn_rv, bn_eps: float, bn_w, bn_b, transpose: bool = False
) -> tuple[Parameter, Parameter]:
    """(W * s, (b - mean) * s + beta) with s = gamma / sqrt(var + eps) per output channel."""
    requires_grad = conv_w.requires_grad
    with no_grad():
        conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
        bn_w = ones_like(bn_rm) if bn_w is None else bn_w
        bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
        scale = bn_w * (bn_rv + bn_eps) ** -0.5  # (out_channels,)
        shape = (-1,) + (1,) * (conv_w.ndim - 1)  # per output channel: (O, 1, 1, 1)
        fused_w = conv_w * scale.reshape(shape)
        fused_b = (conv_b - bn_rm) * scale + bn_b
    return (
        Parameter(fused_w.to(conv_w.dtype), requires_grad),
        Parameter(fused_b.to(conv_w.dtype), requires_grad),
    )
