"""Devices: where a tensor's data lives, and the array module that computes on it."""

from __future__ import annotations

import numpy as np

from minitorch.errors import MinitorchError


class device:  # noqa: N801 - PyTorch's name
    """`minitorch.device("cpu")`; compares equal to its type string."""

    def __init__(self, type: str) -> None:
        if type not in ("cpu", "cuda"):
            raise MinitorchError(f"unknown device {type!r}: expected 'cpu' or 'cuda'")
        self.type = type

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            return self.type == other
        return isinstance(other, device) and other.type == self.type

    def __hash__(self) -> int:
        return hash(self.type)

    def __str__(self) -> str:
        return self.type

    def __repr__(self) -> str:
        return f"device(type='{self.type}')"


CPU = device("cpu")


def array_module(dev: device):
    """numpy for "cpu"; cupy for "cuda" (kernels are written once against this module)."""
    if dev.type == "cpu":
        return np
    raise MinitorchError("device 'cuda' is not available yet in this build (coming with cupy)")
