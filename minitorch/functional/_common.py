"""Argument checks shared by the public functions."""

from __future__ import annotations

from minitorch.dispatch import tensor_class
from minitorch.errors import DTypeError, at_user_line


def check_tensor(op: str, x) -> None:
    """Refuse a non-tensor where PyTorch wants a Tensor, naming the op."""
    if not isinstance(x, tensor_class()):
        raise DTypeError(at_user_line(f"{op}(): expected a Tensor, got {type(x).__name__}"))


def shape_arg(shape: tuple) -> tuple:
    """Accept both x.reshape(2, 3) and x.reshape((2, 3))."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)
