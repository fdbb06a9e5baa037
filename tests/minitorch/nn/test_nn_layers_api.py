"""AdaptiveAvgPool2d, GroupNorm and LeakyReLU against numpy references written from PyTorch's
documentation, with gradients by finite differences, errors, reprs and state_dict keys."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_testing import check_gradients, t

import minitorch
from minitorch import DTypeError, ShapeError, nn

F = nn.functional
RNG = np.random.default_rng(12)


# ---- adaptive average pooling ------------------------------------------------------------


def _np_adaptive_avg_pool2d(x, out_h, out_w):
    """PyTorch's bins: output (i, j) averages rows floor(i*H/oh) .. ceil((i+1)*H/oh) - 1 and
    the same for columns, one cell at a time."""
    height, width = x.shape[-2:]
    out = np.empty((*x.shape[:-2], out_h, out_w))
    for i in range(out_h):
        rows = slice(math.floor(i * height / out_h), math.ceil((i + 1) * height / out_h))
        for j in range(out_w):
            cols = slice(math.floor(j * width / out_w), math.ceil((j + 1) * width / out_w))
            out[..., i, j] = x[..., rows, cols].mean(axis=(-2, -1))
    return out


@pytest.mark.parametrize(
    "shape, output_size, expected",
    [
        ((2, 3, 5, 7), (3, 4), (3, 4)),  # uneven bins that overlap
        ((2, 3, 6, 6), (3, 2), (3, 2)),  # even bins
        ((1, 2, 4, 4), 1, (1, 1)),  # ResNet's head: one mean per channel
        ((1, 2, 4, 5), (None, 2), (4, 2)),  # None keeps the input's size
        ((3, 7, 3), 5, (5, 5)),  # (C, H, W), and more outputs than inputs along H
    ],
)
def test_adaptive_avg_pool2d_matches_numpy(shape, output_size, expected):
    x = RNG.normal(size=shape)
    out = F.adaptive_avg_pool2d(t(x), output_size)
    np.testing.assert_allclose(out.numpy(), _np_adaptive_avg_pool2d(x, *expected), rtol=1e-12)
    assert nn.AdaptiveAvgPool2d(output_size)(t(x)).shape == (*shape[:-2], *expected)
    check_gradients(
        lambda a: F.adaptive_avg_pool2d(a, output_size),
        lambda a: _np_adaptive_avg_pool2d(a, *expected),
        [x],
    )


def test_adaptive_avg_pool2d_keeps_float32_and_refuses_bad_input():
    x = minitorch.randn(1, 2, 5, 5)
    assert F.adaptive_avg_pool2d(x, 2).dtype is minitorch.float32
    with pytest.raises(ShapeError, match="3D or 4D"):
        F.adaptive_avg_pool2d(minitorch.randn(5, 5), 2)
    with pytest.raises(ShapeError, match="output_size must be 2"):
        F.adaptive_avg_pool2d(x, (1, 2, 3))
    with pytest.raises(ShapeError, match="must be positive"):
        F.adaptive_avg_pool2d(x, (0, 2))
    assert repr(nn.AdaptiveAvgPool2d((1, 1))) == "AdaptiveAvgPool2d(output_size=(1, 1))"
    same = F.adaptive_avg_pool2d(x, (None, 5))  # the input's size: a copy, not x itself
    same.add_(1.0)
    np.testing.assert_array_equal(same.numpy(), x.numpy() + 1.0)


# ---- group norm ----------------------------------------------------------------------------


def _np_group_norm(x, groups, weight=None, bias=None, eps=1e-5):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    y = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)
    y = y.reshape(x.shape)
    per_channel = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(per_channel)
    if bias is not None:
        y = y + bias.reshape(per_channel)
    return y


@pytest.mark.parametrize(
    "shape, groups",
    [
        ((2, 6, 3, 2), 3),
        ((2, 6, 3, 2), 1),
        ((2, 6, 3, 2), 6),
        ((4, 6), 2),
        ((2, 4, 5), 2),
    ],
)
def test_group_norm_matches_numpy(shape, groups):
    x = RNG.normal(size=shape)
    w, b = RNG.normal(size=shape[1]), RNG.normal(size=shape[1])
    out = F.group_norm(t(x), groups, t(w), t(b), eps=1e-3)
    np.testing.assert_allclose(
        out.numpy(), _np_group_norm(x, groups, w, b, 1e-3), rtol=1e-10, atol=1e-12
    )
    check_gradients(
        lambda a, w, b: F.group_norm(a, groups, w, b),
        lambda a, w, b: _np_group_norm(a, groups, w, b),
        [x, w, b],
        rtol=1e-5,
        atol=1e-7,
    )


def test_group_norm_layer_parameters_and_errors():
    layer = nn.GroupNorm(2, 4)
    assert list(layer.state_dict()) == ["weight", "bias"]
    np.testing.assert_array_equal(layer.weight.detach().numpy(), np.ones(4))
    np.testing.assert_array_equal(layer.bias.detach().numpy(), np.zeros(4))
    assert repr(layer) == "GroupNorm(2, 4, eps=1e-05, affine=True)"
    bare = nn.GroupNorm(2, 4, affine=False)
    assert list(bare.state_dict()) == [] and bare.weight is None
    x = RNG.normal(size=(1, 4, 3))  # a batch of one: no statistics across the batch
    np.testing.assert_allclose(bare(t(x)).numpy(), _np_group_norm(x, 2), rtol=1e-10)
    with pytest.raises(ValueError, match="divisible by num_groups"):
        nn.GroupNorm(3, 4)
    with pytest.raises(ShapeError, match="divisible by num_groups=3"):
        F.group_norm(minitorch.randn(2, 4, 3), 3)
    with pytest.raises(ShapeError, match="weight"):
        F.group_norm(minitorch.randn(2, 4, 3), 2, weight=minitorch.ones(3))


# ---- leaky relu ----------------------------------------------------------------------------


def _np_leaky_relu(x, slope=0.01):
    return np.where(x > 0, x, slope * x)


@pytest.mark.parametrize("slope", [0.01, 0.2, -0.5])
def test_leaky_relu_matches_numpy(slope):
    x = RNG.normal(size=(3, 4))
    np.testing.assert_array_equal(F.leaky_relu(t(x), slope).numpy(), _np_leaky_relu(x, slope))
    check_gradients(lambda a: F.leaky_relu(a, slope), lambda a: _np_leaky_relu(a, slope), [x])


def test_leaky_relu_defaults_gradient_at_zero_and_repr():
    x = minitorch.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    nn.LeakyReLU()(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.01, 0.01, 1.0])  # PyTorch: slope at 0
    assert repr(nn.LeakyReLU()) == "LeakyReLU(negative_slope=0.01)"
    assert repr(nn.LeakyReLU(0.2, inplace=True)) == "LeakyReLU(negative_slope=0.2, inplace=True)"
    with pytest.raises(DTypeError, match="floating-point"):
        F.leaky_relu(minitorch.tensor([1, -1]))


def test_leaky_relu_in_place_writes_the_input_and_differentiates():
    a = RNG.normal(size=(2, 3))
    leaf = t(a, requires_grad=True)
    x = leaf * 1.0  # an intermediate, as after a layer
    out = F.leaky_relu(x, 0.1, inplace=True)
    assert out is x
    np.testing.assert_allclose(x.detach().numpy(), _np_leaky_relu(a, 0.1))
    out.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), np.where(a > 0, 1.0, 0.1))
