"""`minitorch.amp`: automatic mixed precision, PyTorch's `torch.amp`.

    with minitorch.autocast("cpu"):             # or @minitorch.autocast("cpu") on a function
        loss = loss_fn(model(x), y)
    scaler = minitorch.amp.GradScaler("cpu")
    scaler.scale(loss).backward(); scaler.step(opt); scaler.update()

autocast_mode.py   `autocast`: records the region; NOTE: a no-op on values here (its docstring)
grad_scaler.py     `GradScaler`: loss scaling, the real algorithm, on the CPU too
"""

from __future__ import annotations

from minitorch.amp.autocast_mode import (
    autocast,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
)
from minitorch.amp.grad_scaler import GradScaler

__all__ = [
    "GradScaler",
    "autocast",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_enabled",
]
