"""The op table, the ops only `minitorch.nn` needs: convolution, pooling, embedding, dropout.

See [Note: the op table] in registry.py. Shape rules live in nn_meta.py.

[Note: convolution as im2col]
A 2-d convolution slides a (C, kh, kw) window over the image and takes a dot product with
each filter at every position. Laying every window out as a column (`im2col`) turns the whole
convolution into one matrix product:

    x (N, C, H, W) --im2col--> cols (N, C*kh*kw, L)          L = out_h * out_w windows
    weight (O, C, kh, kw) --reshape--> (O, C*kh*kw)
    out = weight @ cols  (N, O, L) --reshape--> (N, O, out_h, out_w)

So only the window gathering is new. Its derivative is its adjoint, `col2im`, which adds each
column back onto the pixels its window covered (windows overlap when stride < kernel, so pixels
collect several contributions); and col2im's derivative is im2col again. The same two ops give
pooling: max_pool2d and avg_pool2d are a max or a mean over each column. The alternative, a
conv2d primitive with conv2d_backward_input/weight primitives, needs three ops for convolution
alone and none of them helps pooling; im2col trades memory (kh*kw copies of the input) for a
primitive set of two ops whose compute is a matmul that every backend already has.

Eagerly, im2col is one copy of a strided view (the windows of the padded image are a view with
strides of the image's), and col2im adds tap by tap, a block of images at a time
(minitorch/ops/nn_kernels.py). A 1x1 convolution of stride 1 gathers nothing: its columns are
the image, reshaped.

Why each primitive here is one:
- im2col: a sliding-window gather with padding, a kind of indexing no view or pointwise op has.
- col2im: its adjoint, a scatter-add of overlapping windows. It could be a scatter_add through
  a table of window positions, but that ran 15x slower eagerly (101 ms against 6.5 ms for the
  input gradient of a 3x3 convolution of (32, 16, 28, 28)) and hides from the loop-level IR
  that each pixel is a sum over the kh*kw taps that cover it.
- embedding: a gather of whole rows by indices of any shape, whose derivative must skip the
  padding row; `gather` reads single elements, and no composition of ops can stop a gradient
  for some rows only. Its derivative is a `scatter_add` (the reductions' gather pair).
- rng_state: dropout's randomness (the random factories draw from a shape alone, and from
  numpy's generator: minitorch/ops/factories.py); it reads and advances the counter-based
  generator, and dropout_keep hashes what it returns into dropout's mask ([Note:
  counter-based random numbers] in minitorch/counter_rng.py).

[Note: the max of a window]
max_pool2d picks one tap per window (argmax: the first largest, as PyTorch's) and its gradient
goes to that tap only. `gather(taps, 2, winner)` picks it, but gather's derivative is a
scatter_add, an extern kernel of indexed writes (numpy's add.at: 55 ms of the MNIST step's
pool of (64, 64, 24, 24)). A sum of the winner and zeros picks the same value,

    values = sum(where(tap == winner, taps, 0), dim=taps)    # winner + 0 + ... + 0

and its derivative is `where(tap == winner, g, 0)`: pointwise, fused into one kernel with the
rest of the backward. The value is the winner's exactly (x + 0 is x for every x, inf and NaN
included) but for the sign of a zero: a window whose max is -0.0 gives +0.0, eagerly and
compiled alike (PyTorch gives -0.0; the two compare equal).
"""

from __future__ import annotations

import math

import numpy as np

from minitorch import counter_rng
from minitorch.dtype import int64
from minitorch.errors import DTypeError, IndexOutOfRangeError, ShapeError, at_user_line
from minitorch.ops import nn_meta as m
from minitorch.ops.linalg import matmul
from minitorch.ops.nn_kernels import col2im_kernel, im2col_kernel
from minitorch.ops.pointwise import add, div, mul, to_copy
from minitorch.ops.reductions import argmax, gather, mean, scatter_add, sum
from minitorch.ops.registry import OpDef, register
from minitorch.ops.selection import eq, masked_fill, where
from minitorch.ops.views import expand, permute, reshape

__all__ = [  # the ops this family registers
    "im2col",
    "col2im",
    "embedding",
    "rng_state",
    "dropout_keep",
    "dropout_mask",
    "conv2d",
    "avg_pool2d",
    "max_pool2d",
    "max_pool2d_with_indices",
    "dropout",
]

