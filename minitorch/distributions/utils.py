"""Conversions between probabilities and logits, and broadcasting a distribution's
parameters, as torch.distributions.utils."""

from __future__ import annotations

from minitorch import factories, ops
from minitorch.dtype import bfloat16, float16, float32, float64
from minitorch.errors import ArgumentTypeError, at_user_line
from minitorch.ops.meta import broadcast_shapes
from minitorch.tensor import Tensor
from minitorch.type_info import finfo

# Each float dtype's limits by name, read once: a dict of constants that compiled code reads
# (and guards) as it would any global, where a call of np.finfo would stop the trace.
_FLOATS = (float16, bfloat16, float32, float64)
EPS = {d.name: finfo(d).eps for d in _FLOATS}
LOWEST = {d.name: finfo(d).min for d in _FLOATS}


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """Every value a tensor of one broadcast shape; numbers take the tensors' float dtype
    (float32 if there is none)."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    for v in values:
        if not isinstance(v, (Tensor, int, float)) or isinstance(v, bool):
            raise ArgumentTypeError(
                at_user_line(
                    f"Input arguments must all be instances of numbers or Tensors, got "
                    f"{type(v).__name__}"
                )
            )
    like = tensors[0] if tensors else None
    made = [
        v
        if isinstance(v, Tensor)
        else factories.tensor(
            float(v),
            dtype=like.dtype if like is not None and like.dtype.is_floating_point else None,
            device=like.device if like is not None else None,
        )
        for v in values
    ]
    shape = broadcast_shapes("broadcast_all", *(tuple(t.shape) for t in made))
    return tuple(ops.expand(t, shape) if tuple(t.shape) != shape else t for t in made)


def clamp_probs(probs: Tensor) -> Tensor:
    """probs clamped into [eps, 1 - eps], eps the dtype's machine epsilon, so their logs
    stay finite."""
    eps = EPS[probs.dtype.name]
    return ops.clamp(probs, eps, 1.0 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log p (categorical) or log p - log(1 - p) (binary), of the clamped probabilities."""
    clamped = clamp_probs(probs)
    if is_binary:
        return ops.sub(ops.log(clamped), ops.log1p(ops.neg(clamped)))
    return ops.log(clamped)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid(logits) (binary) or softmax(logits) over the last dim (categorical)."""
    return ops.sigmoid(logits) if is_binary else ops.softmax(logits, -1)


def softplus(x: Tensor) -> Tensor:
    """log(1 + exp(x)), finite for any x, with the exact gradient sigmoid(x) everywhere.

    NOTE: not max(x, 0) + log1p(exp(-|x|)): that is the same value, but relu and abs have
    derivative 0 at x = 0, which gives softplus'(0) = 0 instead of 1/2. Each branch reads only
    the x it is right for (the other gets 0), so neither overflows, in value or gradient.
    """
    positive = ops.gt(x, 0)
    right = ops.where(positive, x, 0.0)  # x > 0: x + log(1 + exp(-x))
    left = ops.where(positive, 0.0, x)  # x <= 0: log(1 + exp(x))
    return ops.where(
        positive, ops.add(right, ops.log1p(ops.exp(ops.neg(right)))), ops.log1p(ops.exp(left))
    )
