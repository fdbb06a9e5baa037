"""`minitorch.accelerator`: PyTorch's device-neutral questions about the GPU, if any.

    device = minitorch.accelerator.current_accelerator() or minitorch.device("cpu")

minitorch's one kind of accelerator is a CUDA GPU through cupy (minitorch/cuda/ says when
one is there); without one, `is_available()` is False and `current_accelerator()` None, as in
PyTorch on a CPU-only machine.
"""

from __future__ import annotations

from minitorch import cuda
from minitorch.device import device
from minitorch.errors import DeviceError, at_user_line


def is_available() -> bool:
    """True when a CUDA GPU can be used (cupy is installed and sees one)."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> device | None:
    """`device("cuda")` when a GPU is there; else None (`check_available` changes nothing, as
    the only accelerator minitorch knows is one that is available)."""
    return device("cuda") if cuda.is_available() else None


def device_count() -> int:
    """How many GPUs there are: 0 without CUDA."""
    return cuda.device_count()


def current_device_index() -> int:
    """The index of the accelerator in use (minitorch uses the first GPU), or -1 without one."""
    return cuda.current_device() if cuda.is_available() else -1


def set_device_index(index: int) -> None:
    """Choose the accelerator: minitorch uses GPU 0 only, so 0 is the one index it accepts."""
    if not cuda.is_available() or index != 0:
        raise DeviceError(
            at_user_line(
                f"accelerator.set_device_index({index!r}): minitorch uses the first GPU only, and "
                f"{'there is none here' if not cuda.is_available() else 'its index is 0'}"
            )
        )


def synchronize(device_: device | str | int | None = None) -> None:
    """Wait for the GPU's queued kernels to finish; nothing without one."""
    cuda.synchronize()
