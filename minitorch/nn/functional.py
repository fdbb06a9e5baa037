"""`nn.functional`: the layers as functions, with PyTorch's signatures.

    >>> import minitorch.nn.functional as F
    >>> F.relu(x); F.linear(x, w, b); F.cross_entropy(logits, labels)

Each function is written in the op table's ops (minitorch/ops), so autograd, fake tensors and
graph capture see ordinary ops: convolution and pooling are `im2col` plus a matmul or a
reduction (see [Note: convolution as im2col] in minitorch/ops/nn.py); the normalisations and
losses are means, sums and pointwise arithmetic. Layers (minitorch/nn/*.py) hold parameters
and call these.
"""

from __future__ import annotations

import warnings

from minitorch import ops
from minitorch.autograd.grad_mode import no_grad
from minitorch.device import to_host
from minitorch.dtype import DType
from minitorch.errors import (
    DTypeError,
    IndexOutOfRangeError,
    MinitorchError,
    ShapeError,
    at_user_line,
)
from minitorch.fake import is_fake
from minitorch.functional._common import check_tensor
from minitorch.nn._data import copy_into
from minitorch.ops.meta import broadcast_shapes
from minitorch.ops.nn_meta import check_param_shape, pair
from minitorch.overrides import make_overridable
from minitorch.tensor import Tensor

__all__ = [
    "avg_pool2d", "batch_norm", "conv2d", "cross_entropy", "dropout", "embedding", "fold",
    "gelu", "layer_norm", "linear", "log_softmax", "max_pool2d", "mse_loss", "nll_loss", "relu",
    "sigmoid", "softmax", "tanh", "unfold",
]

# ---- linear and convolution --------------------------------------------------------------


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias: (*, in_features) -> (*, out_features)."""
    check_tensor("linear", input)
    check_tensor("linear", weight)
    if weight.ndim != 2 or input.ndim == 0:
        raise ShapeError(at_user_line(
            f"linear: expected an input of at least 1 dim and a 2-d weight (out_features, "
            f"in_features), got shapes {tuple(input.shape)} and {tuple(weight.shape)}"
        ))
    if input.shape[-1] != weight.shape[1]:
        raise ShapeError(at_user_line(
            f"linear: input of shape {tuple(input.shape)} and weight of shape "
            f"{tuple(weight.shape)} cannot be multiplied ({input.shape[-1]} != {weight.shape[1]})"
        ))
    out = ops.matmul(input, ops.transpose(weight, 0, 1))
    if bias is None:
        return out
    broadcast_shapes("linear", tuple(out.shape), tuple(bias.shape))  # names linear, not add
    return ops.add(out, bias)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
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
    cols = ops.im2col(x, pair("unfold", "kernel_size", kernel_size),
                      pair("unfold", "dilation", dilation), ((ph, ph), (pw, pw)),
                      pair("unfold", "stride", stride))
    return cols if input.ndim == 4 else ops.reshape(cols, tuple(cols.shape[1:]))


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """unfold's adjoint: add each column back onto its window, (N, C*kh*kw, L) -> (N, C, H, W)."""
    check_tensor("fold", input)
    x = input if input.ndim == 3 else ops.reshape(input, (1, *input.shape))
    ph, pw = pair("fold", "padding", padding)
    out = ops.col2im(x, pair("fold", "output_size", output_size),
                     pair("fold", "kernel_size", kernel_size), pair("fold", "dilation", dilation),
                     ((ph, ph), (pw, pw)), pair("fold", "stride", stride))
    return out if input.ndim == 3 else ops.reshape(out, tuple(out.shape[1:]))


# ---- pooling -----------------------------------------------------------------------------


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The max of each window; stride defaults to kernel_size. With return_indices, also
    where each max came from (an index into the flattened H * W plane)."""
    check_tensor("max_pool2d", input)
    op = ops.max_pool2d_with_indices if return_indices else ops.max_pool2d
    return op(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """The mean of each window; stride defaults to kernel_size."""
    check_tensor("avg_pool2d", input)
    return ops.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                          divisor_override)


# ---- activations -------------------------------------------------------------------------


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    check_tensor("relu", input)
    # clamp_ keeps the values it overwrites for the derivative, which a copy_ would not.
    return input.clamp_(min=0) if inplace else ops.relu(input)


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
    warnings.warn(f"Implicit dimension choice for {op} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: DType | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along dim, computed without overflow."""
    check_tensor("softmax", input)
    dim = _softmax_dim("softmax", input.ndim) if dim is None else dim
    x = input if dtype is None else input.to(dtype)
    return ops.softmax(x, dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: DType | None = None) -> Tensor:
    """x - log(sum(exp(x))) along dim, computed without overflow."""
    check_tensor("log_softmax", input)
    dim = _softmax_dim("log_softmax", input.ndim) if dim is None else dim
    x = input if dtype is None else input.to(dtype)
    return ops.log_softmax(x, dim)


