"""The functions that move pixels rather than compute new ones: `pad`, `pixel_shuffle`,
`pixel_unshuffle` and `interpolate`, with PyTorch's signatures.

Each is a composition of views, slices, `cat` and indexing by a Python list, so autograd,
fake tensors and graph capture see ordinary ops and every backend compiles them for free.

[Note: padding as slices]
Padding one dim by (before, after) glues two pieces onto the tensor along that dim:

    constant   full(value)          x           full(value)
    reflect    x[1:before+1] flipped x          x[-after-1:-1] flipped   (the edge not repeated)
    replicate  x[0:1] expanded      x           x[-1:] expanded
    circular   x[-before:]          x           x[:after]

A negative amount (constant mode) crops instead. `pad` lists the amounts from the last dim
backwards, (left, right, top, bottom, ...), and pads one dim at a time.
"""

from __future__ import annotations

import math

import numpy as np

from minitorch import factories, ops
from minitorch.dtype import int64
from minitorch.errors import MinitorchError, ShapeError, at_user_line
from minitorch.functional._common import check_tensor
from minitorch.tensor import Tensor

__all__ = ["interpolate", "pad", "pixel_shuffle", "pixel_unshuffle"]

_PAD_MODES = ("constant", "reflect", "replicate", "circular")

# ---- pad ---------------------------------------------------------------------------------


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last len(pad) // 2 dims; pad = (left, right, top, bottom, front, back).

        >>> F.pad(torch.ones(1, 2), (1, 2)).tolist()
        [[0.0, 1.0, 1.0, 0.0, 0.0]]

    mode 'constant' pads any number of dims with `value` (0 by default); 'reflect',
    'replicate' and 'circular' pad the last 1, 2 or 3 dims of a (batched) 1-, 2- or 3-d
    signal, as PyTorch does. See [Note: padding as slices].
    """
    check_tensor("pad", input)
    amounts = _check_pad(input, tuple(pad), mode, value)
    out = input
    for k in range(len(amounts) // 2):  # amounts[0:2] pad the last dim
        dim = input.ndim - 1 - k
        out = _pad_dim(out, dim, amounts[2 * k], amounts[2 * k + 1], mode, value or 0)
    return out if out is not input else ops.clone(input)  # a new tensor, never the input


def _check_pad(x: Tensor, amounts: tuple, mode: str, value) -> tuple[int, ...]:
    """PyTorch's checks of F.pad's arguments, in its order."""
    if mode not in _PAD_MODES:
        raise MinitorchError(
            at_user_line(f"pad: mode must be one of {', '.join(_PAD_MODES)}, got {mode!r}")
        )
    if any(not isinstance(a, int) or isinstance(a, bool) for a in amounts):
        raise ShapeError(at_user_line(f"pad: expected a sequence of ints, got {amounts!r}"))
    if len(amounts) % 2:
        raise ShapeError(at_user_line("pad: Padding length must be divisible by 2"))
    if len(amounts) // 2 > x.ndim:
        raise ShapeError(
            at_user_line(
                f"pad: Padding length should be less than or equal to two times the input "
                f"dimension but got padding length {len(amounts)} and input of dimension {x.ndim}"
            )
        )
    for k in range(len(amounts) // 2):
        dim = x.ndim - 1 - k
        if x.shape[dim] + amounts[2 * k] + amounts[2 * k + 1] < 0:
            raise ShapeError(
                at_user_line(
                    f"pad: The input size {x.shape[dim]}, plus negative padding "
                    f"{amounts[2 * k]} and {amounts[2 * k + 1]} resulted in a negative output "
                    f"size, which is invalid. Check dimension {dim} of your input."
                )
            )
    if mode == "constant":
        return amounts
    if value is not None and value != 0:
        raise MinitorchError(
            at_user_line(f'pad: Padding mode "{mode}" doesn\'t take in value argument')
        )
    dims = len(amounts) // 2
    if dims not in (1, 2, 3) or x.ndim not in (dims + 1, dims + 2):
        raise MinitorchError(
            at_user_line(
                f"pad: mode {mode!r} pads the last 1, 2 or 3 dims of a 2-3, 3-4 or 4-5 dim input "
                f"(as PyTorch); got padding length {len(amounts)} and input of shape "
                f"{tuple(x.shape)}"
            )
        )
    if min(amounts) < 0:
        raise MinitorchError(
            at_user_line(
                f"pad: negative padding {amounts} in mode {mode!r} is not supported here "
                f"(only in mode 'constant')"
            )
        )
    for k in range(dims):
        size = x.shape[x.ndim - 1 - k]
        limit = size - 1 if mode == "reflect" else size
        if mode != "replicate" and max(amounts[2 * k : 2 * k + 2]) > limit or size == 0:
            raise ShapeError(
                at_user_line(
                    f"pad: padding {amounts[2 * k : 2 * k + 2]} in mode {mode!r} must be at most "
                    f"{limit} for dim {x.ndim - 1 - k} of input of shape {tuple(x.shape)}"
                )
            )
    return amounts


def _slice(x: Tensor, dim: int, start: int, stop: int) -> Tensor:
    """x[..., start:stop, ...] with the slice on `dim`."""
    return x[(slice(None),) * dim + (slice(start, stop),)]


def _pad_dim(x: Tensor, dim: int, before: int, after: int, mode: str, value) -> Tensor:
    """Pad (or, negative, crop) one dim; see [Note: padding as slices]."""
    size = x.shape[dim]
    if before < 0 or after < 0:  # constant mode only: crop first
        x = _slice(x, dim, max(-before, 0), size - max(-after, 0))
        before, after = max(before, 0), max(after, 0)
    if before == 0 and after == 0:
        return x
    head = [_edge(x, dim, before, mode, value, at_start=True)] if before else []
    tail = [_edge(x, dim, after, mode, value, at_start=False)] if after else []
    return ops.cat(*head, x, *tail, dim=dim)


def _edge(x: Tensor, dim: int, n: int, mode: str, value, at_start: bool) -> Tensor:
    """The n slices glued before (at_start) or after x along dim."""
    size = x.shape[dim]
    shape = tuple(n if d == dim else s for d, s in enumerate(x.shape))
    if mode == "constant":
        return factories.full(shape, value, dtype=x.dtype, device=x.device)
    if mode == "reflect":
        piece = _slice(x, dim, 1, n + 1) if at_start else _slice(x, dim, size - 1 - n, size - 1)
        return ops.flip(piece, (dim,))
    if mode == "replicate":
        piece = _slice(x, dim, 0, 1) if at_start else _slice(x, dim, size - 1, size)
        return ops.expand(piece, shape)
    return _slice(x, dim, size - n, size) if at_start else _slice(x, dim, 0, n)  # circular


# ---- pixel shuffle -----------------------------------------------------------------------


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r): each group of r * r channels becomes an
    r x r block of pixels (sub-pixel convolution's upsampling)."""
    check_tensor("pixel_shuffle", input)
    r = upscale_factor
    _check_shuffle("pixel_shuffle", input, r)
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise ShapeError(
            at_user_line(
                f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
            )
        )
    k = len(batch)
    x = ops.reshape(input, (*batch, c // (r * r), r, r, h, w))
    x = ops.permute(x, (*range(k), k, k + 3, k + 1, k + 4, k + 2))  # (*, C, H, r, W, r)
    return ops.reshape(x, (*batch, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W): pixel_shuffle's inverse."""
    check_tensor("pixel_unshuffle", input)
    r = downscale_factor
    _check_shuffle("pixel_unshuffle", input, r)
    *batch, c, h, w = input.shape
    if h % r or w % r:
        raise ShapeError(
            at_user_line(
                f"pixel_unshuffle expects height and width to be divisible by downscale_factor "
                f"{r}, got input of shape {tuple(input.shape)}"
            )
        )
    k = len(batch)
    x = ops.reshape(input, (*batch, c, h // r, r, w // r, r))
    x = ops.permute(x, (*range(k), k, k + 2, k + 4, k + 1, k + 3))  # (*, C, r, r, H, W)
    return ops.reshape(x, (*batch, c * r * r, h // r, w // r))


def _check_shuffle(op: str, x: Tensor, r) -> None:
    if x.ndim < 3:
        raise ShapeError(
            at_user_line(
                f"{op} expects input to have at least 3 dimensions, but got input with "
                f"{x.ndim} dimension(s)"
            )
        )
    if not isinstance(r, int) or isinstance(r, bool) or r <= 0:
        raise ShapeError(at_user_line(f"{op}: the factor must be a positive int, got {r!r}"))


# ---- interpolate -------------------------------------------------------------------------

_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3}


def interpolate(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of (N, C, *spatial) by `size` or `scale_factor`.

    Modes: 'nearest' and 'nearest-exact' (1, 2 or 3 spatial dims), 'linear' (1),
    'bilinear' (2), 'trilinear' (3), 'area' (1 or 2: adaptive average pooling to the output
    size). Output pixel i reads input coordinate src(i):

        nearest        floor(i * scale)                      scale = in / out,
        nearest-exact  floor((i + 0.5) * scale)              or 1 / scale_factor when given
        linear         (i + 0.5) * scale - 0.5, at least 0   (align_corners=False)
                       i * (in - 1) / (out - 1)              (align_corners=True)

    and a linear mode mixes the two neighbours of src(i) by their distance, one dim at a time.
    """
    check_tensor("interpolate", input)
    spatial = input.ndim - 2
    _check_interpolate(input, mode, align_corners, antialias)
    out_size, scales = _output_size(input, size, scale_factor, recompute_scale_factor)
    if mode == "area":
        return _area(input, out_size)
    out = input
    for k in range(spatial):
        dim, n_in, n_out = 2 + k, input.shape[2 + k], out_size[k]
        if mode in _LINEAR_MODES:
            out = _linear_dim(out, dim, n_in, n_out, scales[k], bool(align_corners))
        else:
            out = _take(out, dim, _nearest_index(n_in, n_out, scales[k], mode))
    return out if out is not input else ops.clone(input)


def _check_interpolate(x: Tensor, mode: str, align_corners, antialias: bool) -> None:
    spatial = x.ndim - 2
    if mode in _LINEAR_MODES:
        if spatial != _LINEAR_MODES[mode]:
            raise ShapeError(
                at_user_line(
                    f"interpolate: mode {mode!r} expects a {_LINEAR_MODES[mode] + 2}D input, got "
                    f"shape {tuple(x.shape)}"
                )
            )
    elif mode in ("nearest", "nearest-exact", "area"):
        if spatial not in ((1, 2) if mode == "area" else (1, 2, 3)):
            raise ShapeError(
                at_user_line(
                    f"interpolate: mode {mode!r} expects a 3D or "
                    f"4D{'' if mode == 'area' else ' or 5D'}"
                    f" input here, got shape {tuple(x.shape)}"
                )
            )
        if align_corners is not None:
            raise MinitorchError(
                at_user_line(
                    "align_corners option can only be set with the interpolating modes: "
                    "linear | bilinear | bicubic | trilinear"
                )
            )
    else:
        raise MinitorchError(
            at_user_line(
                f"interpolate: mode {mode!r} is not supported here (nearest, nearest-exact, "
                f"linear, bilinear, trilinear, area are)"
            )
        )
    if antialias:
        raise MinitorchError(at_user_line("interpolate: antialias=True is not supported here"))


def _output_size(x: Tensor, size, scale_factor, recompute) -> tuple[list[int], list[float]]:
    """The output's spatial size, and each dim's scale from output index to input index."""
    spatial, in_size = x.ndim - 2, tuple(x.shape[2:])
    if (size is None) == (scale_factor is None):
        raise MinitorchError(
            at_user_line(
                "only one of size or scale_factor should be defined"
                if size is not None
                else "either size or scale_factor should be defined"
            )
        )
    if size is not None:
        sizes = list(size) if isinstance(size, (tuple, list)) else [size] * spatial
        if len(sizes) != spatial:
            raise ShapeError(
                at_user_line(
                    f"Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(in_size)} and output size of {size}"
                )
            )
        return sizes, [n / o if o else 0.0 for n, o in zip(in_size, sizes)]
    factors = (
        list(scale_factor) if isinstance(scale_factor, (tuple, list)) else [scale_factor] * spatial
    )
    if len(factors) != spatial:
        raise ShapeError(
            at_user_line(
                f"Input and scale_factor must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(in_size)} and scale_factor of "
                f"{scale_factor}"
            )
        )
    sizes = [int(math.floor(n * float(f))) for n, f in zip(in_size, factors)]
    if any(s <= 0 for s in sizes):
        raise ShapeError(
            at_user_line(
                f"interpolate: input of shape {tuple(x.shape)} and scale_factor {scale_factor} "
                f"give an empty output size {sizes}"
            )
        )
    if recompute:
        return sizes, [n / o for n, o in zip(in_size, sizes)]
    return sizes, [1.0 / float(f) for f in factors]


def _area(x: Tensor, out_size: list[int]) -> Tensor:
    """Mode 'area': each output pixel the mean of the input pixels its bin covers, which is
    adaptive average pooling to the output size (as PyTorch computes it)."""
    from minitorch.nn.functional import adaptive_avg_pool2d  # it imports this module

    if x.ndim == 4:
        return adaptive_avg_pool2d(x, tuple(out_size))
    rows = ops.unsqueeze(x, -2)  # (N, C, 1, L)
    return ops.squeeze(adaptive_avg_pool2d(rows, (1, out_size[0])), -2)


def _take(x: Tensor, dim: int, index: list[int] | Tensor) -> Tensor:
    """x.index_select(dim, index), index a Python list or a 1-d int64 tensor."""
    return x[(slice(None),) * dim + (index,)]


def _nearest_index(n_in: int, n_out: int, scale: float, mode: str) -> list[int]:
    """The input index each output index reads.

    NOTE: in float32, as PyTorch's kernels compute it (`floorf(i * scale)`, scale a float),
    so that an index on the edge of a rounding rounds the same way.
    """
    offset = np.float32(0.5 if mode == "nearest-exact" else 0.0)
    scale32 = np.float32(scale)
    return [min(int(np.floor((np.float32(i) + offset) * scale32)), n_in - 1) for i in range(n_out)]


def _linear_dim(
    x: Tensor, dim: int, n_in: int, n_out: int, scale: float, align_corners: bool
) -> Tensor:
    """Linear interpolation along one dim: x[i0] + (x[i1] - x[i0]) * w.

    The source coordinates are computed as tensors, in x's dtype as PyTorch's kernels do, so
    that i0 = floor(src) and w = src - i0 come from the same rounded value (and tracing reads
    no data).
    """
    if align_corners:
        scale = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    dst = factories.arange(n_out, dtype=x.dtype, device=x.device)
    if align_corners:
        src = ops.mul(dst, scale)
    else:
        src = ops.clamp(ops.sub(ops.mul(ops.add(dst, 0.5), scale), 0.5), 0.0, None)
    low = ops.clamp(ops.to_copy(src, dtype=int64), 0, n_in - 1)  # floor: src >= 0
    high = ops.clamp(ops.add(low, 1), 0, n_in - 1)
    shape = [1] * x.ndim
    shape[dim] = n_out
    w = ops.reshape(ops.sub(src, ops.to_copy(low, dtype=x.dtype)), tuple(shape))
    a, b = _take(x, dim, low), _take(x, dim, high)
    return ops.add(a, ops.mul(ops.sub(b, a), w))  # a + (b - a) * w
