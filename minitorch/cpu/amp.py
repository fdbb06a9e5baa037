"""`minitorch.cpu.amp`: PyTorch's older spelling of `minitorch.autocast("cpu")` (deprecated)."""

from __future__ import annotations

import warnings

from minitorch import amp
from minitorch.dtype import DType, bfloat16


class autocast(amp.autocast):  # noqa: N801 - PyTorch's name
    """`minitorch.autocast("cpu", ...)`, under its old name; a no-op on values (see
    [Note: autocast is a no-op on values] in minitorch/amp/autocast_mode.py)."""

    def __init__(
        self, enabled: bool = True, dtype: DType = bfloat16, cache_enabled: bool = True
    ) -> None:
        warnings.warn(
            "`minitorch.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`minitorch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
