"""`nn.functional`: the layers as functions, with PyTorch's signatures.

    >>> import minitorch.nn.functional as F
    >>> F.relu(x); F.linear(x, w, b); F.cross_entropy(logits, labels)

Each function is written in the op table's ops (minitorch/ops), so autograd, fake tensors and
graph capture see ordinary ops: convolution and pooling are `im2col` plus a matmul or a
reduction (see [Note: convolution as im2col] in minitorch/ops/nn.py); the normalisations are
means, variances and pointwise arithmetic. The losses live in functional_losses.py, pad,
pixel_shuffle and interpolate in functional_shape.py, conv_transpose2d, instance_norm, elu,
silu, one_hot and scaled_dot_product_attention in functional_extra.py; all are re-exported
here. Layers (minitorch/nn/*.py) hold parameters and call these.
"""

from __future__ import annotations

import warnings

from minitorch import ops
from minitorch.autograd.grad_mode import no_grad
from minitorch.dtype import DType
from minitorch.errors import DTypeError, MinitorchError, ShapeError, at_user_line
from minitorch.functional._common import check_tensor
from minitorch.nn import functional_extra, functional_losses, functional_shape
from minitorch.nn._data import update_running_stats
from minitorch.nn.functional_extra import *  # noqa: F403 - more layers, re-exported
from minitorch.nn.functional_losses import *  # noqa: F403 - the losses, re-exported
from minitorch.nn.functional_shape import *  # noqa: F403 - pad, interpolate, re-exported
from minitorch.ops.meta import broadcast_shapes
from minitorch.ops.nn_meta import check_param_shape, pair
from minitorch.overrides import make_overridable
from minitorch.tensor import Tensor

__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool2d",
    "batch_norm",
    "conv2d",
    "dropout",
    "embedding",
    "fold",
    "gelu",
    "group_norm",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "max_pool2d",
    "relu",
    "sigmoid",
    "softmax",
    "tanh",
    "unfold",
    *functional_losses.__all__,
    *functional_extra.__all__,
    *functional_shape.__all__,
]

# ---- linear and convolution --------------------------------------------------------------


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias: (*, in_features) -> (*, out_features)."""
    check_tensor("linear", input)
    check_tensor("linear", weight)
    if weight.ndim != 2 or input.ndim == 0:
        raise ShapeError(
            at_user_line(
                f"linear: expected an input of at least 1 dim and a 2-d weight (out_features, "
                f"in_features), got shapes {tuple(input.shape)} and {tuple(weight.shape)}"
            )
        )
    if input.shape[-1] != weight.shape[1]:
        raise ShapeError(
            at_user_line(
                f"linear: input of shape {tuple(input.shape)} and weight of shape "
                f"{tuple(weight.shape)} cannot be multiplied ({input.shape[-1]} != "
                f"{weight.shape[1]})"
            )
        )
    out = ops.matmul(input, ops.transpose(weight, 0, 1))
    if bias is None:
        return out
    broadcast_shapes("linear", tuple(out.shape), tuple(bias.shape))  # names linear, not add
    return ops.add(out, bias)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """2-d cross-correlation of (N, C, H, W) with filters (O, C/groups, kh, kw).

    padding is an int, a pair, 'valid' (none) or 'same' (output size = input size, stride 1).
    """
    check_tensor("conv2d", input)
    return ops.conv2d(input, weight, bias, stride, padding, dilation, groups)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Every sliding window as a column: (N, C, H, W) -> (N, C * kh * kw, L)."""
    check_tensor("unfold", input)
    x = input if input.ndim == 4 else ops.reshape(input, (1, *input.shape))
    ph, pw = pair("unfold", "padding", padding)
    cols = ops.im2col(
        x,
        pair("unfold", "kernel_size", kernel_size),
        pair("unfold", "dilation", dilation),
        ((ph, ph), (pw, pw)),
        pair("unfold", "stride", stride),
    )
    return cols if input.ndim == 4 else ops.reshape(cols, tuple(cols.shape[1:]))


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """unfold's adjoint: add each column back onto its window, (N, C*kh*kw, L) -> (N, C, H, W)."""
    check_tensor("fold", input)
    x = input if input.ndim == 3 else ops.reshape(input, (1, *input.shape))
    ph, pw = pair("fold", "padding", padding)
    out = ops.col2im(
        x,
        pair("fold", "output_size", output_size),
        pair("fold", "kernel_size", kernel_size),
        pair("fold", "dilation", dilation),
        ((ph, ph), (pw, pw)),
        pair("fold", "stride", stride),
    )
    return out if input.ndim == 3 else ops.reshape(out, tuple(out.shape[1:]))


# ---- pooling -----------------------------------------------------------------------------