# ---- dropout and embedding ---------------------------------------------------------------


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
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


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm=None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """weight[input]: row i of the table for each index i; the padding_idx row gets no grad."""
    check_tensor("embedding", input)
    check_tensor("embedding", weight)
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise MinitorchError(at_user_line(
            "embedding: max_norm, scale_grad_by_freq and sparse are not supported"
        ))
    if padding_idx is not None:
        num = weight.shape[0]
        if not -num <= padding_idx < num:
            raise ShapeError(at_user_line(
                f"embedding: padding_idx {padding_idx} must be within num_embeddings {num}"
            ))
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


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) over the batch and every spatial position.

    Training: use the batch's mean and (biased) variance, and move the running statistics
    towards them, running = (1 - momentum) * running + momentum * batch, with the unbiased
    variance. Evaluation: use the running statistics.
    """
    check_tensor("batch_norm", input)
    if input.ndim < 2:
        raise ShapeError(at_user_line(
            f"batch_norm: expected an input of shape (N, C, ...), got {tuple(input.shape)}"
        ))
    channels = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        check_param_shape("batch_norm", name, t, (channels,))
    dims = (0, *range(2, input.ndim))  # every dim but the channels
    shape = (1, channels) + (1,) * (input.ndim - 2)  # a per-channel value, broadcastable
    if training:
        count = input.numel() // max(channels, 1)
        if count <= 1:
            raise ShapeError(at_user_line(
                f"Expected more than 1 value per channel when training, got input size "
                f"{input.shape}"
            ))
        mean = ops.mean(input, dim=dims, keepdim=True)
        var = ops.var(input, dim=dims, correction=0, keepdim=True)
        if running_mean is not None and running_var is not None:
            with no_grad():
                unbiased = ops.mul(var, count / (count - 1))
                _blend(running_mean, ops.reshape(mean, (channels,)), momentum)
                _blend(running_var, ops.reshape(unbiased, (channels,)), momentum)
    else:
        if running_mean is None or running_var is None:
            raise MinitorchError(at_user_line(
                "batch_norm: running_mean and running_var are needed when training=False"
            ))
        mean, var = ops.reshape(running_mean, shape), ops.reshape(running_var, shape)
    return _affine(_normalize(input, mean, var, eps), weight, bias, shape)


def _blend(running, batch, momentum: float) -> None:
    """running <- (1 - momentum) * running + momentum * batch, in place."""
    copy_into(running, ops.add(ops.mul(running, 1.0 - momentum), ops.mul(batch, momentum)))


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last len(normalized_shape) dims of each sample, then scale/shift."""
    check_tensor("layer_norm", input)
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) \
        else tuple(normalized_shape)
    k = len(normalized_shape)
    if k == 0 or tuple(input.shape[input.ndim - k:]) != normalized_shape or input.ndim < k:
        raise ShapeError(at_user_line(
            f"layer_norm: given normalized_shape={list(normalized_shape)}, expected input with "
            f"shape [*, {', '.join(map(str, normalized_shape))}], but got input of size "
            f"{list(input.shape)}"
        ))
    check_param_shape("layer_norm", "weight", weight, normalized_shape)
    check_param_shape("layer_norm", "bias", bias, normalized_shape)
    dims = tuple(range(input.ndim - k, input.ndim))
    mean = ops.mean(input, dim=dims, keepdim=True)
    var = ops.var(input, dim=dims, correction=0, keepdim=True)
    return _affine(_normalize(input, mean, var, eps), weight, bias, normalized_shape)


# ---- losses ------------------------------------------------------------------------------


def _reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's reduction string, honouring its deprecated size_average/reduce flags."""
    if size_average is not None or reduce is not None:
        if reduce is False:
            return "none"
        return "sum" if size_average is False else "mean"
    if reduction not in ("none", "mean", "sum"):
        raise MinitorchError(at_user_line(f"{reduction} is not a valid value for reduction"))
    return reduction


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return ops.mean(loss)
    return ops.sum(loss) if reduction == "sum" else loss


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean") -> Tensor:
    """mean((input - target)^2) (or its sum, or per element with reduction='none')."""
    check_tensor("mse_loss", input)
    check_tensor("mse_loss", target)
    broadcast_shapes("mse_loss", tuple(input.shape), tuple(target.shape))
    diff = ops.sub(input, target)
    return _reduce(ops.mul(diff, diff), _reduction(size_average, reduce, reduction))


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """-input[n, target[n]] (times weight[target[n]]), from log-probabilities over dim 1.

    input (N, C) or (C,) or (N, C, d1, ...), target (N,) or () or (N, d1, ...) of class
    indices; targets equal to ignore_index count for nothing. 'mean' divides by the total
    weight of the targets that count.
    """
    check_tensor("nll_loss", input)
    reduction = _reduction(size_average, reduce, reduction)
    loss, weights = _nll("nll_loss", input, target, weight, ignore_index)
    if reduction == "mean":
        return ops.div(ops.sum(loss), ops.sum(weights))
    return _reduce(loss, reduction)


