"""The losses of `nn.functional`: regression (mse, l1, smooth_l1, huber), classification
(nll, cross_entropy) and binary (binary_cross_entropy and its logits form).

Each is pointwise arithmetic, a reduction and, for the classifiers, a pick of each target's
log-probability, all in the op table's ops, so autograd differentiates them and graph capture
records them like any other code. functional.py re-exports every name here.

[Note: picking by a one-hot mask]
nll_loss needs log_p[n, target[n]]. `gather` reads exactly that, but its derivative is a
`scatter_add` (each gradient added back where it was read), which has no loop lowering: a
compiled training step then runs it as an extern numpy kernel (np.add.at), plus the zeros,
expand and reshapes that feed it, ~90 us of a small MLP's step. So the pick is written as a
sum over classes of `where(class == target, log_p, 0)`: one compare, one select, one sum,
all loops. Its derivative is `where(class == target, g, 0)`, pointwise, which fuses into
log_softmax's backward kernel. The values are the same (a sum of one term and zeros), at the
cost of C compares per target instead of one read, small beside log_softmax's own passes.
The class weights (ones when none are given) are still read with `gather`: that indirect read
is what checks, when a compiled graph runs, that every target lies in [0, C) (eager checks
first, in `_check_target_values`, with PyTorch's message).

[Note: losses that stay finite]
A loss formula that is fine on paper can overflow or divide by zero in floating point, and
autograd then differentiates the overflow. Two rules keep every value and gradient finite:

- binary_cross_entropy_with_logits never forms sigmoid(x): it is written with
  softplus(-x) = log(1 + exp(-x)) = -log sigmoid(x), evaluated as log(1 + exp(-x)) for x >= 0
  and -x + log(1 + exp(x)) for x < 0, so that exp never sees a positive argument.
- `where(c, f(x), g(x))` differentiates both branches and masks the result, and 0 * inf is
  NaN: so each branch is fed only the inputs it is meant for (`where(c, x, safe)` first), and
  the branch not taken computes something finite.
"""

from __future__ import annotations

import math
import warnings

from minitorch import ops
from minitorch.device import to_host
from minitorch.errors import (
    DTypeError,
    IndexOutOfRangeError,
    InvalidArgumentError,
    MinitorchError,
    ShapeError,
    at_user_line,
)
from minitorch.factories import arange, ones
from minitorch.fake import is_fake
from minitorch.functional._common import check_tensor
from minitorch.ops.meta import broadcast_shapes
from minitorch.ops.nn_meta import check_param_shape
from minitorch.tensor import Tensor

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "huber_loss",
    "l1_loss",
    "mse_loss",
    "nll_loss",
    "smooth_l1_loss",
]

# ---- reductions and regression -----------------------------------------------------------


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


def _difference(op: str, input: Tensor, target: Tensor):
    """input - target, broadcast as PyTorch does: with its warning when the shapes differ."""
    check_tensor(op, input)
    check_tensor(op, target)
    broadcast_shapes(op, tuple(input.shape), tuple(target.shape))
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input "
            f"size ({input.shape}). This will likely lead to incorrect results due "
            "to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )
    return ops.sub(input, target)


def mse_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """mean((input - target)^2) (or its sum, or per element with reduction='none')."""
    diff = _difference("mse_loss", input, target)
    return _reduce(ops.mul(diff, diff), _reduction(size_average, reduce, reduction))


def l1_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """mean(|input - target|)."""
    diff = _difference("l1_loss", input, target)
    return _reduce(ops.abs(diff), _reduction(size_average, reduce, reduction))


