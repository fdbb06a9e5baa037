"""`autocast`: PyTorch's mixed-precision region, kept as a record; it changes no dtype here.

    with minitorch.autocast("cpu", dtype=minitorch.bfloat16):
        y = model(x)                  # y is float32 here; PyTorch would give bfloat16
    minitorch.is_autocast_enabled("cpu")    # True inside the block

[Note: autocast is a no-op on values]
PyTorch's autocast makes a chosen list of ops (matmul, linear, conv, ...) cast their inputs to
the low-precision dtype (bfloat16 on the CPU, float16 on CUDA) and run there, for speed on
hardware with fast half-precision units. minitorch's kernels gain nothing from half precision
(numpy and our LLVM kernels compute float16 through float32 anyway), so autocast here changes
no op's dtype: every op runs in the dtypes of its inputs, as outside the block. Results are
therefore *more* precise than PyTorch's under autocast, and have the input dtypes (float32 where
PyTorch's would be bfloat16/float16). What is real is the bookkeeping PyTorch scripts read and
its checks: the arguments, the warnings that disable it (CUDA without a GPU, a dtype the device
cannot autocast to), `is_autocast_enabled()` and `get_autocast_dtype()` inside the region,
nesting, and use as a decorator. Casting by hand (`x.to(minitorch.bfloat16)`) is real.
"""

from __future__ import annotations

import contextvars
import functools
import warnings
from collections.abc import Callable
from typing import Any

from minitorch.device import cuda_is_available
from minitorch.dtype import DType, bfloat16, float16, float32
from minitorch.errors import ArgumentTypeError, DeviceError, at_user_line

# Where autocast is, per device type: (enabled, dtype); PyTorch's defaults outside any block.
_DEFAULTS = {"cpu": (False, bfloat16), "cuda": (False, float16)}
# The dtypes each device type can autocast to (PyTorch's lists)
_SUPPORTED = {"cpu": (bfloat16, float16), "cuda": (float16, bfloat16, float32)}
# Device types PyTorch knows but minitorch does not run on: autocast there disables itself.
_ELSEWHERE = ("xpu", "mps", "hpu", "ipu", "xla", "mtia", "maia", "privateuseone")

_state: contextvars.ContextVar[dict[str, tuple[bool, DType]]] = contextvars.ContextVar(
    "autocast_state", default=_DEFAULTS
)


def is_autocast_available(device_type: str) -> bool:
    """Whether `autocast(device_type)` can be enabled: "cpu" always, "cuda" with a GPU."""
    return device_type == "cpu" or (device_type == "cuda" and cuda_is_available())


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Is the innermost autocast block for `device_type` enabled? (PyTorch's default: cuda.)"""
    return _state.get().get(device_type, (False, None))[0]


def get_autocast_dtype(device_type: str) -> DType:
    """The dtype autocast for `device_type` names: bfloat16 for "cpu", float16 for "cuda"."""
    if device_type not in _DEFAULTS:
        raise DeviceError(
            at_user_line(
                f"get_autocast_dtype(): unsupported device type "
                f"{device_type!r} (minitorch has 'cpu' and 'cuda')"
            )
        )
    return _state.get()[device_type][1]


class autocast:  # noqa: N801 - PyTorch's name
    """A mixed-precision region: a context manager, or a decorator of a function.

    NOTE: it records the region and changes no op's dtype ([Note: autocast is a no-op on
    values] above); `x @ w` inside it is float32 when x and w are.
    """

    def __init__(
        self,
        device_type: str,
        dtype: DType | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ArgumentTypeError(
                at_user_line(
                    "autocast(): expected device_type of type str, got "
                    f"{type(device_type).__name__}"
                    " (write autocast('cpu') or autocast('cuda'))"
                )
            )
        if dtype is not None and not isinstance(dtype, DType):
            raise ArgumentTypeError(
                at_user_line(f"autocast(): dtype must be a minitorch dtype, not {dtype!r}")
            )
        if not isinstance(enabled, bool):
            raise ArgumentTypeError(
                at_user_line(f"autocast(): enabled must be a bool, not {enabled!r}")
            )
        self.device = device_type
        self.fast_dtype = (
            dtype if dtype is not None else _DEFAULTS.get(device_type, (False, None))[1]
        )
        self._enabled = enabled and _can_enable(device_type, self.fast_dtype)
        self._saved: list[contextvars.Token] = []  # one per entry: nesting and reentrance

    def __enter__(self) -> autocast:
        if self.device in _DEFAULTS:
            state = {**_state.get(), self.device: (self._enabled, self.fast_dtype)}
            self._saved.append(_state.set(state))
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.device in _DEFAULTS:
            _state.reset(self._saved.pop())

    def __call__(self, func: Callable) -> Callable:
        """`@autocast("cpu")`: run every call of `func` inside the region."""

        @functools.wraps(func)
        def in_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return in_autocast

    def __repr__(self) -> str:
        return (
            f"autocast(device_type={self.device!r}, dtype={self.fast_dtype!r}, "
            f"enabled={self._enabled})"
        )


def _can_enable(device_type: str, dtype: DType | None) -> bool:
    """Whether the region can be enabled; warns and says no where PyTorch disables it."""
    if device_type in _ELSEWHERE:
        warnings.warn(
            f"User provided device_type of {device_type!r}, but minitorch does not run "
            "on it. Disabling autocast.",
            stacklevel=3,
        )
        return False
    if device_type not in _DEFAULTS:
        raise DeviceError(
            at_user_line(
                f"autocast(): unsupported device_type {device_type!r} (expected 'cpu' or 'cuda')"
            )
        )
    if device_type == "cuda" and not cuda_is_available():
        warnings.warn(
            "User provided device_type of 'cuda', but CUDA is not available. Disabling",
            stacklevel=3,
        )
        return False
    if dtype not in _SUPPORTED[device_type]:
        names = " and ".join(f"minitorch.{d.name}" for d in _SUPPORTED[device_type])
        warnings.warn(
            f"In {device_type.upper()} autocast, but the target dtype is not "
            f"supported. Disabling autocast.\n{device_type.upper()} Autocast only "
            f"supports dtype of {names} currently.",
            stacklevel=3,
        )
        return False
    return True
