"""Samples of the ops only nn needs: windows (im2col, conv2d, pools), embedding, dropout.

The numpy references are written window by window, the way the ops are defined, not the way
minitorch computes them (strided copies and a matmul).
"""

from __future__ import annotations

import numpy as np

from minitorch import counter_rng
from op_samples.common import OpSpec, S, T, f64, i32, i64

# ---- references --------------------------------------------------------------------------


def _pair(v) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)


def _pad(x, padding, fill=0.0):
    """x (N, C, H, W) padded by ((top, bottom), (left, right)) with `fill`."""
    (top, bottom), (left, right) = padding
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)


def _windows(x, kernel, dilation, padding, stride, fill=0.0):
    """Every window of x as an array (N, C, kh, kw, out_h, out_w), one window at a time."""
    (kh, kw), (dh, dw), (sh, sw) = kernel, dilation, stride
    padded = _pad(x, padding, fill)
    oh = (padded.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (padded.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((*x.shape[:2], kh, kw, oh, ow), dtype=x.dtype)
    for r in range(oh):
        for c in range(ow):
            rows = slice(r * sh, r * sh + dh * (kh - 1) + 1, dh)
            cols = slice(c * sw, c * sw + dw * (kw - 1) + 1, dw)
            out[..., r, c] = padded[:, :, rows, cols]
    return out


def _np_im2col(x, kernel_size, dilation, padding, stride, fill=0.0):
    w = _windows(x, kernel_size, dilation, padding, stride, fill)
    n, c, kh, kw, oh, ow = w.shape
    return w.reshape(n, c * kh * kw, oh * ow)


def _np_col2im(cols, output_size, kernel_size, dilation, padding, stride):
    """Add every column back onto the pixels its window covers."""
    (h, w), (kh, kw), (dh, dw), (sh, sw) = output_size, kernel_size, dilation, stride
    (top, bottom), (left, right) = padding
    n, c = cols.shape[0], cols.shape[1] // (kh * kw)
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (w + left + right - dw * (kw - 1) - 1) // sw + 1
    cols = cols.reshape(n, c, kh, kw, oh, ow)
    padded = np.zeros((n, c, h + top + bottom, w + left + right), dtype=cols.dtype)
    for r in range(oh):
        for q in range(ow):
            for i in range(kh):
                for j in range(kw):
                    padded[:, :, r * sh + i * dh, q * sw + j * dw] += cols[:, :, i, j, r, q]
    return padded[:, :, top : top + h, left : left + w]


def _np_conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """out[n, o, r, q] = sum over the window of x times filter o, plus bias[o]."""
    unbatched = x.ndim == 3
    x = x[None] if unbatched else x
    out_c, c_per_group, kh, kw = weight.shape
    dilation = _pair(dilation)
    if padding == "same":
        totals = [d * (k - 1) for k, d in zip((kh, kw), dilation)]
        pads = tuple((t // 2, t - t // 2) for t in totals)
    else:
        ph, pw = (0, 0) if padding == "valid" else _pair(padding)
        pads = ((ph, ph), (pw, pw))
    win = _windows(x, (kh, kw), dilation, pads, _pair(stride))  # (N, C, kh, kw, oh, ow)
    out = np.zeros((x.shape[0], out_c, *win.shape[4:]))
    per_group = out_c // groups
    for g in range(groups):
        chans = slice(g * c_per_group, (g + 1) * c_per_group)
        filters = slice(g * per_group, (g + 1) * per_group)
        out[:, filters] = np.einsum("ncijrq,ocij->norq", win[:, chans], weight[filters])
    if bias is not None:
        out += bias[None, :, None, None]
    return out[0] if unbatched else out


def _pool_pads(x, kernel, stride, padding, dilation, ceil_mode):
    """Per-side padding that gives PyTorch's pooling output size (ceil_mode adds windows)."""
    pads = []
    for n, k, s, p, d in zip(x.shape[-2:], kernel, stride, padding, dilation):
        span = n + 2 * p - d * (k - 1) - 1
        out = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (out - 1) * s >= n + p:  # the last window must start inside
            out -= 1
        pads.append((p, max(p, (out - 1) * s + d * (k - 1) + 1 - n - p)))
    return tuple(pads)


def _np_max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    kernel = _pair(kernel_size)
    stride = kernel if stride is None else _pair(stride)
    dilation = _pair(dilation)
    unbatched = x.ndim == 3
    x = x[None] if unbatched else x
    pads = _pool_pads(x, kernel, stride, _pair(padding), dilation, ceil_mode)
    out = _windows(x, kernel, dilation, pads, stride, fill=-np.inf).max(axis=(2, 3))
    return out[0] if unbatched else out


def _np_max_pool2d_with_indices(
    x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False
):
    """(values, indices): the index of each window's first maximum in its flattened plane."""
    kernel = _pair(kernel_size)
    stride = kernel if stride is None else _pair(stride)
    (dh, dw), (ph, pw) = _pair(dilation), _pair(padding)
    values = _np_max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)
    indices = np.zeros(values.shape, dtype=np.int64)
    height, width = x.shape[-2:]
    for pos in np.ndindex(values.shape):
        *lead, r, q = pos
        best = -np.inf
        for i in range(kernel[0]):
            for j in range(kernel[1]):
                row, col = r * stride[0] - ph + i * dh, q * stride[1] - pw + j * dw
                if 0 <= row < height and 0 <= col < width and x[(*lead, row, col)] > best:
                    best, indices[pos] = x[(*lead, row, col)], row * width + col
    return values, indices


def _np_avg_pool2d(
    x,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    kernel = _pair(kernel_size)
    stride = kernel if stride is None else _pair(stride)
    ph, pw = _pair(padding)
    unbatched = x.ndim == 3
    x = x[None] if unbatched else x
    pads = _pool_pads(x, kernel, stride, (ph, pw), (1, 1), ceil_mode)
    total = _windows(x, kernel, (1, 1), pads, stride).sum(axis=(2, 3))
    # What each window divides by: the cells over the input (and, with count_include_pad, over
    # the declared padding), never the extra cells that ceil_mode adds.
    counted = np.zeros((1, 1, x.shape[2] + 2 * ph, x.shape[3] + 2 * pw))
    if count_include_pad:
        counted[:] = 1
    else:
        counted[:, :, ph : ph + x.shape[2], pw : pw + x.shape[3]] = 1
    extra = ((0, pads[0][1] - ph), (0, pads[1][1] - pw))
    counts = _windows(counted, kernel, (1, 1), extra, stride).sum(axis=(2, 3))
    out = total / (divisor_override if divisor_override is not None else counts)
    return out[0] if unbatched else out


def _np_embedding(weight, indices, padding_idx=None):
    return weight[indices]


def _np_dropout_mask(x, p):
    # p = 0 keeps everything and p = 1 drops everything; the random middle is tested
    # statistically in tests/minitorch/nn/test_nn_dropout.py.
    assert p in (0.0, 1.0)
    return np.full(x.shape, p == 0.0)


def _np_rng_state(x):
    # The state before the draw: the generator has moved x.size counters past it since.
    seed, offset = counter_rng._seed, (counter_rng._offset - x.size) % 2**64
    return np.array([counter_rng.as_int64(seed), counter_rng.as_int64(offset)], dtype=np.int64)


def _splitmix64(z: int) -> int:
    """splitmix64's output function, in Python integers (an independent reference)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
    return z ^ (z >> 31)


def _np_dropout_keep(x, p, state):
    seed, offset = (int(v) % 2**64 for v in state)  # the int64s' bits, unsigned
    key = _splitmix64(seed)
    bits = [
        _splitmix64((key + (offset + k) * 0x9E3779B97F4A7C15) % 2**64) >> 11 for k in range(x.size)
    ]
    return (np.array(bits, dtype=np.float64) * 2.0**-53 >= p).reshape(x.shape)


def _np_dropout(x, p=0.5, train=True):
    assert p in (0.0, 1.0) or not train
    return x * 0.0 if train and p == 1.0 else x


# ---- samples -----------------------------------------------------------------------------

NO_PAD = ((0, 0), (0, 0))


def _float_or_input(arrays, **kwargs) -> str:
    return arrays[0].dtype.name


def _bool(arrays, **kwargs) -> str:
    return "bool"


SPECS: dict[str, OpSpec] = {
    "im2col": OpSpec(
        [
            S(T((1, 1, 4, 4)), (2, 2), (1, 1), NO_PAD, (2, 2)),
            S(T((2, 3, 5, 6), f64), (3, 2), (1, 1), ((1, 1), (0, 0)), (1, 1)),
            S(T((1, 2, 7, 7)), (3, 3), (2, 2), ((1, 2), (0, 1)), (2, 1)),  # dilation, uneven pad
            S(T((1, 1, 3, 3)), (2, 2), (1, 1), ((1, 1), (1, 1)), (1, 1), fill=-5.0),
            S(T((2, 1, 4, 3), i64, -5, 5), (2, 3), (1, 1), NO_PAD, (1, 1)),
        ],
        _np_im2col,
        _float_or_input,
    ),
    "col2im": OpSpec(
        [
            S(T((1, 4, 4)), (4, 4), (2, 2), (1, 1), NO_PAD, (2, 2)),
            S(T((2, 6, 9), f64), (5, 6), (3, 2), (1, 1), ((1, 1), (0, 0)), (2, 2)),
            S(T((1, 18, 12)), (7, 7), (3, 3), (2, 2), ((1, 2), (0, 1)), (2, 1)),  # overlaps
            S(T((1, 4, 16)), (3, 3), (2, 2), (1, 1), ((1, 1), (1, 1)), (1, 1)),
        ],
        _np_col2im,
        _float_or_input,
    ),
    "embedding": OpSpec(
        [
            S(T((5, 3)), T((4,), i64, 0, 4)),
            S(T((6, 2), f64), T((2, 3), i64, 0, 5)),  # indices of any shape
            S(T((4, 3)), T((), i64, 0, 3)),
            # padding_idx only stops the gradient of its row, which finite differences of the
            # forward cannot see: here no index hits it (tests/minitorch/nn test the padding row).
            S(T((4, 3)), T((2, 2), i32, 2, 3), padding_idx=1),
        ],
        _np_embedding,
        _float_or_input,
    ),
    "dropout_mask": OpSpec(
        [
            S(T((2, 3)), 0.0),
            S(T((4,), f64), 1.0),
            S(T(()), 0.0),
        ],
        _np_dropout_mask,
        _bool,
        grad=False,
    ),  # a bool mask has no gradient
    "rng_state": OpSpec(
        [S(T((2, 3))), S(T((), f64))], _np_rng_state, lambda arrays: "int64", grad=False
    ),
    "dropout_keep": OpSpec(
        [
            S(T((3, 5)), 0.3, T((2,), i64, 0, 1000)),
            S(T((40,), f64), 0.5, T((2,), i64, -(2**62), 2**62)),  # counters that wrap around
            S(T(()), 0.0, T((2,), i64, -5, 5)),
        ],
        _np_dropout_keep,
        _bool,
        grad=False,
    ),  # a bool mask has no gradient
    "dropout": OpSpec(
        [
            S(T((2, 3)), 0.0),
            S(T((4,), f64), 1.0),
            S(T((3, 2)), 0.5, False),  # not training: the identity
            S(T((2, 2)), p=1.0, train=True),
        ],
        _np_dropout,
        _float_or_input,
    ),
    "avg_pool2d": OpSpec(
        [
            S(T((1, 1, 4, 4)), 2),
            S(T((2, 3, 5, 6), f64), (3, 2), stride=1),
            S(T((1, 2, 5, 5)), 3, stride=2, padding=1),
            S(T((1, 2, 5, 5), f64), 3, stride=2, padding=1, count_include_pad=False),
            S(T((1, 1, 5, 5)), 2, padding=1, ceil_mode=True),
            S(T((1, 1, 6, 5), f64), 3, 2, 1, True, False),  # ceil_mode, padding not counted
            S(T((2, 4, 4)), 2, divisor_override=3),  # an unbatched (C, H, W) image
        ],
        _np_avg_pool2d,
        _float_or_input,
    ),
}
SPECS["max_pool2d"] = OpSpec(
    [
        S(T((1, 1, 4, 4)), 2),
        S(T((2, 3, 5, 6), f64), (3, 2), stride=1),
        S(T((1, 2, 5, 5)), 3, stride=2, padding=1),
        S(T((1, 1, 7, 7), f64), 3, stride=2, dilation=2),
        S(T((1, 1, 5, 5)), 2, padding=1, ceil_mode=True),
        S(T((2, 5, 4)), 2, 1),  # unbatched, overlapping windows
    ],
    _np_max_pool2d,
    _float_or_input,
)
SPECS["max_pool2d_with_indices"] = OpSpec(
    [
        S(T((1, 1, 4, 4)), 2),
        S(T((2, 2, 5, 6), f64), (3, 2), stride=1, padding=1),
        S(T((1, 1, 7, 7)), 3, stride=2, dilation=2, ceil_mode=True),
        S(T((2, 5, 4), f64), 2, 1),
    ],
    _np_max_pool2d_with_indices,
    lambda arrays, **kw: (arrays[0].dtype.name, "int64"),
)
SPECS["conv2d"] = OpSpec(
    [
        S(T((1, 1, 4, 4), f64), T((1, 1, 3, 3), f64)),
        S(T((2, 3, 5, 6), f64), T((4, 3, 2, 3), f64), T((4,), f64)),
        S(T((1, 2, 7, 7), f64), T((3, 2, 3, 3), f64), None, 2, 1, 2),  # stride, padding, dilation
        S(T((1, 4, 5, 5), f64), T((6, 2, 3, 3), f64), T((6,), f64), groups=2),
        S(T((1, 2, 5, 4), f64), T((2, 2, 2, 3), f64), padding="same"),  # uneven 'same' padding
        S(T((2, 5, 5), f64), T((3, 2, 3, 3), f64), padding="valid"),  # unbatched
        S(
            T((1, 2, 6, 6), low=-1, high=1),
            T((2, 2, 3, 3), low=-1, high=1),
            stride=(2, 1),
            padding=(1, 0),
        ),
    ],
    _np_conv2d,
    _float_or_input,
)