# ---- windows: im2col and its adjoint col2im ----------------------------------------------


# why primitive: a sliding-window gather with padding, indexing no view or pointwise op has
im2col = register(
    OpDef(
        "im2col",
        "window",
        m.im2col_meta,
        impl=im2col_kernel,
        backward=lambda g, out, x, kernel_size, dilation, padding, stride, fill=0.0: (
            col2im(g, tuple(x.shape[2:]), kernel_size, dilation, padding, stride),
        ),
    )
)
# why primitive: im2col's adjoint; as a scatter_add through an index table it ran 15x slower
# and would hide a fixed stencil (a sum over the kh*kw taps) from the loop-level IR
col2im = register(
    OpDef(
        "col2im",
        "window",
        m.col2im_meta,
        impl=col2im_kernel,
        backward=lambda g, out, cols, output_size, kernel_size, dilation, padding, stride: (
            im2col(g, kernel_size, dilation, padding, stride),
        ),
    )
)

# ---- embedding: a gather of rows ----------------------------------------------------------


def _embedding_backward(g, out, weight, indices, padding_idx=None):
    """Add each output row's gradient onto the weight row it was read from.

    Indices may repeat (a token seen twice), so the rows are accumulated with scatter_add;
    the row at padding_idx gets no gradient, which is the point of padding_idx.
    """
    from minitorch.factories import zeros

    num_weights, dim = weight.shape
    count = 1
    for n in indices.shape:
        count *= n
    if indices.dtype is not int64:  # scatter_add takes int64 indices, as in PyTorch
        indices = to_copy(indices, dtype=int64)
    rows = expand(reshape(indices, (count, 1)), (count, dim))  # (K, D): row index per element
    zero = expand(zeros((), dtype=g.dtype, device=g.device), (num_weights, dim))
    grad = scatter_add(zero, 0, rows, reshape(g, (count, dim)))
    if padding_idx is not None:
        grad = masked_fill(grad, row_mask(num_weights, padding_idx, g.device), 0.0)
    return grad, None


def row_mask(rows: int, row: int, device):
    """A constant (rows, 1) bool column, True at `row` only."""
    from minitorch.factories import tensor

    mask = [[False]] * rows
    mask[row] = [True]
    return tensor(mask, device=device)


def _embedding_impl(xp, weight, indices, padding_idx=None):
    # A data-dependent check: take() would wrap a negative index around silently.
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= weight.shape[0]):
        bad = int(indices.min()) if int(indices.min()) < 0 else int(indices.max())
        raise IndexOutOfRangeError(
            at_user_line(
                f"embedding: index {bad} is out of range for a table of {weight.shape[0]} rows"
            )
        )
    return xp.take(weight, indices, axis=0)


# why primitive: a gather of rows whose derivative skips the padding row (see the note)
embedding = register(
    OpDef(
        "embedding",
        "gather",
        m.embedding_meta,
        impl=_embedding_impl,
        backward=_embedding_backward,
        lowering="lowered",
    )
)

# ---- dropout's random mask ([Note: counter-based random numbers] in minitorch/counter_rng.py) ---


def _rng_state_impl(xp, x):
    """(seed, offset) for x.numel() draws, as two int64s; the generator moves past them."""
    seed, offset = counter_rng.advance(x.size)
    return xp.asarray([counter_rng.as_int64(seed), counter_rng.as_int64(offset)], dtype=xp.int64)


# why primitive: reads and advances dropout's generator, a side effect (dropout_keep
# computes from what this returns)
rng_state = register(OpDef("rng_state", "random", m.rng_state_meta, impl=_rng_state_impl))


def _dropout_keep_impl(xp, x, p, state):
    """Element k is kept when uniform(seed, offset + k) >= p: with probability 1 - p."""
    counters = state[1] + xp.arange(x.size, dtype=xp.int64)  # int64 wraps, as the kernel's
    return (counter_rng.uniform(xp, state[0], counters) >= p).reshape(x.shape)


# why primitive: a hash of integers, which no pointwise op computes; it lowers to ops.rand
dropout_keep = register(
    OpDef(
        "dropout_keep",
        "pointwise",
        m.dropout_keep_meta,
        impl=_dropout_keep_impl,
        lowering="lowered",
        layout="row_major",  # element k is draw k in row-major order, whatever x's layout
    )
)