def max_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """The max of each window; stride defaults to kernel_size. With return_indices, also
    where each max came from (an index into the flattened H * W plane)."""
    check_tensor("max_pool2d", input)
    op = ops.max_pool2d_with_indices if return_indices else ops.max_pool2d
    return op(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override=None,
) -> Tensor:
    """The mean of each window; stride defaults to kernel_size."""
    check_tensor("avg_pool2d", input)
    return ops.avg_pool2d(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, H, W) or (C, H, W) down to output_size (an int, or a pair whose None
    entries keep the input's size), whatever H and W are.

    Output row i averages input rows floor(i * H / out) up to ceil((i + 1) * H / out), and
    likewise for columns: the bins cover the input, and neighbours share a row where out does
    not divide H. A bin of the grid is a rectangle, so its mean is the mean over its columns
    of the means over its rows: the function pools the rows, then the columns.
    """
    check_tensor("adaptive_avg_pool2d", input)
    if input.ndim not in (3, 4):
        raise ShapeError(
            at_user_line(
                f"adaptive_avg_pool2d: expected a 3D or 4D input, got shape {tuple(input.shape)}"
            )
        )
    height, width = input.shape[-2:]
    out_h, out_w = _adaptive_size(output_size, (height, width))
    if (out_h, out_w) == (height, width):
        return ops.clone(input)  # a new tensor, as PyTorch's: never the input itself
    return _pool_dim(_pool_dim(input, input.ndim - 2, out_h), input.ndim - 1, out_w)


def _adaptive_size(output_size, size: tuple[int, int]) -> tuple[int, int]:
    """output_size as a pair of positive ints; None keeps that dim's input size."""
    asked = (
        (output_size, output_size)
        if not isinstance(output_size, (tuple, list))
        else tuple(output_size)
    )
    if len(asked) != 2:
        raise ShapeError(
            at_user_line(f"adaptive_avg_pool2d: output_size must be 2, got {output_size!r}")
        )
    sizes = tuple(n if out is None else out for out, n in zip(asked, size))
    if any(not isinstance(out, int) or out <= 0 for out in sizes) or min(size) <= 0:
        raise ShapeError(
            at_user_line(
                f"adaptive_avg_pool2d: output_size {output_size!r} and the input's spatial size "
                f"{size} must be positive"
            )
        )
    return sizes


def _pool_dim(x, dim: int, out: int):
    """Average dim (of size n) down to `out` bins by the rule of adaptive_avg_pool2d."""
    n = x.shape[dim]
    if out == n:
        return x
    if n % out == 0:  # equal bins, side by side: one reshape and one mean
        shape = (*x.shape[:dim], out, n // out, *x.shape[dim + 1 :])
        return ops.mean(ops.reshape(x, shape), dim=dim + 1)
    before = (slice(None),) * dim
    bins = [x[(*before, slice(i * n // out, -(-(i + 1) * n // out)))] for i in range(out)]
    return ops.cat(*[ops.mean(b, dim=dim, keepdim=True) for b in bins], dim=dim)


# ---- activations -------------------------------------------------------------------------


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    check_tensor("relu", input)
    # NOTE: relu_, not clamp_(min=0): clamp's derivative at x == 0 is 1, relu's is 0.
    return input.relu_() if inplace else ops.relu(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    check_tensor("leaky_relu", input)
    if not input.dtype.is_floating_point:
        raise DTypeError(
            at_user_line(f"leaky_relu: expected a floating-point input, got {input.dtype.name}")
        )
    if inplace:
        with no_grad():  # the slope of each element is a constant; mul_ records the product
            slope = ops.where(ops.gt(input, 0), 1.0, negative_slope)
        return input.mul_(slope)
    return ops.where(ops.gt(input, 0), input, ops.mul(input, negative_slope))


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF; approximate='tanh' uses the tanh formula."""
    check_tensor("gelu", input)
    return ops.gelu(input, approximate=approximate)


def sigmoid(input: Tensor) -> Tensor:
    check_tensor("sigmoid", input)
    return ops.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    check_tensor("tanh", input)
    return ops.tanh(input)


def _softmax_dim(op: str, ndim: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {op} has been deprecated. Change the call "
        "to include dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: DType | None = None
) -> Tensor:
    """exp(x) / sum(exp(x)) along dim, computed without overflow."""
    check_tensor("softmax", input)
    dim = _softmax_dim("softmax", input.ndim) if dim is None else dim
    x = input if dtype is None else input.to(dtype)
    return ops.softmax(x, dim)


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: DType | None = None
) -> Tensor:
    """x - log(sum(exp(x))) along dim, computed without overflow."""
    check_tensor("log_softmax", input)
    dim = _softmax_dim("log_softmax", input.ndim) if dim is None else dim
    x = input if dtype is None else input.to(dtype)
    return ops.log_softmax(x, dim)


# ---- dropout and embedding ---------------------------------------------------------------


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """While training, zero each element with probability p and scale the rest by 1/(1-p)."""
    check_tensor("dropout", input)
    if not inplace:
        return ops.dropout(input, p, training)
    if not training or p == 0:
        return input
    with no_grad():  # the scaled mask is a constant; mul_ records the product itself
        keep = ops.to_copy(ops.dropout_mask(input, p), dtype=input.dtype)
        scale = keep if p == 1 else ops.mul(keep, 1.0 / (1.0 - p))
    return input.mul_(scale)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm=None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """weight[input]: row i of the table for each index i; the padding_idx row gets no grad."""
    check_tensor("embedding", input)
    check_tensor("embedding", weight)
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise MinitorchError(
            at_user_line("embedding: max_norm, scale_grad_by_freq and sparse are not supported")
        )
    if padding_idx is not None:
        num = weight.shape[0]
        if not -num <= padding_idx < num:
            raise ShapeError(
                at_user_line(
                    f"embedding: padding_idx {padding_idx} must be within num_embeddings {num}"
                )
            )
        padding_idx %= num
    return ops.embedding(weight, input, padding_idx=padding_idx)


# ---- normalisation -----------------------------------------------------------------------


def _normalize(x, mean, var, eps: float):
    """(x - mean) / sqrt(var + eps)."""
    return ops.mul(ops.sub(x, mean), ops.pow(ops.add(var, eps), -0.5))


def _affine(x, weight, bias, shape: tuple[int, ...]):
    """x * weight + bias, each reshaped to `shape` to broadcast (either may be None)."""
    if weight is not None:
        x = ops.mul(x, ops.reshape(weight, shape))
    if bias is not None:
        x = ops.add(x, ops.reshape(bias, shape))
    return x


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel (dim 1) over the batch and every spatial position.

    Training: use the batch's mean and (biased) variance, and move the running statistics
    towards them, running = (1 - momentum) * running + momentum * batch, with the unbiased
    variance. Evaluation: use the running statistics.
    """
    check_tensor("batch_norm", input)
    if input.ndim < 2:
        raise ShapeError(
            at_user_line(
                f"batch_norm: expected an input of shape (N, C, ...), got {tuple(input.shape)}"
            )
        )
    channels = input.shape[1]
    for name, t in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        check_param_shape("batch_norm", name, t, (channels,))
    dims = (0, *range(2, input.ndim))  # every dim but the channels
    shape = (1, channels) + (1,) * (input.ndim - 2)  # a per-channel value, broadcastable
    if training:
        count = input.numel() // max(channels, 1)
        if count <= 1:
            raise ShapeError(
                at_user_line(
                    f"Expected more than 1 value per channel when training, got input size "
                    f"{input.shape}"
                )
            )
        mean = ops.mean(input, dim=dims, keepdim=True)
        var = ops.var(input, dim=dims, correction=0, keepdim=True)
        if running_mean is not None and running_var is not None:
            update_running_stats(running_mean, running_var, mean, var, count, momentum)
    else:
        if running_mean is None or running_var is None:
            raise MinitorchError(
                at_user_line(
                    "batch_norm: running_mean and running_var are needed when training=False"
                )
            )
        mean, var = ops.reshape(running_mean, shape), ops.reshape(running_var, shape)
    return _affine(_normalize(input, mean, var, eps), weight, bias, shape)


def layer_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the last len(normalized_shape) dims of each sample, then scale/shift."""
    check_tensor("layer_norm", input)
    normalized_shape = (
        (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    )
    k = len(normalized_shape)
    if k == 0 or tuple(input.shape[input.ndim - k :]) != normalized_shape or input.ndim < k:
        raise ShapeError(
            at_user_line(
                f"layer_norm: given normalized_shape={list(normalized_shape)}, expected input with "
                f"shape [*, {', '.join(map(str, normalized_shape))}], but got input of size "
                f"{list(input.shape)}"
            )
        )
    check_param_shape("layer_norm", "weight", weight, normalized_shape)
    check_param_shape("layer_norm", "bias", bias, normalized_shape)
    dims = tuple(range(input.ndim - k, input.ndim))
    mean = ops.mean(input, dim=dims, keepdim=True)
    var = ops.var(input, dim=dims, correction=0, keepdim=True)
    return _affine(_normalize(input, mean, var, eps), weight, bias, normalized_shape)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Split the C channels of (N, C, *) into num_groups groups; normalise each group of each
    sample over its channels and positions; then scale and shift per channel.

    Unlike batch_norm it does not look across the batch, so it is the same in training and
    evaluation and works for a batch of one.
    """
    check_tensor("group_norm", input)
    channels = input.shape[1] if input.ndim >= 2 else 0
    if input.ndim < 2 or num_groups <= 0 or channels % num_groups != 0:
        raise ShapeError(
            at_user_line(
                f"group_norm: expected an input of shape (N, C, *) with C divisible by "
                f"num_groups={num_groups}, got {tuple(input.shape)}"
            )
        )
    check_param_shape("group_norm", "weight", weight, (channels,))
    check_param_shape("group_norm", "bias", bias, (channels,))
    grouped = ops.reshape(input, (input.shape[0], num_groups, -1))  # (N, G, C/G * prod(*))
    mean = ops.mean(grouped, dim=2, keepdim=True)
    var = ops.var(grouped, dim=2, correction=0, keepdim=True)
    out = ops.reshape(_normalize(grouped, mean, var, eps), tuple(input.shape))
    return _affine(out, weight, bias, (1, channels) + (1,) * (input.ndim - 2))


# Every public function (the losses re-exported from functional_losses.py too) hands a Proxy
# (any __torch_function__ type) to it: see [Note: __torch_function__] in minitorch/overrides.py.
make_overridable(globals(), __all__)
