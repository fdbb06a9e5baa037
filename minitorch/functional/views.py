"""Public view functions (`minitorch.reshape`, ...) and their Tensor methods."""

from __future__ import annotations

from minitorch import ops
from minitorch.functional._common import check_tensor, shape_arg

__all__ = ["expand", "reshape"]  # the public functions of this family


def reshape(input, shape):
    check_tensor("reshape", input)
    return ops.reshape(input, tuple(shape))


def expand(input, shape):
    check_tensor("expand", input)
    return ops.expand(input, tuple(shape))


class ViewMethods:
    """The view ops as Tensor methods (mixed into Tensor)."""

    def reshape(self, *shape):
        return reshape(self, shape_arg(shape))

    def expand(self, *shape):
        return expand(self, shape_arg(shape))
