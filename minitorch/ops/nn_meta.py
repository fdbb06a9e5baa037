"""Shape and dtype rules of the ops that only `minitorch.nn` needs (minitorch/ops/nn.py).

Each rule takes the op's arguments (real or fake tensors, Python values) and returns the
output's `TensorMeta`, or raises a `ShapeError`/`DTypeError` naming the op and the shapes.
"""

from __future__ import annotations

from minitorch.dtype import bool_, int64
from minitorch.errors import (
    ArgumentTypeError,
    DTypeError,
    MinitorchError,
    ShapeError,
    at_user_line,
)
from minitorch.ops.registry import TensorMeta

Pair = tuple[int, int]


def pair(op: str, name: str, value) -> Pair:
    """PyTorch's `_pair`: 3 -> (3, 3); (2, 3) stays; anything else is refused by name."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return (int(value[0]), int(value[1]))
    raise ShapeError(at_user_line(f"{op}: {name} must be an int or a pair of ints, got {value!r}"))


def check_param_shape(op: str, name: str, t, shape: tuple[int, ...]) -> None:
    """A parameter (a bias, a running mean) must have exactly `shape`; a composite checks its
    own, so that the error names it rather than the reshape or add it would fail in."""
    if t is not None and tuple(t.shape) != tuple(shape):
        raise ShapeError(
            at_user_line(f"{op}: expected {name} of shape {tuple(shape)}, got {tuple(t.shape)}")
        )


def window_output_size(
    op: str, size: Pair, kernel_size: Pair, dilation: Pair, padding: tuple[Pair, Pair], stride: Pair
) -> Pair:
    """How many windows fit along H and W.

    out = (size + pad_before + pad_after - dilation * (kernel - 1) - 1) // stride + 1
    """
    out = []
    for n, k, d, (before, after), s in zip(size, kernel_size, dilation, padding, stride):
        if k < 1 or d < 1 or s < 1 or before < 0 or after < 0:
            raise ShapeError(
                at_user_line(
                    f"{op}: kernel_size {kernel_size}, dilation {dilation} and stride {stride} "
                    f"must be positive and padding {padding} non-negative"
                )
            )
        span = n + before + after - d * (k - 1) - 1
        if span < 0:
            raise ShapeError(
                at_user_line(
                    f"{op}: a window of kernel_size {kernel_size} with dilation {dilation} does "
                    "not "
                    f"fit an input of size {tuple(size)} padded by {padding}"
                )
            )
        out.append(span // s + 1)
    return (out[0], out[1])


def im2col_meta(
    x,
    kernel_size: Pair,
    dilation: Pair,
    padding: tuple[Pair, Pair],
    stride: Pair,
    fill: float = 0.0,
) -> TensorMeta:
    """(N, C, H, W) -> (N, C * kh * kw, L): one column per window, L windows."""
    if len(x.shape) != 4:
        raise ShapeError(
            at_user_line(f"im2col: expected a 4-d input (N, C, H, W), got shape {tuple(x.shape)}")
        )
    n, c, h, w = x.shape
    oh, ow = window_output_size("im2col", (h, w), kernel_size, dilation, padding, stride)
    return TensorMeta((n, c * kernel_size[0] * kernel_size[1], oh * ow), x.dtype)


def col2im_meta(
    cols,
    output_size: Pair,
    kernel_size: Pair,
    dilation: Pair,
    padding: tuple[Pair, Pair],
    stride: Pair,
) -> TensorMeta:
    """(N, C * kh * kw, L) -> (N, C, H, W): the windows summed back into the image."""
    kernel = kernel_size[0] * kernel_size[1]
    if len(cols.shape) != 3 or cols.shape[1] % kernel:
        raise ShapeError(
            at_user_line(
                f"col2im: expected columns of shape (N, C * {kernel}, L) for kernel_size "
                f"{kernel_size}, got shape {tuple(cols.shape)}"
            )
        )
    oh, ow = window_output_size("col2im", output_size, kernel_size, dilation, padding, stride)
    if cols.shape[2] != oh * ow:
        raise ShapeError(
            at_user_line(
                f"col2im: columns of shape {tuple(cols.shape)} hold {cols.shape[2]} windows, but "
                f"an output of size {tuple(output_size)} has {oh} x {ow} = {oh * ow}"
            )
        )
    n, ck, _ = cols.shape
    return TensorMeta((n, ck // kernel, *output_size), cols.dtype)


def _check_indices(op: str, indices) -> None:
    if indices.dtype.category != 1:  # int32 or int64
        raise DTypeError(
            at_user_line(
                f"{op}: expected indices of dtype int64 or int32, got {indices.dtype.name}"
            )
        )


def embedding_meta(weight, indices, padding_idx: int | None = None) -> TensorMeta:
    """weight (V, D), indices of any shape S -> (*S, D)."""
    if len(weight.shape) != 2:
        raise ShapeError(
            at_user_line(
                f"embedding: expected a 2-d weight (num_embeddings, embedding_dim), "
                f"got shape {tuple(weight.shape)}"
            )
        )
    _check_indices("embedding", indices)
    return TensorMeta((*indices.shape, weight.shape[1]), weight.dtype)


def dropout_mask_meta(x, p: float) -> TensorMeta:
    """A bool mask of x's shape."""
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise ArgumentTypeError(
            at_user_line(f"dropout: p must be a number, got {type(p).__name__}")
        )
    if not 0.0 <= p <= 1.0:
        raise MinitorchError(
            at_user_line(f"dropout probability has to be between 0 and 1, but got {p}")
        )
    if not x.dtype.is_floating_point:
        raise DTypeError(
            at_user_line(f"dropout: expected a floating-point input, got {x.dtype.name}")
        )
    return TensorMeta(tuple(x.shape), bool_)


def rng_state_meta(x) -> TensorMeta:
    """The generator's (seed, offset) as two int64s ([Note: counter-based random numbers])."""
    return TensorMeta((2,), int64)


def dropout_keep_meta(x, p: float, state) -> TensorMeta:
    """dropout_mask's rule, and a state of two int64s."""
    if tuple(state.shape) != (2,) or state.dtype is not int64:
        raise ShapeError(
            at_user_line(
                f"dropout_keep: expected a state of two int64s (seed, offset), got "
                f"{state.dtype.name}{tuple(state.shape)}"
            )
        )
    return dropout_mask_meta(x, p)
