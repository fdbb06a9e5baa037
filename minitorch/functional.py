"""The user-facing functions: `minitorch.sin(x)`, `minitorch.sum(x, dim=1)`, ...

Each normalises PyTorch's signature (keyword names, defaults, `alpha=`, negative dims) and calls
the op table (`minitorch.ops`). Bytecode capture records these public functions in the graphs it
builds (`minitorch.sin`), as Dynamo records `torch.sin`; AOT autograd then records the op-table
calls underneath (`minitorch.ops.sin`), as AOTAutograd records aten ops.
"""

from __future__ import annotations

from minitorch import ops
from minitorch.errors import DTypeError, at_user_line
from minitorch.ops.meta import normalize_dims


def _check_tensor(op: str, x) -> None:
    from minitorch.tensor import Tensor

    if not isinstance(x, Tensor):
        raise DTypeError(at_user_line(f"{op}(): expected a Tensor, got {type(x).__name__}"))


def sin(input):
    _check_tensor("sin", input)
    return ops.sin(input)


def cos(input):
    _check_tensor("cos", input)
    return ops.cos(input)


def exp(input):
    _check_tensor("exp", input)
    return ops.exp(input)


def log(input):
    _check_tensor("log", input)
    return ops.log(input)


def neg(input):
    _check_tensor("neg", input)
    return ops.neg(input)


def add(input, other, *, alpha=1):
    """input + alpha * other"""
    return ops.add(input, other if alpha == 1 else ops.mul(other, alpha))


def sub(input, other, *, alpha=1):
    """input - alpha * other"""
    return ops.sub(input, other if alpha == 1 else ops.mul(other, alpha))


def mul(input, other):
    return ops.mul(input, other)


def div(input, other):
    return ops.div(input, other)


def pow(input, exponent):
    """input ** exponent, for a Python-number exponent."""
    _check_tensor("pow", input)
    return ops.pow(input, exponent)


def sum(input, dim=None, keepdim: bool = False):
    """Sum over `dim` (an int, a tuple, or None for every dim)."""
    _check_tensor("sum", input)
    dims = None if dim is None else normalize_dims("sum", dim, input.ndim)
    return ops.sum(input, dim=dims, keepdim=keepdim)


def mean(input, dim=None, keepdim: bool = False):
    _check_tensor("mean", input)
    dims = None if dim is None else normalize_dims("mean", dim, input.ndim)
    return ops.mean(input, dim=dims, keepdim=keepdim)


def reshape(input, shape):
    _check_tensor("reshape", input)
    return ops.reshape(input, tuple(shape))


def expand(input, shape):
    _check_tensor("expand", input)
    return ops.expand(input, tuple(shape))
