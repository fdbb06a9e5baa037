"""Public reductions (`minitorch.sum`, `minitorch.mean`, ...) and their Tensor methods."""

from __future__ import annotations

from minitorch import ops
from minitorch.functional._common import check_tensor
from minitorch.ops.meta import normalize_dims

__all__ = ["mean", "sum"]  # the public functions of this family


def sum(input, dim=None, keepdim: bool = False):
    """Sum over `dim` (an int, a tuple, or None for every dim)."""
    check_tensor("sum", input)
    dims = None if dim is None else normalize_dims("sum", dim, input.ndim)
    return ops.sum(input, dim=dims, keepdim=keepdim)


def mean(input, dim=None, keepdim: bool = False):
    check_tensor("mean", input)
    dims = None if dim is None else normalize_dims("mean", dim, input.ndim)
    return ops.mean(input, dim=dims, keepdim=keepdim)


class ReductionMethods:
    """The reductions as Tensor methods (mixed into Tensor)."""

    def sum(self, dim=None, keepdim: bool = False):
        return sum(self, dim, keepdim)

    def mean(self, dim=None, keepdim: bool = False):
        return mean(self, dim, keepdim)
