"""`SGD`: stochastic gradient descent, with momentum, Nesterov momentum and weight decay.

PyTorch's update, per parameter θ with gradient g, at step t = 1, 2, ...

    g ← -g                      if maximize
    g ← g + λ θ                 weight decay λ (an L2 penalty λ/2 |θ|² added to the loss)
    if μ ≠ 0:                   momentum μ, dampening τ
        b ← g  (t = 1)   or   b ← μ b + (1 - τ) g  (t > 1)
        g ← g + μ b   if nesterov   else   g ← b
    θ ← θ - γ g                 learning rate γ

NOTE: this is "velocity without the learning rate" (b accumulates gradients, γ scales the
step), as in PyTorch, unlike Sutskever et al. (v ← μ v + γ g); the two differ when γ changes.
"""

from __future__ import annotations

from collections.abc import Iterable

from minitorch.device import module_of
from minitorch.errors import MinitorchError, at_user_line
from minitorch.optim.optimizer import Optimizer, check_nonnegative, implementation_flags
from minitorch.tensor import Tensor


class SGD(Optimizer):
    """`SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)`."""

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        flags = implementation_flags("SGD", foreach, fused, differentiable=differentiable)
        del flags["capturable"]  # not one of SGD's arguments
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            **flags,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict) -> None:
        check_nonnegative(group, "lr", "learning rate")
        check_nonnegative(group, "momentum", "momentum value")
        check_nonnegative(group, "weight_decay", "weight_decay value")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise MinitorchError(
                at_user_line("Nesterov momentum requires a momentum and zero dampening")
            )

    def _update(self, p: Tensor, state: dict, group: dict) -> None:
        momentum = group["momentum"]
        # NOTE: maximize negates the gradient first, as PyTorch's code does (its pseudocode
        # flips the last step instead): weight decay then still pulls θ towards 0.
        g = -p.grad._data if group["maximize"] else p.grad._data
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p._data  # g + λθ (a new array: grad stays as is)
        if momentum != 0:
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = Tensor._from_array(g.copy())  # b₁ = g₁
            else:
                b = state["momentum_buffer"]._data
                b *= momentum
                b += (1 - group["dampening"]) * g  # b = μb + (1-τ)g, in place
            b = state["momentum_buffer"]._data
            g = g + momentum * b if group["nesterov"] else b
        # θ = θ - γg, in place, γg in a scratch array (see [Note: updating in place])
        (step,) = self._scratch(p._data, 1)
        p._data -= module_of(g).multiply(g, group["lr"], out=step)
