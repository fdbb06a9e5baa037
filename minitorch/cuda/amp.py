"""`minitorch.cuda.amp`: PyTorch's older spellings of `minitorch.amp` for CUDA (deprecated).

    with minitorch.cuda.amp.autocast():     # minitorch.autocast("cuda")
    scaler = minitorch.cuda.amp.GradScaler()  # minitorch.amp.GradScaler("cuda")

Both warn (FutureWarning), as PyTorch's do; without a GPU both then disable themselves with
PyTorch's warning (minitorch/amp/).
"""

from __future__ import annotations

import warnings

from minitorch import amp
from minitorch.dtype import DType, float16


class autocast(amp.autocast):  # noqa: N801 - PyTorch's name
    """`minitorch.autocast("cuda", ...)`, under its old name."""

    def __init__(
        self, enabled: bool = True, dtype: DType = float16, cache_enabled: bool = True
    ) -> None:
        warnings.warn(
            "`minitorch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`minitorch.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(amp.GradScaler):
    """`minitorch.amp.GradScaler("cuda", ...)`, under its old name."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`minitorch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
            "`minitorch.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )
