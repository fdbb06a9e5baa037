"""The padding layers, F.pad with a fixed mode on the last 1, 2 or 3 dims:

    ZeroPad1d/2d/3d  ConstantPad1d/2d/3d  ReflectionPad1d/2d/3d  ReplicationPad1d/2d/3d
    CircularPad1d/2d/3d

A layer for n dims takes an int (every side) or 2n amounts (left, right, top, bottom, front,
back), and pads (N, C, *n dims) or, unbatched, (C, *n dims).
"""

from __future__ import annotations

from minitorch.errors import ShapeError, at_user_line
from minitorch.nn import functional as F
from minitorch.nn.module import Module
from minitorch.tensor import Tensor


class _PadNd(Module):
    """F.pad(input, self.padding, mode, value): subclasses fix the mode and the dims."""

    mode = "constant"
    dims = 2
    value: float | None = None  # the constant layers' fill (None: zeros)

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = self._amounts(padding)

    def _amounts(self, padding) -> tuple[int, ...]:
        """An int pads every side; else one amount per side, 2 * dims of them."""
        sides = 2 * self.dims
        if isinstance(padding, int) and not isinstance(padding, bool):
            return (padding,) * sides
        if isinstance(padding, (tuple, list)) and len(padding) == sides:
            return tuple(int(p) for p in padding)
        raise ShapeError(
            at_user_line(
                f"{type(self).__name__}: padding must be an int or a {sides}-tuple, got {padding!r}"
            )
        )

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (self.dims + 1, self.dims + 2):
            raise ShapeError(
                at_user_line(
                    f"{type(self).__name__}: expected {self.dims + 1}D or {self.dims + 2}D input, "
                    f"got shape {tuple(input.shape)}"
                )
            )
        return F.pad(input, self.padding, self.mode, self.value)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    """Pad with `value`."""

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ZeroPad1d(_PadNd):
    """Pad the last dim with zeros."""

    dims = 1


class ZeroPad2d(_PadNd):
    """Pad the last two dims with zeros.

    >>> ZeroPad2d((1, 1, 2, 0))
    ZeroPad2d((1, 1, 2, 0))
    """


class ZeroPad3d(_PadNd):
    dims = 3


class ConstantPad1d(_ConstantPadNd):
    dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with `value`."""


class ConstantPad3d(_ConstantPadNd):
    dims = 3


class ReflectionPad1d(_PadNd):
    """Pad with the mirror image of the input, the edge not repeated (d c b | a b c d | c b a)."""

    mode = "reflect"
    dims = 1


class ReflectionPad2d(_PadNd):
    mode = "reflect"


class ReflectionPad3d(_PadNd):
    mode = "reflect"
    dims = 3


class ReplicationPad1d(_PadNd):
    """Pad by repeating the edge (a a | a b c d | d d)."""

    mode = "replicate"
    dims = 1


class ReplicationPad2d(_PadNd):
    mode = "replicate"


class ReplicationPad3d(_PadNd):
    mode = "replicate"
    dims = 3


class CircularPad1d(_PadNd):
    """Pad by wrapping around (c d | a b c d | a b)."""

    mode = "circular"
    dims = 1


class CircularPad2d(_PadNd):
    mode = "circular"


class CircularPad3d(_PadNd):
    mode = "circular"
    dims = 3
