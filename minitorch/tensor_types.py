"""PyTorch's legacy tensor types (`minitorch.FloatTensor`, `LongTensor`, ...) and `as_tensor`.

    >>> minitorch.FloatTensor([1, 2])          # from data: tensor([1., 2.])
    >>> minitorch.LongTensor(2, 3)             # from sizes: a (2, 3) int64 tensor (of zeros)
    >>> isinstance(minitorch.zeros(2), minitorch.FloatTensor)
    True
    >>> minitorch.as_tensor(x, dtype=minitorch.float64)   # x itself when nothing changes

[Note: legacy tensor types]
Before dtypes, PyTorch had one class per element type, and old programs still call them and
test `isinstance(t, torch.FloatTensor)`. In PyTorch these are not the classes of the tensors
they make (`type(torch.FloatTensor([1]))` is `torch.Tensor`); `isinstance` asks them whether a
tensor is "one of them": a float32 tensor on the cpu. Python lets any object answer that
question through the `__instancecheck__` method of its class, so each legacy type here is a
plain object, a `LegacyTensorType`, whose two methods are the whole trick:

    LegacyTensorType.__call__          FloatTensor(...) makes a float32 tensor
    LegacyTensorType.__instancecheck__ isinstance(t, FloatTensor): t.dtype is float32, on cpu

NOTE: they are not classes (PyTorch's are): `issubclass(x, FloatTensor)` is a TypeError here.
Not being classes also keeps capture honest: it answers `isinstance(t, cls)` for a class from
the tensor's type alone, which would say False; for these objects it asks them (or breaks).
"""

from __future__ import annotations

import numpy as np

from minitorch.dtype import DType, bfloat16, bool_, float16, float32, float64, int32, int64
from minitorch.errors import ArgumentTypeError, MinitorchError, at_user_line
from minitorch.overrides import make_overridable

__all__ = [
    "BFloat16Tensor",
    "BoolTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "as_tensor",
]


class LegacyTensorType:
    """FloatTensor, LongTensor, ...: see [Note: legacy tensor types]."""

    def __init__(self, name: str, dtype: DType) -> None:
        self.__name__ = name
        self.dtype = dtype  # the element type of its tensors

    def __call__(self, *args, device=None):
        """FloatTensor(data), FloatTensor(*sizes), FloatTensor(size) or FloatTensor()."""
        from minitorch import factories

        if len(args) == 1 and not _is_sizes(args[0]):
            return factories.tensor(args[0], dtype=self.dtype, device=device)
        sizes = args[0] if len(args) == 1 else args
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in sizes):
            raise ArgumentTypeError(
                at_user_line(
                    f"{self.__name__}(): expected data (a list, a tensor) or sizes (ints), got "
                    f"{args!r}"
                )
            )
        return factories.zeros(tuple(sizes) or (0,), dtype=self.dtype, device=device)

    def __instancecheck__(self, instance) -> bool:
        from minitorch.tensor import Tensor

        return (
            isinstance(instance, Tensor)
            and instance.dtype is self.dtype
            and instance.device.type == "cpu"
        )

    def __repr__(self) -> str:
        return f"<class 'minitorch.{self.__name__}'>"


def _is_sizes(arg) -> bool:
    """FloatTensor(minitorch.Size([2, 3])) gives sizes; a list or a tuple of numbers is data."""
    from minitorch.tensor import Size

    return isinstance(arg, Size) or (isinstance(arg, int) and not isinstance(arg, bool))


FloatTensor = LegacyTensorType("FloatTensor", float32)
DoubleTensor = LegacyTensorType("DoubleTensor", float64)
HalfTensor = LegacyTensorType("HalfTensor", float16)
BFloat16Tensor = LegacyTensorType("BFloat16Tensor", bfloat16)
IntTensor = LegacyTensorType("IntTensor", int32)
LongTensor = LegacyTensorType("LongTensor", int64)
BoolTensor = LegacyTensorType("BoolTensor", bool_)


def as_tensor(data, dtype: DType | None = None, device=None):
    """`data` as a tensor, without a copy where none is needed: a tensor is returned itself
    (or converted with `.to`, which keeps its autograd history); a numpy array on the cpu
    shares its memory when its dtype is kept; anything else is copied, as `tensor(data)`."""
    from minitorch import factories
    from minitorch.tensor import Tensor

    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray) and _shares(data, dtype, device):
        return factories.from_numpy(data)
    return factories.tensor(data, dtype=dtype, device=device)


def _shares(array: np.ndarray, dtype: DType | None, device) -> bool:
    from minitorch.device import device as as_device
    from minitorch.dtype import from_numpy_dtype

    on_cpu = device is None or as_device(device).type == "cpu"
    try:
        same = dtype is None or from_numpy_dtype(array.dtype) is dtype
    except MinitorchError:  # a numpy dtype minitorch lacks: tensor() names the problem
        return False
    return on_cpu and same


# as_tensor hands a Proxy (any __torch_function__ type) to it: see [Note: __torch_function__]
# in minitorch/overrides.py.
make_overridable(globals(), ["as_tensor"])
