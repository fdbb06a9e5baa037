"""`Adadelta`: steps whose size is learned from past steps, so no learning rate needs tuning.

pytorch/examples' MNIST trains with it (`Adadelta(model.parameters(), lr=1.0)`). PyTorch's
update, per parameter θ with gradient g (u = Δ = 0 before the first step):

    g ← -g                          if maximize
    g ← g + λ θ                     weight decay λ: an L2 penalty
    u ← ρ u + (1 - ρ) g²            the gradient's running mean square
    δ ← √(Δ + ε) / √(u + ε) · g     a step in the units of θ: RMS of past steps / RMS of g
    Δ ← ρ Δ + (1 - ρ) δ²            the steps' running mean square
    θ ← θ - γ δ                     γ = 1 is Zeiler's method; PyTorch keeps γ to scale it

The first steps are tiny (√ε / RMS(g)): Δ grows from 0 as the steps it measures do.
"""

from __future__ import annotations

from collections.abc import Iterable

from minitorch.device import module_of
from minitorch.errors import InvalidArgumentError, at_user_line
from minitorch.optim.optimizer import Optimizer, check_nonnegative, implementation_flags
from minitorch.tensor import Tensor


class Adadelta(Optimizer):
    """`Adadelta(model.parameters(), lr=1.0, rho=0.9, eps=1e-6, weight_decay=0)`."""

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        flags = implementation_flags("Adadelta", foreach, None, capturable, differentiable)
        del flags["fused"]  # not one of Adadelta's arguments
        defaults = dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, **flags
        )
        super().__init__(params, defaults)

    def _check(self, group: dict) -> None:
        check_nonnegative(group, "lr", "learning rate")
        check_nonnegative(group, "eps", "epsilon value")
        check_nonnegative(group, "weight_decay", "weight_decay value")
        if not 0.0 <= group["rho"] <= 1.0:
            raise InvalidArgumentError(
                at_user_line(f"Invalid rho value: {group['rho']} (rho must lie in [0, 1])")
            )

    def _update(self, p: Tensor, state: dict, group: dict) -> None:
        xp = module_of(p._data)  # numpy or cupy: the update runs where the parameter lives
        rho, eps = group["rho"], group["eps"]
        if not state:
            state["step"] = 0
            state["square_avg"] = Tensor._from_array(xp.zeros_like(p._data))  # u
            state["acc_delta"] = Tensor._from_array(xp.zeros_like(p._data))  # Δ
        state["step"] += 1

        g = -p.grad._data if group["maximize"] else p.grad._data
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p._data  # g + λθ (a new array: grad stays as is)
        u, acc = state["square_avg"]._data, state["acc_delta"]._data
        u *= rho
        u += (1 - rho) * (g * g)  # u = ρu + (1-ρ)g², in place
        delta = xp.sqrt(acc + eps) / xp.sqrt(u + eps) * g
        acc *= rho
        acc += (1 - rho) * (delta * delta)  # Δ = ρΔ + (1-ρ)δ², in place
        p._data -= group["lr"] * delta  # in place (see [Note: updating in place])