def _smooth_l1(diff, beta: float):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta: quadratic near 0, linear beyond,
    with slopes that meet at |d| = beta."""
    size = ops.abs(diff)
    return ops.where(
        ops.lt(size, beta), ops.mul(ops.mul(diff, diff), 0.5 / beta), ops.sub(size, 0.5 * beta)
    )


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """The mean of _smooth_l1(input - target, beta); beta=0 is l1_loss."""
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise InvalidArgumentError(
            at_user_line(f"smooth_l1_loss does not support negative values for beta, got {beta}")
        )
    diff = _difference("smooth_l1_loss", input, target)
    loss = ops.abs(diff) if beta == 0 else _smooth_l1(diff, beta)
    return _reduce(loss, reduction)


def huber_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0
) -> Tensor:
    """delta * smooth_l1(input - target, beta=delta): 0.5 d^2 where |d| < delta, else
    delta * (|d| - 0.5 delta)."""
    reduction = _reduction(None, None, reduction)
    if not delta > 0:
        raise InvalidArgumentError(
            at_user_line(f"huber_loss does not support non-positive values for delta, got {delta}")
        )
    diff = _difference("huber_loss", input, target)
    return _reduce(ops.mul(_smooth_l1(diff, delta), delta), reduction)


# ---- classification ----------------------------------------------------------------------


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
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
    safe = ops.where(counts, target, 0)  # a class index a gather can read; its loss is masked
    class_dim = 1 if log_p.ndim > 1 else 0
    # [Note: picking by a one-hot mask]
    classes_along = _per_class(arange(classes, device=log_p.device), log_p.ndim)  # int64
    one_hot = ops.eq(classes_along, ops.unsqueeze(safe, class_dim))
    picked = ops.sum(ops.where(one_hot, log_p, 0.0), dim=class_dim)  # log p of each target
    if weight is None:
        weight = ones(classes, dtype=log_p.dtype, device=log_p.device)
    chosen = ops.reshape(ops.gather(weight, 0, ops.reshape(safe, (-1,))), tuple(target.shape))
    weights = ops.mul(ops.to_copy(counts, dtype=log_p.dtype), chosen)  # weight[t], 0 if ignored
    return ops.neg(ops.mul(picked, weights)), weights


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """nll_loss(log_softmax(input, class dim), target): the loss of a classifier's logits.

    `target` holds class indices (integers) or class probabilities (floats, input's shape).
    label_smoothing mixes the one-hot target with the uniform distribution over classes:
    loss = (1 - eps) * nll + eps * (-sum_c w_c log p_c) / C.
    """
    check_tensor("cross_entropy", input)
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise MinitorchError(
            at_user_line(
                f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}"
            )
        )
    class_dim = 1 if input.ndim > 1 else 0
    log_p = ops.log_softmax(input, class_dim)
    if target.dtype.is_floating_point:
        return _soft_cross_entropy(log_p, target, weight, reduction, label_smoothing)
    loss, weights = _nll("cross_entropy", log_p, target, weight, ignore_index)
    if label_smoothing > 0.0:
        weighted = log_p if weight is None else ops.mul(log_p, _per_class(weight, input.ndim))
        uniform = ops.mul(ops.neg(ops.sum(weighted, dim=class_dim)), ops.ne(target, ignore_index))
        classes = input.shape[class_dim]
        loss = ops.add(
            ops.mul(loss, 1.0 - label_smoothing), ops.mul(uniform, label_smoothing / classes)
        )
    if reduction == "mean":
        return ops.div(ops.sum(loss), ops.sum(weights))
    return _reduce(loss, reduction)


def _soft_cross_entropy(log_p, target, weight, reduction: str, label_smoothing: float):
    """-sum_c w_c * target_c * log p_c per sample, for probability targets."""
    if tuple(target.shape) != tuple(log_p.shape):
        raise ShapeError(
            at_user_line(
                f"cross_entropy: probability targets of shape {tuple(target.shape)} must match "
                f"the input's shape {tuple(log_p.shape)}"
            )
        )
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
        raise IndexOutOfRangeError(
            at_user_line(f"{op}: target {bad.flat[0]} is out of bounds for {classes} classes")
        )


def _check_targets(op: str, input, target) -> int:
    """The number of classes, once input and target shapes agree (PyTorch's rules)."""
    if target.dtype.category != 1:
        raise DTypeError(
            at_user_line(
                f"{op}: expected class-index targets of dtype int64, got {target.dtype.name}"
            )
        )
    if input.ndim == 1:
        expected: tuple[int, ...] = ()
    else:
        expected = (input.shape[0], *input.shape[2:])
    if input.ndim == 0 or tuple(target.shape) != expected:
        raise ShapeError(
            at_user_line(
                f"{op}: input of shape {tuple(input.shape)} expects a target of shape "
                f"{expected}, got {tuple(target.shape)}"
            )
        )
    return input.shape[1] if input.ndim > 1 else input.shape[0]


# ---- binary ------------------------------------------------------------------------------

_LOG_FLOOR = -100.0  # PyTorch clamps log(p) here, so that p = 0 costs 100, not infinity


def _floored_log(p):
    """max(log p, -100), finite with a finite gradient for every p in [0, 1] (the gradient is
    0 below e^-100, where PyTorch's formula gives (p - y) / 1e-12: the one difference).
    [Note: losses that stay finite]: log sees 1 wherever its result is not used."""
    above = ops.gt(p, math.exp(_LOG_FLOOR))
    return ops.where(above, ops.log(ops.where(above, p, 1.0)), _LOG_FLOOR)


def _check_probabilities(input) -> None:
    """PyTorch's kernel checks every input lies in [0, 1]; a fake input is checked when the
    graph runs."""
    if is_fake(input) or input.numel() == 0:
        return
    values = to_host(input._data)
    if not ((values >= 0) & (values <= 1)).all():  # also refuses NaN
        raise InvalidArgumentError(
            at_user_line("binary_cross_entropy: all elements of input should be between 0 and 1")
        )


def _same_shape(op: str, input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        raise ShapeError(
            at_user_line(
                f"{op}: target size {tuple(target.shape)} must be the same as input size "
                f"{tuple(input.shape)}"
            )
        )


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """-weight * (y log p + (1 - y) log(1 - p)), p = input (probabilities), y = target;
    each log is at least -100, as PyTorch's."""
    check_tensor("binary_cross_entropy", input)
    check_tensor("binary_cross_entropy", target)
    reduction = _reduction(size_average, reduce, reduction)
    _same_shape("binary_cross_entropy", input, target)
    _check_probabilities(input)
    log_p, log_q = _floored_log(input), _floored_log(ops.sub(1.0, input))
    loss = ops.neg(ops.add(ops.mul(target, log_p), ops.mul(ops.sub(1.0, target), log_q)))
    if weight is not None:
        broadcast_shapes("binary_cross_entropy", tuple(weight.shape), tuple(input.shape))
        loss = ops.mul(loss, weight)
    return _reduce(loss, reduction)


def _softplus_of_negative(x):
    """softplus(-x) = log(1 + exp(-x)) = -log sigmoid(x), without overflow for any x and with
    the exact gradient sigmoid(x) - 1 everywhere (x = 0 included) [Note: losses that stay
    finite]."""
    nonnegative = ops.ge(x, 0)
    right = ops.where(nonnegative, x, 0.0)  # x >= 0: log(1 + exp(-x))
    left = ops.where(nonnegative, 0.0, x)  # x < 0: -x + log(1 + exp(x))
    return ops.where(
        nonnegative,
        ops.log(ops.add(ops.exp(ops.neg(right)), 1.0)),
        ops.sub(ops.log(ops.add(ops.exp(left), 1.0)), left),
    )


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """binary_cross_entropy(sigmoid(input), target), computed from the logits stably.

    With s(x) = softplus(-x) = -log sigmoid(x), and -log(1 - sigmoid(x)) = x + s(x):

        loss = weight * (pos_weight * y * s(x) + (1 - y) * (x + s(x)))

    pos_weight (one entry per class, the last dim) weighs the positive targets.
    """
    op = "binary_cross_entropy_with_logits"
    check_tensor(op, input)
    check_tensor(op, target)
    reduction = _reduction(size_average, reduce, reduction)
    _same_shape(op, input, target)
    s = _softplus_of_negative(input)
    negative = ops.sub(1.0, target)
    positive = target
    if pos_weight is not None:
        broadcast_shapes(op, tuple(pos_weight.shape), tuple(target.shape))
        positive = ops.mul(target, pos_weight)
    loss = ops.add(ops.mul(positive, s), ops.mul(negative, ops.add(input, s)))
    if weight is not None:
        broadcast_shapes(op, tuple(weight.shape), tuple(input.shape))
        loss = ops.mul(loss, weight)
    return _reduce(loss, reduction)
