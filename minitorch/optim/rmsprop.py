"""`RMSprop`: each coordinate's step divided by the running RMS of its gradient (Hinton's
lecture 6e), the optimizer of the tutorial "Learning PyTorch with Examples".

PyTorch's update, per parameter θ with gradient g (v = ḡ = b = 0 before the first step):

    g ← -g                          if maximize
    g ← g + λ θ                     weight decay λ: an L2 penalty
    v ← α v + (1 - α) g²            the gradient's running mean square
    ḡ ← α ḡ + (1 - α) g             (centered only) its running mean
    a ← √(v - ḡ²) + ε   if centered   else   √v + ε
    b ← μ b + g / a;  θ ← θ - γ b   with momentum μ > 0
    θ ← θ - γ g / a                 without

Centered, a estimates the gradient's standard deviation rather than its RMS.
"""

from __future__ import annotations

from collections.abc import Iterable

from minitorch.device import module_of
from minitorch.errors import InvalidArgumentError, at_user_line
from minitorch.optim.optimizer import Optimizer, check_nonnegative, implementation_flags
from minitorch.tensor import Tensor


class RMSprop(Optimizer):
    """`RMSprop(model.parameters(), lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0,
    momentum=0, centered=False)`."""

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        flags = implementation_flags("RMSprop", foreach, None, capturable, differentiable)
        del flags["fused"]  # not one of RMSprop's arguments
        defaults = dict(
            lr=lr,
            alpha=alpha,
            eps=eps,
            weight_decay=weight_decay,
            momentum=momentum,
            centered=centered,
            maximize=maximize,
            **flags,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict) -> None:
        check_nonnegative(group, "lr", "learning rate")
        check_nonnegative(group, "eps", "epsilon value")
        check_nonnegative(group, "weight_decay", "weight_decay value")
        check_nonnegative(group, "momentum", "momentum value")
        if group["alpha"] < 0:
            raise InvalidArgumentError(at_user_line(f"Invalid alpha value: {group['alpha']}"))

    def _update(self, p: Tensor, state: dict, group: dict) -> None:
        xp = module_of(p._data)  # numpy or cupy: the update runs where the parameter lives
        alpha = group["alpha"]
        if not state:
            state["step"] = 0
            state["square_avg"] = Tensor._from_array(xp.zeros_like(p._data))  # v
            if group["momentum"] > 0:
                state["momentum_buffer"] = Tensor._from_array(xp.zeros_like(p._data))  # b
            if group["centered"]:
                state["grad_avg"] = Tensor._from_array(xp.zeros_like(p._data))  # ḡ
        state["step"] += 1

        g = -p.grad._data if group["maximize"] else p.grad._data
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p._data  # g + λθ (a new array: grad stays as is)
        v = state["square_avg"]._data
        v *= alpha
        v += (1 - alpha) * (g * g)  # v = αv + (1-α)g², in place
        if group["centered"]:
            g_avg = state["grad_avg"]._data
            g_avg *= alpha
            g_avg += (1 - alpha) * g  # ḡ = αḡ + (1-α)g, in place
            avg = xp.sqrt(v - g_avg * g_avg) + group["eps"]
        else:
            avg = xp.sqrt(v) + group["eps"]
        if group["momentum"] > 0:
            b = state["momentum_buffer"]._data
            b *= group["momentum"]
            b += g / avg  # b = μb + g/a, in place
            p._data -= group["lr"] * b
        else:
            p._data -= group["lr"] * g / avg  # in place (see [Note: updating in place])