def _nll(op: str, log_p, target, weight, ignore_index: int):
    """(loss per target, weight per target): -w[t] * log_p[t] and w[t], 0 where ignored."""
    classes = _check_targets(op, log_p, target)
    check_param_shape(op, "weight (one entry per class)", weight, (classes,))
    _check_target_values(op, target, classes, ignore_index)
    counts = ops.ne(target, ignore_index)  # bool, target's shape
    safe = ops.where(counts, target, 0)  # an index gather can read; its loss is masked
    class_dim = 1 if log_p.ndim > 1 else 0
    picked = ops.gather(log_p, class_dim, ops.unsqueeze(safe, class_dim))
    picked = ops.reshape(picked, tuple(target.shape))  # log p of each target class
    weights = ops.to_copy(counts, dtype=log_p.dtype)
    if weight is not None:  # weight[target], zero where ignored
        chosen = ops.reshape(ops.gather(weight, 0, ops.reshape(safe, (-1,))), tuple(target.shape))
        weights = ops.mul(weights, chosen)
    return ops.neg(ops.mul(picked, weights)), weights


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """nll_loss(log_softmax(input, class dim), target): the loss of a classifier's logits.

    `target` holds class indices (integers) or class probabilities (floats, input's shape).
    label_smoothing mixes the one-hot target with the uniform distribution over classes:
    loss = (1 - eps) * nll + eps * (-sum_c w_c log p_c) / C.
    """
    check_tensor("cross_entropy", input)
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise MinitorchError(at_user_line(
            f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}"
        ))
    class_dim = 1 if input.ndim > 1 else 0
    log_p = ops.log_softmax(input, class_dim)
    if target.dtype.is_floating_point:
        return _soft_cross_entropy(log_p, target, weight, reduction, label_smoothing)
    loss, weights = _nll("cross_entropy", log_p, target, weight, ignore_index)
    if label_smoothing > 0.0:
        weighted = log_p if weight is None else ops.mul(log_p, _per_class(weight, input.ndim))
        uniform = ops.mul(ops.neg(ops.sum(weighted, dim=class_dim)), ops.ne(target, ignore_index))
        classes = input.shape[class_dim]
        loss = ops.add(ops.mul(loss, 1.0 - label_smoothing),
                       ops.mul(uniform, label_smoothing / classes))
    if reduction == "mean":
        return ops.div(ops.sum(loss), ops.sum(weights))
    return _reduce(loss, reduction)


def _soft_cross_entropy(log_p, target, weight, reduction: str, label_smoothing: float):
    """-sum_c w_c * target_c * log p_c per sample, for probability targets."""
    if tuple(target.shape) != tuple(log_p.shape):
        raise ShapeError(at_user_line(
            f"cross_entropy: probability targets of shape {tuple(target.shape)} must match "
            f"the input's shape {tuple(log_p.shape)}"
        ))
    class_dim = 1 if log_p.ndim > 1 else 0
    classes = log_p.shape[class_dim]
    if label_smoothing > 0.0:
        target = ops.add(ops.mul(target, 1.0 - label_smoothing), label_smoothing / classes)
    terms = ops.mul(log_p, target)
    if weight is not None:
        terms = ops.mul(terms, _per_class(weight, log_p.ndim))
    return _reduce(ops.neg(ops.sum(terms, dim=class_dim)), reduction)


def _per_class(weight, ndim: int):
    """A (C,) weight shaped to broadcast along the class dim of an ndim-d input."""
    return weight if ndim == 1 else ops.reshape(weight, (1, -1) + (1,) * (ndim - 2))


def _check_target_values(op: str, target, classes: int, ignore_index: int) -> None:
    """Every target a class in [0, classes), or ignore_index; PyTorch's kernel checks this too.
    Only real data can be read: a fake target (while tracing) is checked when the graph runs."""
    if is_fake(target) or target.numel() == 0:
        return
    values = to_host(target._data)
    bad = values[((values < 0) | (values >= classes)) & (values != ignore_index)]
    if bad.size:
        raise IndexOutOfRangeError(at_user_line(
            f"{op}: target {bad.flat[0]} is out of bounds for {classes} classes"
        ))


def _check_targets(op: str, input, target) -> int:
    """The number of classes, once input and target shapes agree (PyTorch's rules)."""
    if target.dtype.category != 1:
        raise DTypeError(at_user_line(
            f"{op}: expected class-index targets of dtype int64, got {target.dtype.name}"
        ))
    if input.ndim == 1:
        expected: tuple[int, ...] = ()
    else:
        expected = (input.shape[0], *input.shape[2:])
    if input.ndim == 0 or tuple(target.shape) != expected:
        raise ShapeError(at_user_line(
            f"{op}: input of shape {tuple(input.shape)} expects a target of shape "
            f"{expected}, got {tuple(target.shape)}"
        ))
    return input.shape[1] if input.ndim > 1 else input.shape[0]


# Every public function hands a Proxy (any __torch_function__ type) to it: see
# [Note: __torch_function__] in minitorch/overrides.py.
make_overridable(globals(), __all__)
