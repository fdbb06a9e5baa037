"""`GradScaler`: loss scaling, so that small half-precision gradients do not flush to zero.

    scaler = minitorch.amp.GradScaler("cpu")
    for x, y in data:
        opt.zero_grad()
        scaler.scale(loss_fn(model(x), y)).backward()   # gradients of loss * scale
        scaler.step(opt)      # unscale the grads; step only if they are all finite
        scaler.update()       # halve the scale after an inf/nan, double it after 2000 clean steps

The algorithm is PyTorch's, step for step, on eager tensors: the scale is a 0-d float32 tensor
(so `loss * scale` keeps the loss's dtype), `unscale_` multiplies every gradient in place by
float32(1 / float64(scale)) and notes whether any is inf or nan, `step` skips the optimizer's
step after one, and `update` backs the scale off (x0.5) or grows it (x2 after `growth_interval`
steps in a row without one).

As in PyTorch, a scaler for "cuda" on a machine without a GPU (`minitorch.cuda.amp.GradScaler()`
on a laptop) warns and disables itself, and so does `enabled=False`: then `scale(x)` is x,
`step(opt)` is `opt.step()`, `update()` does nothing, `get_scale()` is 1.0 and `state_dict()`
is {}. A "cpu" scaler is real, as in PyTorch 2.3 and later.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from minitorch.autograd import no_grad
from minitorch.device import cuda_is_available, to_host
from minitorch.dtype import float16, float32
from minitorch.errors import (
    AutogradError,
    DeviceError,
    DTypeError,
    InvalidArgumentError,
    at_user_line,
)

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"  # one optimizer's stage in a step


class GradScaler:
    """Scales the loss, unscales the gradients, and skips steps whose gradients overflowed."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        if device not in ("cpu", "cuda"):
            raise DeviceError(
                at_user_line(
                    f"GradScaler(): unsupported device {device!r} (expected 'cpu' or 'cuda')"
                )
            )
        if enabled and device == "cuda" and not cuda_is_available():
            warnings.warn(
                "GradScaler is enabled, but CUDA is not available.  Disabling.", stacklevel=2
            )
            enabled = False
        if enabled and not growth_factor > 1.0:
            raise InvalidArgumentError(
                at_user_line(f"GradScaler(): the growth factor must be > 1.0, got {growth_factor}")
            )
        if enabled and not backoff_factor < 1.0:
            raise InvalidArgumentError(
                at_user_line(
                    f"GradScaler(): the backoff factor must be < 1.0, got {backoff_factor}"
                )
            )
        self._device = device
        self._enabled = enabled
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._scale = None  # a 0-d float32 tensor, made by the first scale()
        self._growth_tracker = 0  # clean steps in a row since the scale last changed
        self._per_optimizer: dict[int, dict[str, Any]] = {}  # id(opt) -> stage, found_inf

    # ---- one iteration: scale, (unscale_), step, update ----------------------------------------

    def scale(self, outputs):
        """`outputs * scale`: a tensor, or lists/tuples of tensors, nested; as is if disabled."""
        if not self._enabled:
            return outputs
        from minitorch.tensor import Tensor

        if isinstance(outputs, Tensor):
            return outputs * self._scale_on(outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(x) for x in outputs)
        raise InvalidArgumentError(
            at_user_line(
                f"GradScaler.scale(): outputs must be a tensor or lists/tuples of tensors, not a "
                f"{type(outputs).__name__}"
            )
        )

    def unscale_(self, optimizer) -> None:
        """Divide the gradients of `optimizer`'s parameters by the scale, in place (for clipping
        them before `step`); notes whether any is inf or nan."""
        if not self._enabled:
            return
        self._check_scaled("unscale_")
        state = self._state_of(optimizer)
        if state["stage"] == _UNSCALED:
            raise AutogradError(
                at_user_line(
                    "unscale_() has already been called on this optimizer since the last update()."
                )
            )
        if state["stage"] == _STEPPED:
            raise AutogradError(at_user_line("unscale_() is being called after step()."))
        inv_scale = self._inverse_scale()
        state["found_inf"] = _unscale_grads(optimizer, inv_scale)
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale the gradients if not done yet, then `optimizer.step()` unless one of them is
        inf or nan; returns what `optimizer.step()` returned, or None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise AutogradError(
                at_user_line(
                    "GradScaler.step(): closure use is not supported if GradScaler is enabled."
                )
            )
        self._check_scaled("step")
        state = self._state_of(optimizer)
        if state["stage"] == _STEPPED:
            raise AutogradError(
                at_user_line("step() has already been called since the last update().")
            )
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AutogradError(
                at_user_line(
                    "GradScaler.step(): no inf checks were recorded "
                    "for this optimizer (no parameter has a .grad)."
                )
            )
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Back the scale off after an inf/nan this iteration, or grow it after
        `growth_interval` clean ones; or set it to `new_scale` (a float or a 1-element tensor)."""
        if not self._enabled:
            return
        self._check_scaled("update")
        if new_scale is not None:
            self._set_scale(new_scale)
        else:
            found = [
                s["found_inf"] for s in self._per_optimizer.values() if s["found_inf"] is not None
            ]
            if not found:
                raise AutogradError(
                    at_user_line(
                        "GradScaler.update(): no inf checks were "
                        "recorded prior to update (call step first)."
                    )
                )
            self._update_scale(any(found))
        self._per_optimizer = {}

    # ---- reading and saving the state ------------------------------------------------------

    def get_scale(self) -> float:
        """The current scale as a float; 1.0 when disabled."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict[str, Any]:
        """{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"};
        {} when disabled. Plain numbers, so `minitorch.save` can write it."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take the state `state_dict()` gave (nothing happens when disabled)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise InvalidArgumentError(
                at_user_line(
                    "GradScaler.load_state_dict(): the source state dict is empty, possibly "
                    "because "
                    "it was saved from a disabled instance of GradScaler."
                )
            )
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])

    # ---- helpers ---------------------------------------------------------------------------

    def _scale_on(self, device):
        """The scale tensor, made on first use, as a 0-d float32 tensor on `device`."""
        from minitorch.factories import full

        if self._scale is None:
            self._scale = full((), self._init_scale, dtype=float32, device=self._device)
        return self._scale if self._scale.device == device else self._scale.to(device)

    def _inverse_scale(self) -> float:
        """float32(1 / float64(scale)), as PyTorch computes it."""
        return float(np.float32(1.0 / float(self._scale.item())))

    def _check_scaled(self, name: str) -> None:
        if self._scale is None:
            raise AutogradError(
                at_user_line(
                    f"GradScaler.{name}(): there is no scale yet; this may indicate your script "
                    "did "
                    "not use scaler.scale(loss or outputs) earlier in the iteration."
                )
            )

    def _state_of(self, optimizer) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def _set_scale(self, new_scale) -> None:
        if isinstance(new_scale, float):
            self._scale.fill_(new_scale)
            return
        from minitorch.tensor import Tensor

        if not (
            isinstance(new_scale, Tensor) and new_scale.numel() == 1 and not new_scale.requires_grad
        ):
            raise InvalidArgumentError(
                at_user_line(
                    "GradScaler.update(): new_scale should be a float or a 1-element tensor with "
                    "requires_grad=False"
                )
            )
        self._scale.fill_(float(new_scale.item()))

    def _update_scale(self, found_inf: bool) -> None:
        """PyTorch's _amp_update_scale_: back off on inf/nan, grow after a clean interval."""
        scale = float(self._scale.item())
        if found_inf:
            self._scale.fill_(scale * self._backoff_factor)
            self._growth_tracker = 0
            return
        self._growth_tracker += 1
        if self._growth_tracker == self._growth_interval:
            grown = float(np.float32(scale * self._growth_factor))
            if np.isfinite(grown):  # a scale that would overflow float32 stays where it is
                self._scale.fill_(grown)
            self._growth_tracker = 0


def _unscale_grads(optimizer, inv_scale: float) -> bool | None:
    """Multiply every gradient by `inv_scale` in place; whether any was inf or nan (None when
    no parameter has a gradient)."""
    found_inf, any_grad = False, False
    with no_grad():
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.dtype is float16:
                    raise DTypeError(
                        at_user_line(
                            "GradScaler: attempting to unscale float16 gradients (keep the "
                            "parameters in float32 and autocast the forward pass instead)"
                        )
                    )
                any_grad = True
                found_inf = found_inf or not bool(np.isfinite(to_host(p.grad._data)).all())
                p.grad.mul_(inv_scale)
    return found_inf if any_grad else None
