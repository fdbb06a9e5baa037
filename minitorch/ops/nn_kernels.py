"""The eager kernels of im2col and col2im (minitorch/ops/nn.py), over numpy or cupy arrays.

    cols = im2col_kernel(np, x, (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1))  # (N, C*9, L)
    x_grad = col2im_kernel(np, cols, (H, W), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1))

im2col copies every window at once from a strided view of the padded image; col2im adds the
kh*kw taps back, one strided add each, a block of images at a time. See [Note: convolution as
im2col] in nn.py for what they compute.
"""

from __future__ import annotations

import numpy as np

from minitorch.ops import nn_meta as m


def _window_slices(k_i: int, k_j: int, dilation, stride, out_size) -> tuple[slice, slice]:
    """Where kernel tap (k_i, k_j) reads in the padded image, for every window at once."""
    (dh, dw), (sh, sw), (oh, ow) = dilation, stride, out_size
    rows = slice(k_i * dh, k_i * dh + sh * (oh - 1) + 1, sh)
    cols = slice(k_j * dw, k_j * dw + sw * (ow - 1) + 1, sw)
    return rows, cols


def _padded(xp, x, padding, fill):
    """x (N, C, H, W) with `fill` around it; x itself when there is no padding."""
    n, c, h, w = x.shape
    (top, bottom), (left, right) = padding
    if not (top or bottom or left or right):
        return x
    padded = xp.full((n, c, top + h + bottom, left + w + right), fill, dtype=x.dtype)
    padded[:, :, top : top + h, left : left + w] = x
    return padded


def im2col_kernel(xp, x, kernel_size, dilation, padding, stride, fill=0.0):
    """x (N, C, H, W), of any strides, as (N, C*kh*kw, L): every window a column, the padding
    read as `fill`."""
    n, c, h, w = x.shape
    kh, kw = kernel_size
    out_size = m.window_output_size("im2col", (h, w), kernel_size, dilation, padding, stride)
    padded = _padded(xp, x, padding, fill)
    if xp is np and padded.size:
        # Every window at once as a strided view of the padded image (N, C, kh, kw, oh, ow),
        # whose reshape is the one copy ([Note: convolution as im2col]).
        (dh, dw), (sh, sw) = dilation, stride
        sn, sc, sy, sx = padded.strides
        windows = np.lib.stride_tricks.as_strided(
            padded,
            (n, c, kh, kw, *out_size),
            (sn, sc, sy * dh, sx * dw, sy * sh, sx * sw),
            writeable=False,
        )
        return windows.reshape(n, c * kh * kw, out_size[0] * out_size[1])
    cols = xp.empty((n, c, kh, kw, *out_size), dtype=x.dtype)
    for i in range(kh):  # kh * kw strided copies, each over every window at once
        for j in range(kw):
            rows, columns = _window_slices(i, j, dilation, stride, out_size)
            cols[:, :, i, j] = padded[:, :, rows, columns]
    return cols.reshape(n, c * kh * kw, out_size[0] * out_size[1])  # (N, C*kh*kw, L)


# col2im adds into blocks of this many elements of the padded image at a time: 256 KiB of
# float32, which stays in cache while all kh*kw taps add into it.
COL2IM_BLOCK = 1 << 16


def col2im_kernel(xp, cols, output_size, kernel_size, dilation, padding, stride):
    """cols (N, C*kh*kw, L) added back onto the (N, C, H, W) pixels their windows cover;
    what falls on the padding is dropped."""
    (h, w), (kh, kw), ((top, bottom), (left, right)) = output_size, kernel_size, padding
    out_size = m.window_output_size("col2im", (h, w), kernel_size, dilation, padding, stride)
    n, c = cols.shape[0], cols.shape[1] // (kh * kw)
    height, width = top + h + bottom, left + w + right
    cols = cols.reshape(n * c, kh, kw, *out_size)  # (N*C) as one dim: one dim fewer to step
    padded = xp.zeros((n * c, height, width), dtype=cols.dtype)
    taps = [
        (i, j, *_window_slices(i, j, dilation, stride, out_size))
        for i in range(kh)
        for j in range(kw)
    ]
    # Image by image, a block at a time: the kh*kw adds into a block read it from cache, where
    # adding each tap over the whole padded image streamed it through memory kh*kw times
    # ((64, 32, 26, 26) 3x3: 41 -> 33 ms on a busy 2-core machine). Each pixel still gets its
    # contributions in tap order, so the sums are the same.
    step = max(1, COL2IM_BLOCK // max(1, height * width))
    for start in range(0, n * c, step):
        block, source = padded[start : start + step], cols[start : start + step]
        for i, j, rows, columns in taps:
            # NOTE: one tap's windows never share a pixel, so += adds every contribution.
            block[:, rows, columns] += source[:, i, j]
    if top or bottom or left or right:
        padded = xp.ascontiguousarray(padded[:, top : top + h, left : left + w])
    return padded.reshape(n, c, h, w)
