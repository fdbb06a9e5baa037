"""`Adam`: steps scaled by running averages of the gradient and of its square.

PyTorch's update, per parameter θ with gradient g, at step t = 1, 2, ... (m = v = v_max = 0
before the first):

    g ← -g                          if maximize
    g ← g + λ θ                     weight decay λ: an L2 penalty, as torch.optim.Adam
    (AdamW instead: θ ← θ - γ λ θ, decoupled from g; see adamw.py)
    m ← β₁ m + (1 - β₁) g           first moment: the gradient's running mean
    v ← β₂ v + (1 - β₂) g²          second moment: its running mean square
    m̂ ← m / (1 - β₁ᵗ)               bias correction: m and v start at 0, so early
    v̂ ← v / (1 - β₂ᵗ)               averages are too small by exactly these factors
        (amsgrad: v_max ← max(v_max, v) and v̂ ← v_max / (1 - β₂ᵗ), so steps never grow)
    θ ← θ - γ m̂ / (√v̂ + ε)

Each coordinate moves by about γ whatever the gradient's scale: m̂/√v̂ is near ±1 for a
steady gradient, and smaller where it flips sign (the mean cancels, the mean square does not).
"""

from __future__ import annotations

from collections.abc import Iterable

from minitorch.device import module_of
from minitorch.errors import InvalidArgumentError, at_user_line
from minitorch.optim.optimizer import Optimizer, check_nonnegative, implementation_flags
from minitorch.tensor import Tensor


class Adam(Optimizer):
    """`Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0)`."""

    decoupled_weight_decay = False  # True in AdamW: decay θ directly, not through g

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        flags = implementation_flags(
            type(self).__name__, foreach, fused, capturable, differentiable
        )
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            **flags,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict) -> None:
        check_nonnegative(group, "lr", "learning rate")
        check_nonnegative(group, "eps", "epsilon value")
        check_nonnegative(group, "weight_decay", "weight_decay value")
        for i, beta in enumerate(group["betas"]):
            if not 0.0 <= beta < 1.0:
                raise InvalidArgumentError(
                    at_user_line(
                        f"Invalid beta parameter at index {i}: {beta} (betas must lie in [0, 1))"
                    )
                )

    def _update(self, p: Tensor, state: dict, group: dict) -> None:
        xp = module_of(p._data)  # numpy or cupy: the update runs where the parameter lives
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = Tensor._from_array(xp.zeros_like(p._data))  # m
            state["exp_avg_sq"] = Tensor._from_array(xp.zeros_like(p._data))  # v
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = Tensor._from_array(xp.zeros_like(p._data))  # v_max
        state["step"] += 1
        t = state["step"]

        g = -p.grad._data if group["maximize"] else p.grad._data
        if group["weight_decay"] != 0 and self.decoupled_weight_decay:
            p._data *= 1 - group["lr"] * group["weight_decay"]  # θ - γλθ, in place
        elif group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p._data  # g + λθ (a new array: grad stays as is)
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        # Two scratch arrays hold every intermediate ([Note: updating in place]).
        step, denominator = self._scratch(p._data, 2)
        m *= beta1
        m += xp.multiply(g, 1 - beta1, out=step)  # m = β₁m + (1-β₁)g
        v *= beta2
        v += xp.multiply(xp.multiply(g, g, out=step), 1 - beta2, out=step)  # v = β₂v + (1-β₂)g²
        if group["amsgrad"]:
            v_max = state["max_exp_avg_sq"]._data
            xp.maximum(v_max, v, out=v_max)
            v = v_max
        xp.divide(v, 1 - beta2**t, out=denominator)  # v̂
        xp.sqrt(denominator, out=denominator)
        denominator += group["eps"]  # √v̂ + ε
        xp.divide(m, 1 - beta1**t, out=step)  # m̂
        step *= group["lr"]
        step /= denominator
        p._data -= step  # θ = θ - γ m̂ / (√v̂ + ε)
