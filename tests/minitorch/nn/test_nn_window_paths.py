"""The fast paths of convolution and pooling give the values and gradients of the plain ones.

Pools whose windows tile the input are views, and a max pool's gradient is a select instead of
a scatter ([Note: the max of a window] in minitorch/ops/nn.py); im2col and col2im copy and add
by strided views ([Note: convolution as im2col]). Each is checked against a numpy reference
written window by window, by finite differences in float64, and compiled against eager.
"""

from __future__ import annotations

import numpy as np
import pytest
from nn_testing import check_gradients, t, windows

import minitorch
from minitorch import autograd, nn

F = nn.functional

# (shape, kernel, stride, padding, dilation): tiling windows (the view path) and others
POOLS = [
    ((2, 3, 8, 6), (2, 2), (2, 2), (0, 0), (1, 1)),  # tiles: max_pool2d(x, 2)
    ((1, 2, 9, 6), (3, 2), (3, 2), (0, 0), (1, 1)),  # tiles, uneven kernel
    ((2, 2, 7, 7), (2, 2), (2, 2), (0, 0), (1, 1)),  # a row and a column left over: im2col
    ((1, 2, 7, 8), (3, 3), (2, 2), (1, 1), (1, 1)),  # overlapping, padded
    ((1, 1, 9, 9), (2, 3), (1, 2), (1, 0), (2, 1)),  # dilated
]


def _max_pool_reference(x, kernel, stride, padding, dilation):
    w = windows(x, kernel, stride, padding, dilation, fill=-np.inf)
    return w.max(axis=(2, 3))


def _max_pool_gradient(x, g, kernel, stride, padding, dilation):
    """g sent to the first largest element of each window, as PyTorch's max_pool2d."""
    (_, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    w = windows(x, kernel, stride, padding, dilation, fill=-np.inf)
    n, c, _, _, oh, ow = w.shape
    grad = np.zeros_like(x)
    for b, ch, r, q in np.ndindex(n, c, oh, ow):
        tap = int(np.argmax(w[b, ch, :, :, r, q].reshape(-1)))
        i, j = divmod(tap, kw)
        grad[b, ch, r * sh - ph + i * dh, q * sw - pw + j * dw] += g[b, ch, r, q]
    return grad


@pytest.mark.parametrize("geometry", POOLS)
def test_max_pool2d_values_and_gradient(geometry):
    shape, kernel, stride, padding, dilation = geometry
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=shape))  # whole numbers: windows with ties
    xt = t(x, requires_grad=True)
    out = F.max_pool2d(xt, kernel, stride, padding, dilation)
    np.testing.assert_array_equal(out.detach().numpy(), _max_pool_reference(x, *geometry[1:]))
    g = rng.normal(size=tuple(out.shape))
    (grad,) = autograd.grad(out, [xt], grad_outputs=t(g))
    np.testing.assert_array_equal(grad.numpy(), _max_pool_gradient(x, g, *geometry[1:]))


def test_max_pool2d_gradient_picks_inf_and_nan_like_argmax():
    x = np.array([[[[-np.inf, -np.inf, 1.0, np.nan], [-np.inf, -np.inf, 2.0, 3.0]]]])
    xt = t(x, requires_grad=True)
    out = F.max_pool2d(xt, 2)
    values = out.detach().numpy()
    assert values[0, 0, 0, 0] == -np.inf and np.isnan(values[0, 0, 0, 1])
    out.backward(t(np.array([[[[5.0, 7.0]]]])))
    expected = np.zeros_like(x)
    expected[0, 0, 0, 0], expected[0, 0, 0, 3] = 5.0, 7.0  # the first -inf, the NaN
    np.testing.assert_array_equal(xt.grad.numpy(), expected)


@pytest.mark.parametrize("geometry", POOLS)
def test_avg_pool2d_gradient_by_finite_differences(geometry):
    shape, kernel, stride, padding, dilation = geometry
    if dilation != (1, 1):
        pytest.skip("avg_pool2d has no dilation")
    x = np.random.default_rng(1).normal(size=shape)

    def reference(a):
        return windows(a, kernel, stride, padding).mean(axis=(2, 3))

    check_gradients(lambda a: F.avg_pool2d(a, kernel, stride, padding), reference, [x])


def test_pools_of_integers_keep_their_dtype():
    x = minitorch.tensor(np.arange(2 * 16).reshape(1, 2, 4, 4).astype(np.int32))
    out = F.max_pool2d(x, 2)
    assert out.dtype == minitorch.int32
    np.testing.assert_array_equal(out.numpy(), x.numpy().reshape(1, 2, 2, 2, 2, 2).max((3, 5)))


@pytest.mark.parametrize("geometry", POOLS)
def test_pools_compiled_equal_eager(geometry):
    shape, kernel, stride, padding, dilation = geometry
    x = np.random.default_rng(2).normal(size=shape).astype(np.float32)

    def step(a):
        y = F.max_pool2d(a, kernel, stride, padding, dilation)
        z = F.avg_pool2d(a, kernel, stride, padding) if dilation == (1, 1) else y
        return (y * y).sum() + (z * 3).sum()

    grads = []
    for fn in (step, minitorch.compile(step)):
        a = t(x, requires_grad=True)
        loss = fn(a)
        loss.backward()
        grads.append((loss.detach().numpy(), a.grad.numpy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-6)
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-6, atol=1e-6)