def _dropout_mask_decomposition(x, p):
    """A bool mask of x's shape, True with probability 1 - p, from the generator."""
    m.dropout_mask_meta(x, p)  # check p before the generator moves
    return dropout_keep(x, p, rng_state(x))


dropout_mask = register(
    OpDef("dropout_mask", "composite", None, decomposition=_dropout_mask_decomposition)
)

# ---- composites --------------------------------------------------------------------------


def _conv2d_decomposition(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """See [Note: convolution as im2col]."""
    x, batched = _as_batch("conv2d", input)
    if len(weight.shape) != 4:
        raise ShapeError(
            at_user_line(
                f"conv2d: expected a 4-d weight (out_channels, in_channels/groups, kh, kw), "
                f"got shape {tuple(weight.shape)}"
            )
        )
    if not (input.dtype.is_floating_point and weight.dtype is input.dtype):
        raise DTypeError(
            at_user_line(
                f"conv2d: expected input and weight of the same floating-point dtype, "
                f"got {input.dtype.name} and {weight.dtype.name}"
            )
        )
    n, c, h, w = x.shape
    out_c, c_per_group, kh, kw = weight.shape
    if groups < 1 or c % groups or out_c % groups or c_per_group * groups != c:
        raise ShapeError(
            at_user_line(
                f"conv2d: input of shape {tuple(input.shape)} ({c} channels) does not match weight "
                f"of shape {tuple(weight.shape)} with groups={groups}"
            )
        )
    kernel = (kh, kw)
    stride, dilation = m.pair("conv2d", "stride", stride), m.pair("conv2d", "dilation", dilation)
    m.check_param_shape("conv2d", "bias", bias, (out_c,))
    pads = _padding("conv2d", padding, kernel, dilation, stride)
    oh, ow = m.window_output_size("conv2d", (h, w), kernel, dilation, pads, stride)
    if kernel == (1, 1) and stride == (1, 1) and pads == ((0, 0), (0, 0)):
        cols = reshape(x, (n, c, h * w))  # one tap per window: the image itself, no copy
    else:
        cols = im2col(x, kernel, dilation, pads, stride)  # (N, C*kh*kw, L)
    if groups == 1:
        out = matmul(reshape(weight, (out_c, c * kh * kw)), cols)  # (N, O, L)
    else:
        cols = reshape(cols, (n, groups, c_per_group * kh * kw, oh * ow))
        filters = reshape(weight, (groups, out_c // groups, c_per_group * kh * kw))
        out = matmul(filters, cols)  # (N, G, O/G, L)
    out = reshape(out, (n, out_c, oh, ow))
    if bias is not None:
        out = add(out, reshape(bias, (1, out_c, 1, 1)))
    return out if batched else reshape(out, (out_c, oh, ow))


def _avg_pool2d_decomposition(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """The mean of each window: im2col, then a mean over the kh*kw taps."""
    x, batched = _as_batch("avg_pool2d", input)
    kernel, stride, pads, out_size = _pool_geometry(
        "avg_pool2d", x, kernel_size, stride, padding, ceil_mode
    )
    cols = _window_taps(x, kernel, (1, 1), pads, stride, out_size, 0.0)  # (N, C, taps, oh, ow)
    if divisor_override is not None:
        out = div(sum(cols, dim=2), divisor_override)
    elif count_include_pad and not ceil_mode:
        out = mean(cols, dim=2)
    else:
        counts = _window_counts(x, kernel, stride, pads, padding, out_size, count_include_pad)
        out = div(sum(cols, dim=2), counts)
    return out if batched else reshape(out, tuple(out.shape[1:]))


def _max_pool2d_decomposition(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False
):
    """The max of each window: its taps (im2col padded with -inf), then a max over the kh*kw
    taps that sends the gradient to the one element it picked, as PyTorch's max_pool2d does
    ([Note: the max of a window]); col2im adds the gradients of overlapping windows."""
    taps, _, batched = _max_pool_taps(input, kernel_size, stride, padding, dilation, ceil_mode)
    values = _picked(taps, argmax(taps, dim=2, keepdim=True))  # (N, C, oh, ow)
    return values if batched else reshape(values, tuple(values.shape[1:]))


def _max_pool2d_with_indices_decomposition(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False
):
    """(values, indices), each index into its flattened input plane: row * W + column."""
    taps, geometry, batched = _max_pool_taps(
        input, kernel_size, stride, padding, dilation, ceil_mode
    )
    winner = argmax(taps, dim=2, keepdim=True)  # (N, C, 1, oh, ow): which tap was largest
    values = _picked(taps, winner)
    where = expand(_tap_positions(input, *geometry), tuple(taps.shape))
    indices = gather(where, 2, winner)
    n, c, _, oh, ow = taps.shape
    shape = (n, c, oh, ow) if batched else (c, oh, ow)
    return reshape(values, shape), reshape(indices, shape)


def _picked(taps, winner):
    """taps (N, C, T, oh, ow) at the tap `winner` (N, C, 1, oh, ow) picks, as (N, C, oh, ow):
    a sum of the winner and T - 1 zeros, whose derivative is a select ([Note: the max of a
    window]). Integers keep gather, whose sum would widen them to int64 (no gradient there)."""
    if not taps.dtype.is_floating_point:
        return reshape(gather(taps, 2, winner), tuple(winner.shape[:2] + winner.shape[3:]))
    from minitorch.factories import arange

    tap = reshape(arange(taps.shape[2], device=taps.device), (1, 1, taps.shape[2], 1, 1))
    return sum(where(eq(tap, winner), taps, 0.0), dim=2)


def _max_pool_taps(input, kernel_size, stride, padding, dilation, ceil_mode):
    """The windows of a max pool as (N, C, kh*kw, oh, ow), padded with the lowest value."""
    x, batched = _as_batch("max_pool2d", input)
    dilation = m.pair("max_pool2d", "dilation", dilation)
    kernel, stride, pads, out_size = _pool_geometry(
        "max_pool2d", x, kernel_size, stride, padding, ceil_mode, dilation
    )
    lowest = -math.inf if x.dtype.is_floating_point else _lowest_int(x.dtype)
    taps = _window_taps(x, kernel, dilation, pads, stride, out_size, lowest)
    return taps, (kernel, dilation, pads, stride, out_size), batched


def _window_taps(x, kernel, dilation, pads, stride, out_size, fill):
    """The windows of a pool as (N, C, kh*kw, oh, ow), padded with `fill`.

    Windows that tile the input exactly (stride == kernel, no dilation or padding, as in
    `max_pool2d(x, 2)` of an even image) are a regrouping of its elements: a reshape and a
    permute, which lower to index arithmetic inside the kernel that reduces them, and whose
    derivatives are views too. Any other window goes through im2col (and col2im back)."""
    n, c, h, w = x.shape
    (kh, kw), (oh, ow) = kernel, out_size
    tiles = (
        tuple(stride) == tuple(kernel)
        and tuple(dilation) == (1, 1)
        and pads == ((0, 0), (0, 0))
        and (h, w) == (oh * kh, ow * kw)
    )
    if tiles:
        blocks = reshape(x, (n, c, oh, kh, ow, kw))
        return reshape(permute(blocks, (0, 1, 3, 5, 2, 4)), (n, c, kh * kw, oh, ow))
    cols = im2col(x, kernel, dilation, pads, stride, fill=fill)
    return reshape(cols, (n, c, kh * kw, oh, ow))


def _tap_positions(input, kernel, dilation, pads, stride, out_size):
    """A constant (1, 1, kh*kw, oh, ow): where in the flattened input plane each tap reads."""
    from minitorch.factories import tensor

    width = input.shape[-1]
    (kh, kw), (dh, dw), ((top, _), (left, _)), (sh, sw), (oh, ow) = (
        kernel,
        dilation,
        pads,
        stride,
        out_size,
    )
    rows = np.arange(oh)[None, None, :, None] * sh - top + np.arange(kh)[:, None, None, None] * dh
    cols = np.arange(ow)[None, None, None, :] * sw - left + np.arange(kw)[None, :, None, None] * dw
    flat = (rows * width + cols).reshape(1, 1, kh * kw, oh, ow)  # (kh, kw, oh, ow) -> taps
    return tensor(flat, dtype=int64, device=input.device)


def _dropout_decomposition(input, p=0.5, train=True):
    """Zero each element with probability p and scale the survivors by 1 / (1 - p)."""
    if not train or p == 0:
        return input
    keep = dropout_mask(input, p)
    if p == 1:
        return mul(input, keep)  # every element dropped; nothing to scale
    return mul(mul(input, keep), 1.0 / (1.0 - p))


conv2d = register(OpDef("conv2d", "composite", None, decomposition=_conv2d_decomposition))
max_pool2d = register(
    OpDef("max_pool2d", "composite", None, decomposition=_max_pool2d_decomposition)
)
max_pool2d_with_indices = register(
    OpDef(
        "max_pool2d_with_indices",
        "composite",
        None,
        decomposition=_max_pool2d_with_indices_decomposition,
    )
)
avg_pool2d = register(
    OpDef("avg_pool2d", "composite", None, decomposition=_avg_pool2d_decomposition)
)
dropout = register(OpDef("dropout", "composite", None, decomposition=_dropout_decomposition))

# ---- helpers of the composites -----------------------------------------------------------


def _as_batch(op: str, x):
    """(x as (N, C, H, W), whether it came batched): PyTorch also takes one (C, H, W) image."""
    if len(x.shape) == 4:
        return x, True
    if len(x.shape) == 3:
        return reshape(x, (1, *x.shape)), False
    raise ShapeError(
        at_user_line(
            f"{op}: expected a 3-d (C, H, W) or 4-d (N, C, H, W) input, got shape {tuple(x.shape)}"
        )
    )


def _padding(op: str, padding, kernel, dilation, stride) -> tuple[m.Pair, m.Pair]:
    """An int, a pair, 'valid' or 'same' as ((top, bottom), (left, right))."""
    if padding == "valid":
        return ((0, 0), (0, 0))
    if padding == "same":
        if stride != (1, 1):
            raise ShapeError(
                at_user_line(f"{op}: padding='same' needs stride 1, got stride {stride}")
            )
        # The total padding keeps the size; an odd total puts the extra row below, as PyTorch.
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    ph, pw = m.pair(op, "padding", padding)
    return ((ph, ph), (pw, pw))


def _pool_geometry(op, x, kernel_size, stride, padding, ceil_mode, dilation=(1, 1)):
    """kernel, stride, per-side padding and output size of a pooling window."""
    kernel = m.pair(op, "kernel_size", kernel_size)
    stride = kernel if stride is None else m.pair(op, "stride", stride)
    ph, pw = m.pair(op, "padding", padding)
    if ph > kernel[0] // 2 or pw > kernel[1] // 2:
        raise ShapeError(
            at_user_line(f"{op}: padding {(ph, pw)} should be at most half of kernel_size {kernel}")
        )
    pads = ((ph, ph), (pw, pw))
    h, w = x.shape[2:]
    out = m.window_output_size(op, (h, w), kernel, dilation, pads, stride)
    if ceil_mode:
        # One more window over what is left over at the far end, if it starts inside the
        # input or the near padding (PyTorch's rule): pad the far side until it fits.
        extra = []
        for n, k, d, s, p, o in zip((h, w), kernel, dilation, stride, (ph, pw), out):
            left_over = (n + 2 * p - d * (k - 1) - 1) % s
            extra.append(s - left_over if left_over and o * s < n + p else 0)
        pads = ((ph, ph + extra[0]), (pw, pw + extra[1]))
        out = m.window_output_size(op, (h, w), kernel, dilation, pads, stride)
    return kernel, stride, pads, out


def _window_counts(x, kernel, stride, pads, padding, out_size, count_include_pad: bool):
    """How many elements each average-pooling window divides by: a constant of the shapes.

    The declared padding counts when count_include_pad; ceil_mode's extra padding never does.
    """
    from minitorch.factories import ones

    h, w = x.shape[2:]
    ph, pw = m.pair("avg_pool2d", "padding", padding)
    if count_include_pad:  # ones over the input and its declared padding
        counted = ones((1, 1, h + 2 * ph, w + 2 * pw), dtype=x.dtype, device=x.device)
        around = ((0, pads[0][1] - ph), (0, pads[1][1] - pw))
    else:  # ones over the input only
        counted = ones((1, 1, h, w), dtype=x.dtype, device=x.device)
        around = pads
    counts = sum(im2col(counted, kernel, (1, 1), around, stride), dim=1)  # (1, L)
    return reshape(counts, (1, 1, *out_size))


def _lowest_int(dtype) -> int:
    return -(2 ** (8 * dtype.itemsize - 1))
