"""`minitorch.backends.mps`: Apple's Metal GPUs, which minitorch does not support."""

from __future__ import annotations


def is_available() -> bool:
    """False: minitorch runs on the CPU and on CUDA GPUs only."""
    return False


def is_built() -> bool:
    """False: minitorch has no Metal backend."""
    return False
