"""More of `nn.functional`: `conv_transpose2d`, `instance_norm`, `elu`, `silu`, `one_hot`,
`scaled_dot_product_attention`, with PyTorch's signatures.

Every function is a composition of the op table's ops, so it differentiates, traces and
compiles with every backend for free. The one worth reading is conv_transpose2d:

[Note: transposed convolution as col2im]
conv_transpose2d is the adjoint of conv2d: <conv2d(x, w), y> == <x, conv_transpose2d(y, w)>.
conv2d is `weight @ im2col(x)` ([Note: convolution as im2col] in minitorch/ops/nn.py), so its
adjoint is `col2im(weight.T @ y)`: each input pixel y[c, i, j] spreads its value, weighted by
the filter, over the output window at (i * stride, j * stride). Padding crops that full
output (col2im's padding), and output_padding adds rows and columns at the bottom right that
the crop would otherwise remove (col2im crops less there).
"""

from __future__ import annotations

import math

from minitorch import factories, ops
from minitorch.dtype import bool_, int64
from minitorch.errors import DTypeError, MinitorchError, ShapeError, at_user_line
from minitorch.functional._common import check_tensor
from minitorch.nn._data import copy_into
from minitorch.nn.functional_shape import pad
from minitorch.ops.nn_meta import check_param_shape, pair
from minitorch.tensor import Tensor

__all__ = [
    "conv_transpose2d",
    "elu",
    "instance_norm",
    "one_hot",
    "scaled_dot_product_attention",
    "silu",
]

