"""nn.utils.fusion.fuse_conv_bn_eval: one convolution that computes conv followed by bn."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import MinitorchError, nn
from minitorch.nn.utils.fusion import fuse_conv_bn_eval


def _trained_pair(bias: bool):
    minitorch.manual_seed(0)
    conv = nn.Conv2d(3, 4, 3, padding=1, bias=bias).double()
    bn = nn.BatchNorm2d(4).double()
    for _ in range(3):  # give the running statistics non-trivial values
        bn(conv(minitorch.randn(2, 3, 5, 5, dtype=minitorch.float64) * 2 + 1))
    nn.init.uniform_(bn.weight, 0.5, 2.0)
    nn.init.uniform_(bn.bias, -1.0, 1.0)
    return conv.eval(), bn.eval()


@pytest.mark.parametrize("bias", [True, False])
def test_fused_conv_equals_conv_then_bn(bias):
    conv, bn = _trained_pair(bias)
    fused = fuse_conv_bn_eval(conv, bn)
    x = minitorch.randn(2, 3, 5, 5, dtype=minitorch.float64)
    np.testing.assert_allclose(
        fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-10, atol=1e-12
    )
    assert fused is not conv and fused.bias is not None
    assert isinstance(fused.weight, nn.Parameter) and fused.weight.requires_grad
    # the originals are untouched
    assert (conv.bias is None) == (not bias)


def test_fusion_refuses_training_mode():
    conv, bn = nn.Conv2d(1, 1, 1), nn.BatchNorm2d(1)
    with pytest.raises(MinitorchError, match="Fusion only for eval!"):
        fuse_conv_bn_eval(conv, bn)
