"""`minitorch.finfo` and `minitorch.iinfo`: the limits of each dtype, as PyTorch reports them.

    >>> minitorch.finfo(minitorch.float16).max        # 65504.0
    >>> minitorch.finfo(minitorch.bfloat16).eps       # 0.0078125: 7 bits of mantissa
    >>> minitorch.iinfo(minitorch.int32).min          # -2147483648

numpy knows every dtype but bfloat16, whose numbers are float32's exponent range with 8 bits
of precision (7 stored): its limits are written out here, from that format.
"""

from __future__ import annotations

import numpy as np

from minitorch.dtype import DType, bfloat16, bool_, float32
from minitorch.errors import DTypeError, at_user_line

# bfloat16: float32's exponent range, 2**-7 apart at 1; max = (2 - 2**-7) * 2**127
_BFLOAT16 = {
    "bits": 16,
    "eps": 2.0**-7,
    "max": (2 - 2.0**-7) * 2.0**127,
    "tiny": 2.0**-126,
    "resolution": 0.01,
}


class finfo:  # noqa: N801 - PyTorch's name
    """The limits of a floating-point dtype: bits, eps, max, min, tiny (= smallest_normal),
    resolution; `finfo()` is float32's (the default dtype)."""

    def __init__(self, dtype: DType | None = None) -> None:
        dtype = float32 if dtype is None else dtype
        if not isinstance(dtype, DType) or not dtype.is_floating_point:
            raise DTypeError(
                at_user_line(
                    f"finfo(): requires a floating point dtype, not {dtype!r}; use iinfo for "
                    "integer dtypes"
                )
            )
        if dtype is bfloat16:
            limits = _BFLOAT16
        else:
            info = np.finfo(dtype.np)
            limits = {
                "bits": info.bits,
                "eps": float(info.eps),
                "max": float(info.max),
                "tiny": float(info.smallest_normal),
                "resolution": 10.0**-info.precision,
            }
        self.bits: int = limits["bits"]
        self.eps: float = limits["eps"]  # the gap between 1 and the next number
        self.max: float = limits["max"]
        self.min: float = -limits["max"]
        self.tiny: float = limits["tiny"]  # the smallest positive normal number
        self.smallest_normal: float = limits["tiny"]
        self.resolution: float = limits["resolution"]  # 10 ** -(decimal digits of precision)
        self.dtype: str = dtype.name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
            f"tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:  # noqa: N801 - PyTorch's name
    """The limits of an integer dtype: bits, max, min."""

    def __init__(self, dtype: DType) -> None:
        if not isinstance(dtype, DType) or dtype.is_floating_point or dtype is bool_:
            raise DTypeError(
                at_user_line(
                    f"iinfo(): requires an integer dtype, not {dtype!r}; use finfo for floating "
                    "point dtypes"
                )
            )
        info = np.iinfo(dtype.np)
        self.bits: int = info.bits
        self.max: int = int(info.max)
        self.min: int = int(info.min)
        self.dtype: str = dtype.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