# ---- transposed convolution --------------------------------------------------------------


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """(N, C_in, H, W) with weight (C_in, C_out / groups, kh, kw) -> (N, C_out, H', W'),
    H' = (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1.

    See [Note: transposed convolution as col2im].
    """
    check_tensor("conv_transpose2d", input)
    check_tensor("conv_transpose2d", weight)
    _check_conv_transpose(input, weight, groups)
    batched = input.ndim == 4
    x = input if batched else ops.reshape(input, (1, *input.shape))
    stride = pair("conv_transpose2d", "stride", stride)
    padding = pair("conv_transpose2d", "padding", padding)
    dilation = pair("conv_transpose2d", "dilation", dilation)
    extra = pair("conv_transpose2d", "output_padding", output_padding)
    n, c_in, h, w = x.shape
    c_out_g, kh, kw = weight.shape[1:]
    check_param_shape("conv_transpose2d", "bias", bias, (c_out_g * groups,))
    sizes = [
        _transposed_size(*args) for args in zip((h, w), stride, padding, dilation, (kh, kw), extra)
    ]
    x_g = ops.reshape(x, (n, groups, c_in // groups, h * w))  # (N, G, C_in/G, L)
    w_g = ops.reshape(weight, (groups, c_in // groups, c_out_g * kh * kw))
    cols = ops.matmul(ops.transpose(w_g, 1, 2), x_g)  # (N, G, C_out/G * kh * kw, L)
    cols = ops.reshape(cols, (n, groups * c_out_g * kh * kw, h * w))
    # crop `padding` at the top left; at the bottom right crop padding - output_padding,
    # and where that is negative, crop nothing and pad with zeros afterwards
    crop = tuple((p, max(p - e, 0)) for p, e in zip(padding, extra))
    zeros = [max(e - p, 0) for p, e in zip(padding, extra)]
    size = (sizes[0] - zeros[0], sizes[1] - zeros[1])
    out = ops.col2im(cols, size, (kh, kw), dilation, crop, stride)
    if any(zeros):
        out = pad(out, (0, zeros[1], 0, zeros[0]))
    if bias is not None:
        out = ops.add(out, ops.reshape(bias, (1, -1, 1, 1)))
    return out if batched else ops.reshape(out, tuple(out.shape[1:]))


def _check_conv_transpose(x: Tensor, weight: Tensor, groups: int) -> None:
    if x.ndim not in (3, 4) or weight.ndim != 4:
        raise ShapeError(
            at_user_line(
                f"conv_transpose2d: expected a 3D or 4D input and a 4D weight (C_in, C_out/groups, "
                f"kh, kw), got shapes {tuple(x.shape)} and {tuple(weight.shape)}"
            )
        )
    channels = x.shape[-3]
    if not isinstance(groups, int) or groups < 1 or channels % groups:
        raise ShapeError(
            at_user_line(
                f"conv_transpose2d: groups must be a positive int dividing the input's channels "
                f"{channels}, got {groups!r}"
            )
        )
    if weight.shape[0] != channels:
        raise ShapeError(
            at_user_line(
                f"conv_transpose2d: Given transposed=1, weight of size {tuple(weight.shape)}, "
                f"expected input{tuple(x.shape)} to have {weight.shape[0]} channels, but got "
                f"{channels} channels instead"
            )
        )


def _transposed_size(
    n: int, stride: int, padding: int, dilation: int, kernel: int, extra: int
) -> int:
    """One dim of the output, after PyTorch's checks of its arguments."""
    if stride <= 0 or dilation <= 0 or padding < 0 or extra < 0:
        raise ShapeError(
            at_user_line(
                f"conv_transpose2d: stride {stride} and dilation {dilation} must be positive, "
                f"padding {padding} and output_padding {extra} non-negative"
            )
        )
    if extra >= stride and extra >= dilation:
        raise ShapeError(
            at_user_line(
                f"conv_transpose2d: output padding must be smaller than either stride or "
                f"dilation, but got output_padding {extra}, stride {stride}, dilation {dilation}"
            )
        )
    size = (n - 1) * stride - 2 * padding + dilation * (kernel - 1) + extra + 1
    if size <= 0:
        raise ShapeError(
            at_user_line(
                f"conv_transpose2d: the output size {size} is too small (input size {n}, "
                f"padding {padding})"
            )
        )
    return size


# ---- normalisation -----------------------------------------------------------------------


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel of each sample of (N, C, *) over its positions.

    With use_input_stats (the default), the running statistics, if given, move towards the
    batch's, averaged over the samples (the variance unbiased, as batch_norm's); without it,
    the running statistics are used.
    """
    check_tensor("instance_norm", input)
    if input.ndim < 3:
        raise ShapeError(
            at_user_line(
                f"instance_norm: expected an input of shape (N, C, *), got {tuple(input.shape)}"
            )
        )
    channels = input.shape[1]
    for name, t in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        check_param_shape("instance_norm", name, t, (channels,))
    shape = (1, channels) + (1,) * (input.ndim - 2)  # a per-channel value, broadcastable
    if use_input_stats:
        count = input.numel() // max(input.shape[0] * channels, 1)
        if count <= 1:
            raise ShapeError(
                at_user_line(
                    f"Expected more than 1 spatial element when training, got input size "
                    f"{list(input.shape)}"
                )
            )
        dims = tuple(range(2, input.ndim))
        mean = ops.mean(input, dim=dims, keepdim=True)
        var = ops.var(input, dim=dims, correction=0, keepdim=True)
        if running_mean is not None and running_var is not None:
            _update_running(running_mean, running_var, mean, var, count, momentum)
    else:
        if running_mean is None or running_var is None:
            raise MinitorchError(
                at_user_line(
                    "Expected running_mean and running_var to be defined when use_input_stats is "
                    "false"
                )
            )
        mean, var = ops.reshape(running_mean, shape), ops.reshape(running_var, shape)
    out = ops.mul(ops.sub(input, mean), ops.pow(ops.add(var, eps), -0.5))
    if weight is not None:
        out = ops.mul(out, ops.reshape(weight, shape))
    if bias is not None:
        out = ops.add(out, ops.reshape(bias, shape))
    return out


def _update_running(
    running_mean: Tensor,
    running_var: Tensor,
    mean: Tensor,
    var: Tensor,
    count: int,
    momentum: float,
) -> None:
    """running <- (1 - momentum) * running + momentum * (the samples' mean statistic)."""
    channels = running_mean.shape[0]
    batch_mean = ops.mean(ops.reshape(mean.detach(), (-1, channels)), dim=0)
    unbiased = ops.mul(var.detach(), count / (count - 1))
    batch_var = ops.mean(ops.reshape(unbiased, (-1, channels)), dim=0)
    for running, batch in ((running_mean, batch_mean), (running_var, batch_var)):
        copy_into(running, ops.add(ops.mul(running, 1.0 - momentum), ops.mul(batch, momentum)))


# ---- activations -------------------------------------------------------------------------


def _require_float(op: str, x: Tensor) -> None:
    if not x.dtype.is_floating_point:
        raise DTypeError(at_user_line(f"{op}: expected a floating-point input, got {x.dtype.name}"))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1)."""
    check_tensor("elu", input)
    _require_float("elu", input)
    out = ops.where(ops.gt(input, 0), input, ops.mul(ops.expm1(input), alpha))
    return input.copy_(out) if inplace else out


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (the swish)."""
    check_tensor("silu", input)
    # NOTE: in place, silu's derivative must read the values the write replaces: a clone
    out = ops.silu(input.clone() if inplace else input)
    return input.copy_(out) if inplace else out


# ---- one_hot -----------------------------------------------------------------------------


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """(*) int64 class indices -> (*, num_classes) int64, 1 at each index, 0 elsewhere;
    num_classes=-1 takes the largest index + 1.

        >>> F.one_hot(torch.tensor([0, 2]), 3).tolist()
        [[1, 0, 0], [0, 0, 1]]

    The indices are checked (a value outside [0, num_classes) is an error, as in PyTorch),
    which reads them: compiled code runs this check eagerly.
    """
    check_tensor("one_hot", tensor)
    if tensor.dtype != int64:
        raise DTypeError(
            at_user_line("one_hot is only applicable to index tensor of type LongTensor.")
        )
    if tensor.numel() == 0:
        if num_classes == -1:
            raise ShapeError(
                at_user_line("Can not infer total number of classes from empty tensor.")
            )
    else:
        if int(tensor.min().item()) < 0:
            raise ShapeError(at_user_line("one_hot: Class values must be non-negative."))
        largest = int(tensor.max().item())
        if num_classes == -1:
            num_classes = largest + 1
        elif largest >= num_classes:
            raise ShapeError(
                at_user_line("one_hot: Class values must be smaller than num_classes.")
            )
    classes = factories.arange(num_classes, dtype=int64, device=tensor.device)
    hit = ops.eq(ops.unsqueeze(tensor, -1), classes)  # (*, num_classes)
    return ops.to_copy(hit, dtype=int64)


# ---- attention ---------------------------------------------------------------------------


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query @ key.T * scale + bias) @ value, as PyTorch's reference:

        (*, L, E) x (*, S, E) x (*, S, Ev) -> (*, L, Ev), scale = 1 / sqrt(E) by default.

    bias is -inf where a boolean attn_mask is False (or above the diagonal with is_causal),
    a float attn_mask itself; a query whose every key is masked gets zeros, as in PyTorch.
    dropout_p drops attention weights (always, as PyTorch's function does: it has no
    training flag).
    """
    for t in (query, key, value):
        check_tensor("scaled_dot_product_attention", t)
    _check_attention(query, key, value, attn_mask, is_causal)
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key = ops.repeat_interleave(key, query.shape[-3] // key.shape[-3], dim=-3)
        value = ops.repeat_interleave(value, query.shape[-3] // value.shape[-3], dim=-3)
    length, source = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = ops.mul(ops.matmul(query, ops.transpose(key, -2, -1)), scale)  # (*, L, S)
    if is_causal:
        allowed = ops.tril(factories.ones(length, source, dtype=bool_, device=query.device))
        scores = ops.masked_fill(scores, ops.logical_not(allowed), float("-inf"))
    if attn_mask is not None and attn_mask.dtype == bool_:
        scores = ops.masked_fill(scores, ops.logical_not(attn_mask), float("-inf"))
    elif attn_mask is not None:
        scores = ops.add(scores, attn_mask)
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = ops.dropout(weights, dropout_p, True)
    return ops.matmul(weights, value)


def _safe_softmax(scores: Tensor) -> Tensor:
    """softmax over the last dim, but 0 (not NaN) on a row whose every score is -inf.

    A query that may attend to no key has no meaningful output; PyTorch's attention (its math
    backend's _safe_softmax, and every fused kernel) returns zeros there. Such a row is
    softmaxed as zeros and then zeroed, so that its gradient is 0 too, not NaN.
    """
    dead = ops.all(ops.eq(scores, float("-inf")), dim=-1, keepdim=True)  # (*, L, 1)
    weights = ops.softmax(ops.masked_fill(scores, dead, 0.0), -1)
    return ops.masked_fill(weights, dead, 0.0)


def _check_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask, is_causal) -> None:
    if (
        min(query.ndim, key.ndim, value.ndim) < 2
        or query.shape[-1] != key.shape[-1]
        or key.shape[-2] != value.shape[-2]
    ):
        raise ShapeError(
            at_user_line(
                f"scaled_dot_product_attention: expected query (*, L, E), key (*, S, E) and value "
                f"(*, S, Ev), got shapes {tuple(query.shape)}, {tuple(key.shape)} and "
                f"{tuple(value.shape)}"
            )
        )
    if is_causal and attn_mask is not None:
        raise MinitorchError(
            at_user_line(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                "is_causal=True"
            )
        )
    if not query.dtype.is_floating_point or query.dtype != key.dtype or query.dtype != value.dtype:
        raise DTypeError(
            at_user_line(
                f"scaled_dot_product_attention: Expected query, key, and value to have the same "
                f"floating-point dtype, but got query.dtype: {query.dtype.name}, key.dtype: "
                f"{key.dtype.name}, and value.dtype: {value.dtype.name} instead."
            )
        )
