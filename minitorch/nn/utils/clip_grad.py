"""Gradient clipping: `clip_grad_norm_` and `clip_grad_value_`, called between
`loss.backward()` and `optimizer.step()` to keep one bad batch from throwing the weights off.

    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()

clip_grad_norm_ treats all the gradients as one long vector g: if its p-norm |g| is above
max_norm, every gradient is scaled by max_norm / (|g| + 1e-6), so the direction of the step is
kept and only its length shrinks. clip_grad_value_ clamps each element instead.

The gradients are changed where they are (the same tensors, the `.grad` of each parameter),
outside autograd: they are data for the optimizer, not part of any graph.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from minitorch import ops
from minitorch.autograd.grad_mode import no_grad
from minitorch.errors import AutogradError, at_user_line
from minitorch.factories import tensor
from minitorch.nn._data import replace_data
from minitorch.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    """The `.grad` of each parameter that has one."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p.grad for p in params if p.grad is not None]


def _norm(x: Tensor, p: float) -> Tensor:
    """The p-norm of x's elements as one vector (0-d): max |x| for inf, min |x| for -inf,
    the count of non-zeros for 0, else (sum |x|^p)^(1/p)."""
    size = ops.abs(x)
    if p == math.inf:
        return ops.amax(size)
    if p == -math.inf:
        return ops.amin(size)
    if p == 0:
        return ops.sum(ops.to_copy(ops.ne(x, 0), dtype=x.dtype))
    return ops.pow(ops.sum(ops.pow(size, p)), 1.0 / p)


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients so that their total norm is at most max_norm; returns the total
    norm they had (a 0-d tensor), the p-norm of the per-gradient p-norms."""
    grads = _grads(parameters)
    if not grads:
        return tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        total = _norm(ops.stack(*[_norm(g, norm_type) for g in grads]), norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise AutogradError(
                at_user_line(
                    f"The total norm of order {norm_type} for gradients from `parameters` is "
                    "non-finite, so it cannot be clipped. To disable this error and scale the "
                    "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
                )
            )
        # NOTE: a multiplication by 1 when the norm is small enough, as PyTorch does: no
        # branch on the data, so the same code runs whatever the norm.
        scale = ops.clamp(ops.div(float(max_norm), ops.add(total, 1e-6)), max=1.0)
        for g in grads:
            # A new array, not g.mul_: a gradient may be a read-only broadcast (sum's backward).
            replace_data(g, ops.mul(g, ops.to_copy(scale, dtype=g.dtype)))
    return total


def clip_grad_value_(
    parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient element into [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            replace_data(g, ops.clamp(g, -clip_value, clip_value))
