"""`minitorch.cpu`: the CPU as a device module, the counterpart of `minitorch.cuda`.

minitorch.cpu.is_available()        # True
with minitorch.cpu.amp.autocast():  # minitorch.autocast("cpu"), see minitorch/amp/
"""

from __future__ import annotations

from minitorch.cpu import amp

__all__ = ["amp", "current_device", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    """Always True: minitorch always runs on the CPU."""
    return True


def device_count() -> int:
    """1: PyTorch counts the CPU as one device, whatever its cores."""
    return 1


def current_device() -> str:
    """ "cpu", as PyTorch answers."""
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for: CPU ops finish before they return."""
