"""`minitorch.cuda`: is a GPU there, how many, and seeding, as `torch.cuda` answers them.

    device = "cuda" if minitorch.cuda.is_available() else "cpu"
    minitorch.cuda.amp.autocast(), minitorch.cuda.amp.GradScaler()   # old names (amp.py)

A CUDA device can be used when cupy imports and sees at least one GPU (minitorch/device.py);
without one, `is_available()` is False and `device_count()` 0, and the seeding functions do
nothing, as PyTorch's do on a machine without CUDA.

NOTE: minitorch draws the random numbers of every device from the one host stream of
minitorch/factories.py and copies them over, so seeding "the CUDA generators" is seeding that
stream (only when a GPU is there: elsewhere it must not change the CPU's numbers).
"""

from __future__ import annotations

from minitorch.cuda import amp  # noqa: F401 - minitorch.cuda.amp.autocast, GradScaler
from minitorch.device import _cupy, cuda_is_available
from minitorch.generator import check_seed


def is_available() -> bool:
    """True when tensors can be put on "cuda": cupy is installed and sees a GPU."""
    return cuda_is_available()


def device_count() -> int:
    """How many GPUs cupy sees; 0 without CUDA."""
    if not cuda_is_available():
        return 0
    return int(_cupy().cuda.runtime.getDeviceCount())


def current_device() -> int:
    """The index of the GPU in use: minitorch uses the first one."""
    return 0


def synchronize() -> None:
    """Wait for every kernel queued on the GPU to finish (for timing); nothing without CUDA."""
    if cuda_is_available():
        _cupy().cuda.Device().synchronize()


def manual_seed(seed: int) -> None:
    """Seed the numbers drawn for "cuda" tensors; ignored without CUDA (see the NOTE above)."""
    seed = check_seed("cuda.manual_seed()", seed)
    if cuda_is_available():
        from minitorch.factories import manual_seed as seed_stream

        seed_stream(seed)


def manual_seed_all(seed: int) -> None:
    """Seed the numbers of every GPU: minitorch's GPUs share one stream, so `manual_seed`."""
    manual_seed(seed)
