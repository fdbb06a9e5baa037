"""`AdamW`: Adam with decoupled weight decay (Loshchilov & Hutter, "Decoupled Weight Decay
Regularization"), the optimizer of nanoGPT and most transformers.

Adam's weight decay adds λθ to the gradient, and the gradient is then divided by √v̂: a
parameter with large, noisy gradients is barely decayed, one with tiny gradients a lot. AdamW
shrinks the parameter itself, by the same factor for every coordinate, before Adam's step:

    θ ← θ - γ λ θ                   decoupled decay: every weight shrinks by γλ of itself
    θ ← θ - γ m̂ / (√v̂ + ε)          Adam's step (adam.py), on the gradient alone

Everything else (moments, bias correction, amsgrad, maximize, state) is Adam's; only the
defaults differ: weight_decay=1e-2, as PyTorch's.
"""

from __future__ import annotations

from collections.abc import Iterable

from minitorch.optim.adam import Adam
from minitorch.tensor import Tensor


class AdamW(Adam):
    """`AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2)`."""

    decoupled_weight_decay = True

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
        )
