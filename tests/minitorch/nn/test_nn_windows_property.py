"""Property tests: pooling and convolution over random geometries agree with a window-by-window
numpy reference (kernel, stride, padding, dilation, ceil_mode drawn by hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from nn_testing import t, windows

from minitorch import nn

F = nn.functional


@st.composite
def geometries(draw, dilated: bool = True):
    """(input shape, kernel, stride, padding, dilation) with at least one window."""
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) if dilated else (1, 1)
    size = tuple(draw(st.integers(d * (k - 1) + 1, 7)) for k, d in zip(kernel, dilation))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *size)
    return shape, kernel, stride, padding, dilation


@settings(max_examples=40, deadline=None)
@given(geometries(), st.booleans(), st.integers(0, 2**31))
def test_max_pool2d_matches_windows(geometry, ceil_mode, seed):
    shape, kernel, stride, padding, dilation = geometry
    x = np.random.default_rng(seed).normal(size=shape)
    out = F.max_pool2d(t(x), kernel, stride, padding, dilation, ceil_mode)
    expected = windows(x, kernel, stride, padding, dilation, ceil_mode, -np.inf).max(axis=(2, 3))
    np.testing.assert_array_equal(out.numpy(), expected)


@settings(max_examples=40, deadline=None)
@given(geometries(dilated=False), st.booleans(), st.integers(0, 2**31))
def test_avg_pool2d_counting_padding_matches_windows(geometry, ceil_mode, seed):
    shape, kernel, stride, padding, _ = geometry
    x = np.random.default_rng(seed).normal(size=shape)
    out = F.avg_pool2d(t(x), kernel, stride, padding, ceil_mode=ceil_mode)
    totals = windows(x, kernel, stride, padding, ceil_mode=ceil_mode).sum(axis=(2, 3))
    # The divisor counts the declared padding but not the cells ceil_mode adds beyond it.
    ones = np.ones((1, 1, shape[2] + 2 * padding[0], shape[3] + 2 * padding[1]))
    counted = windows(ones, kernel, stride, (0, 0), ceil_mode=ceil_mode)
    counts = counted.sum(axis=(2, 3))[..., : totals.shape[2], : totals.shape[3]]
    np.testing.assert_allclose(out.numpy(), totals / counts, rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(geometries(), st.integers(1, 3), st.integers(0, 2**31))
def test_conv2d_matches_windows(geometry, out_channels, seed):
    shape, kernel, stride, padding, dilation = geometry
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    w = rng.normal(size=(out_channels, shape[1], *kernel))
    b = rng.normal(size=out_channels)
    out = F.conv2d(t(x), t(w), t(b), stride, padding, dilation)
    win = windows(x, kernel, stride, padding, dilation)
    expected = np.einsum("ncijrq,ocij->norq", win, w) + b[None, :, None, None]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)
