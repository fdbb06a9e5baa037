"""The padding layers: `ZeroPad2d`, `ConstantPad2d`, `ReflectionPad2d`, `ReplicationPad2d`,
each F.pad with a fixed mode on the last two dims of (N, C, H, W) or (C, H, W)."""

from __future__ import annotations

from minitorch.errors import ShapeError, at_user_line
from minitorch.nn import functional as F
from minitorch.nn.module import Module
from minitorch.tensor import Tensor


def _quadruple(name: str, padding) -> tuple[int, int, int, int]:
    """An int pads every side; a 4-tuple is (left, right, top, bottom)."""
    if isinstance(padding, int) and not isinstance(padding, bool):
        return (padding,) * 4
    if isinstance(padding, (tuple, list)) and len(padding) == 4:
        return tuple(int(p) for p in padding)
    raise ShapeError(at_user_line(
        f"{name}: padding must be an int or a 4-tuple (left, right, top, bottom), got "
        f"{padding!r}"
    ))


class _Pad2d(Module):
    """F.pad(input, self.padding, mode, value): subclasses fix the mode."""

    mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _quadruple(type(self).__name__, padding)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(_Pad2d):
    """Pad with zeros.

        >>> ZeroPad2d((1, 1, 2, 0))
        ZeroPad2d((1, 1, 2, 0))
    """


class ConstantPad2d(_Pad2d):
    """Pad with `value`."""

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ReflectionPad2d(_Pad2d):
    """Pad with the mirror image of the input, the edge not repeated (d c b | a b c d | c b a)."""

    mode = "reflect"


class ReplicationPad2d(_Pad2d):
    """Pad by repeating the edge (a a | a b c d | d d)."""

    mode = "replicate"
