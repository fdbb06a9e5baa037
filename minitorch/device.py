"""Devices: where a tensor's data lives, and the array module that computes on it.

Every eager kernel is written once against an array module `xp` (see the op table): numpy
for "cpu", cupy for "cuda". Without cupy, or without a GPU, asking for "cuda" raises a
`DeviceError` that says which of the two is missing.
"""

from __future__ import annotations

import functools

import numpy as np

from minitorch.errors import DeviceError, MinitorchError, at_user_line


class device:  # noqa: N801 - PyTorch's name
    """`minitorch.device("cpu")`, `device("cuda:0")`; compares equal to its type string."""

    def __init__(self, type: str | device) -> None:
        if isinstance(type, device):
            type = type.type
        kind = str(type).split(":")[0]
        if kind not in ("cpu", "cuda"):
            raise MinitorchError(at_user_line(f"unknown device {type!r}: expected 'cpu' or 'cuda'"))
        self.type = kind

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            return self.type == other.split(":")[0]
        return isinstance(other, device) and other.type == self.type

    def __hash__(self) -> int:
        return hash(self.type)

    def __str__(self) -> str:
        return self.type

    def __repr__(self) -> str:
        return f"device(type='{self.type}')"


CPU = device("cpu")
CUDA = device("cuda")


@functools.cache
def _cupy():
    """The cupy module, once we know it imports and sees a GPU; else a DeviceError."""
    try:
        import cupy
    except ImportError:
        raise DeviceError(
            "device 'cuda' is not available: cupy is not installed "
            "(pip install 'minitorch-pt2[cuda]')"
        ) from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver: CUDARuntimeError, or a library that fails to load
        raise DeviceError(f"device 'cuda' is not available: no CUDA device ({e})") from None
    if count == 0:
        raise DeviceError("device 'cuda' is not available: no CUDA device found")
    return cupy


def cuda_is_available() -> bool:
    try:
        _cupy()
    except DeviceError:
        return False
    return True


def array_module(dev: device | str):
    """numpy for "cpu"; cupy for "cuda" (raises DeviceError when that cannot work)."""
    if device(dev).type == "cpu":
        return np
    try:
        return _cupy()
    except DeviceError as e:
        raise DeviceError(at_user_line(str(e))) from None


def module_of(array):
    """The array module an array belongs to: numpy for ndarrays (and fake arrays), else cupy."""
    if type(array) is np.ndarray or not type(array).__module__.startswith("cupy"):
        return np
    return _cupy()


def device_of(array) -> device:
    return CPU if module_of(array) is np else CUDA


def move(array, dev: device | str):
    """`array` on device `dev` (the same object when it is already there)."""
    target = device(dev)
    if device_of(array) == target:
        return array
    if target.type == "cuda":
        if array.dtype.byteorder == ">":  # bfloat16's storage ([Note: bfloat16] in dtype.py)
            from minitorch.errors import DTypeError, at_user_line

            raise DTypeError(
                at_user_line(
                    "bfloat16 tensors live on the CPU only in minitorch (cupy has no bfloat16); "
                    "use float16 or float32 on cuda"
                )
            )
        return array_module(target).asarray(array)
    return array.get()  # cupy -> numpy


def to_host(array) -> np.ndarray:
    """The data as a numpy array: cupy arrays are copied over, fake arrays refuse."""
    if type(array) is np.ndarray:
        return array
    if module_of(array) is not np:
        return array.get()
    return np.asarray(array)  # a MetaArray raises DataDependentError here


def copy_in_order(array, order: tuple[int, ...] | list[int]):
    """A copy of `array` (on its device) whose memory runs through its dims in `order`,
    outermost first: (1, 0) lays a matrix out column by column."""
    out = module_of(array).empty([array.shape[d] for d in order], array.dtype)
    view = out.transpose(np.argsort(order))  # out's memory, in array's dim order
    view[...] = array
    return view
