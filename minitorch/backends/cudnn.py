"""`minitorch.backends.cudnn`: cuDNN's flags, at PyTorch's defaults; minitorch never calls cuDNN.

    minitorch.backends.cudnn.benchmark = True   # PyTorch: try algorithms, keep the fastest
    minitorch.backends.cudnn.is_available()     # False: there is no cuDNN here to use

NOTE: these are plain attributes that nothing in minitorch reads (see minitorch/backends/):
minitorch's convolutions are its own kernels, deterministic and in the tensor's precision, so
`deterministic = True` holds already and `allow_tf32` cannot lower the precision.
"""

from __future__ import annotations

benchmark: bool = False  # PyTorch's default: no autotuning of convolution algorithms
deterministic: bool = False  # PyTorch's default; minitorch's kernels are deterministic anyway
enabled: bool = True  # PyTorch's default: use cuDNN when it is there
allow_tf32: bool = True  # PyTorch's default for convolutions (cuda.matmul.allow_tf32 is False)


def is_available() -> bool:
    """False: minitorch has no cuDNN (its GPU kernels are generated NVPTX, run through cupy)."""
    return False


def is_acceptable(tensor) -> bool:
    """Whether cuDNN would take `tensor`: never, as there is no cuDNN here."""
    return False


def version() -> None:
    """cuDNN's version, None when there is none (as in PyTorch without cuDNN)."""
    return None