# (input shape, weight shape, stride, padding, dilation, groups)
CONVS = [
    ((2, 3, 6, 5), (4, 3, 3, 3), 1, 0, 1, 1),
    ((1, 2, 7, 6), (3, 2, 3, 2), 2, (1, 2), 1, 1),
    ((1, 2, 8, 8), (2, 2, 3, 3), 1, 2, 2, 1),  # dilated
    ((2, 4, 5, 5), (6, 2, 2, 3), (2, 1), 1, (1, 2), 2),  # groups
    ((2, 4, 3, 5), (6, 4, 1, 1), 1, 0, 1, 1),  # 1x1: the image is its own im2col
    ((2, 4, 5, 4), (4, 2, 1, 1), 1, 0, 2, 2),  # 1x1, dilated (no effect), groups
]


def _conv_reference(x, weight, bias, stride, padding, dilation, groups):
    pair = lambda v: (v, v) if isinstance(v, int) else v  # noqa: E731
    (kh, kw), out_c = weight.shape[2:], weight.shape[0]
    w = windows(x, (kh, kw), pair(stride), pair(padding), pair(dilation))  # (N, C, kh, kw, oh, ow)
    c_g, o_g = x.shape[1] // groups, out_c // groups
    outs = [
        np.einsum(
            "ncijyx,ocij->noyx", w[:, g * c_g : (g + 1) * c_g], weight[g * o_g : (g + 1) * o_g]
        )
        for g in range(groups)
    ]
    return np.concatenate(outs, axis=1) + bias.reshape(1, -1, 1, 1)


@pytest.mark.parametrize("geometry", CONVS)
def test_conv2d_gradients_by_finite_differences(geometry):
    shape, w_shape, stride, padding, dilation, groups = geometry
    rng = np.random.default_rng(3)
    x, weight, bias = rng.normal(size=shape), rng.normal(size=w_shape), rng.normal(size=w_shape[0])
    args = (stride, padding, dilation, groups)
    check_gradients(
        lambda a, w, b: F.conv2d(a, w, b, *args),
        lambda a, w, b: _conv_reference(a, w, b, *args),
        [x, weight, bias],
        rtol=1e-5,
        atol=1e-6,
    )


@pytest.mark.parametrize("geometry", CONVS)
def test_conv2d_compiled_equals_eager(geometry):
    shape, w_shape, stride, padding, dilation, groups = geometry
    rng = np.random.default_rng(4)
    arrays = [rng.normal(size=s).astype(np.float32) for s in (shape, w_shape, w_shape[:1])]

    def step(a, w, b):
        return (F.relu(F.conv2d(a, w, b, stride, padding, dilation, groups)) ** 2).sum()

    results = []
    for fn in (step, minitorch.compile(step)):
        tensors = [t(a, requires_grad=True) for a in arrays]
        loss = fn(*tensors)
        loss.backward()
        results.append([loss.detach().numpy()] + [x.grad.numpy() for x in tensors])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_im2col_reads_any_layout_of_its_input():
    x = np.random.default_rng(5).normal(size=(2, 3, 6, 7))
    geometry = ((3, 2), (1, 2), ((0, 0), (0, 0)), (2, 1))
    xt = t(x)
    views = [
        (xt.transpose(2, 3)[:, :, :6, :5], x.transpose(0, 1, 3, 2)[:, :, :6, :5]),
        (xt[:, ::2, 1:, ::2], x[:, ::2, 1:, ::2]),
        (xt.permute(1, 0, 2, 3), x.transpose(1, 0, 2, 3)),
    ]
    for view, expected in views:
        assert not view.is_contiguous()
        got = minitorch.ops.im2col(view, *geometry).numpy()
        n, c = expected.shape[:2]
        want = windows(expected, (3, 2), (2, 1), (0, 0), (1, 2)).reshape(n, c * 6, -1)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("geometry", POOLS[2:4])
def test_max_pool2d_ceil_mode_gradient(geometry):
    shape, kernel, stride, padding, dilation = geometry
    rng = np.random.default_rng(6)
    x = np.round(rng.normal(size=shape))
    xt = t(x, requires_grad=True)
    out = F.max_pool2d(xt, kernel, stride, padding, dilation, ceil_mode=True)
    w = windows(x, kernel, stride, padding, dilation, ceil_mode=True, fill=-np.inf)
    np.testing.assert_array_equal(out.detach().numpy(), w.max(axis=(2, 3)))
    g = rng.normal(size=tuple(out.shape))
    (grad,) = autograd.grad(out, [xt], grad_outputs=t(g))
    (_, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    expected = np.zeros_like(x)
    for b, ch, r, q in np.ndindex(*w.shape[:2], *w.shape[4:]):
        i, j = divmod(int(np.argmax(w[b, ch, :, :, r, q].reshape(-1))), kw)
        expected[b, ch, r * sh - ph + i * dh, q * sw - pw + j * dw] += g[b, ch, r, q]
    np.testing.assert_array_equal(grad.numpy(), expected)


def test_tiling_pools_gather_no_windows(monkeypatch):
    """max_pool2d(x, 2) of an even image regroups x: no im2col forward, no col2im backward."""
    from minitorch.ops import nn as nn_ops

    def refuse(*args, **kwargs):
        raise AssertionError("im2col called for windows that tile the input")

    monkeypatch.setattr(nn_ops, "im2col", refuse)
    x = t(np.random.default_rng(7).normal(size=(2, 3, 8, 6)), requires_grad=True)
    (F.max_pool2d(x, 2).sum() + F.avg_pool2d(x, (2, 3)).sum()).backward()
    assert x.grad.shape == x.shape
