"""Public truth and bit functions (`minitorch.logical_and`, `minitorch.bitwise_or`,
`minitorch.isnan`, ...), their Tensor methods, and the operators `&`, `|`, `^`, `~`.

    >>> x = minitorch.tensor([1.0, float("nan"), float("inf")])
    >>> (x > 0) & minitorch.isfinite(x)
    tensor([ True, False, False])
    >>> ~minitorch.tensor([0, 5])
    tensor([-1, -6])

On two bools, the bitwise functions (and the operators) are the logical ones, which compile as
fused loops; on integers they work on the bits ([Note: logical and bitwise ops] in
minitorch/ops/logical.py).
"""

from __future__ import annotations

from minitorch import ops
from minitorch.dtype import bool_
from minitorch.errors import DTypeError, at_user_line
from minitorch.functional._common import check_tensor
from minitorch.overrides import make_overridable

# the public functions of this family
__all__ = [
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "isfinite",
    "isinf",
    "isnan",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
]

# ---- logical -----------------------------------------------------------------------------


def logical_not(input):
    """input == 0, as bool: True where the element is zero (False), else False."""
    check_tensor("logical_not", input)
    return ops.logical_not(input)


def logical_and(input, other):
    """Both nonzero, elementwise, as bool (shapes broadcast)."""
    check_tensor("logical_and", input)
    check_tensor("logical_and", other)
    return ops.logical_and(input, other)


def logical_or(input, other):
    """Either nonzero, elementwise, as bool (shapes broadcast)."""
    check_tensor("logical_or", input)
    check_tensor("logical_or", other)
    return ops.logical_or(input, other)


def logical_xor(input, other):
    """Exactly one nonzero, elementwise, as bool (shapes broadcast)."""
    check_tensor("logical_xor", input)
    check_tensor("logical_xor", other)
    return ops.logical_xor(input, other)


# ---- bitwise -----------------------------------------------------------------------------


def _both_bool(input, other) -> bool:
    return _is_bool(input) and _is_bool(other)


def _is_bool(x) -> bool:
    return isinstance(x, bool) or getattr(x, "dtype", None) is bool_


def _check_operands(op: str, input, other) -> None:
    """A tensor and a tensor or an int/bool: PyTorch's bitwise ops take nothing else."""
    if not _is_tensor(input) and not _is_tensor(other):
        raise DTypeError(
            at_user_line(
                f"{op}(): expected a Tensor, got {type(input).__name__} and {type(other).__name__}"
            )
        )
    for x in (input, other):
        if not _is_tensor(x) and not isinstance(x, int):
            raise DTypeError(
                at_user_line(
                    f"{op}(): not implemented for {type(x).__name__}; bitwise ops take integer or "
                    "bool tensors and Python ints/bools"
                )
            )


def bitwise_and(input, other):
    """input & other: the bits of integers, "and" of bools."""
    _check_operands("bitwise_and", input, other)
    if _both_bool(input, other):
        return ops.logical_and(input, other)
    return ops.bitwise_and(input, other)


def bitwise_or(input, other):
    """input | other: the bits of integers, "or" of bools."""
    _check_operands("bitwise_or", input, other)
    if _both_bool(input, other):
        return ops.logical_or(input, other)
    return ops.bitwise_or(input, other)


def bitwise_xor(input, other):
    """input ^ other: the bits of integers, "xor" of bools."""
    _check_operands("bitwise_xor", input, other)
    if _both_bool(input, other):
        return ops.logical_xor(input, other)
    return ops.bitwise_xor(input, other)


def bitwise_not(input):
    """~input: -input - 1 for integers, "not" for bools; floats are refused."""
    check_tensor("bitwise_not", input)
    return ops.bitwise_not(input)


# ---- isnan, isinf, isfinite --------------------------------------------------------------


def isnan(input):
    """True where the element is NaN (never, for integers)."""
    check_tensor("isnan", input)
    return ops.isnan(input)


def isinf(input):
    """True where the element is +inf or -inf (never, for integers)."""
    check_tensor("isinf", input)
    return ops.isinf(input)


def isfinite(input):
    """True where the element is neither NaN nor infinite (always, for integers)."""
    check_tensor("isfinite", input)
    return ops.isfinite(input)


# ---- Tensor methods and operators ----------------------------------------------------------


class LogicalMethods:
    """The functions above as Tensor methods (mixed into Tensor), and `&`, `|`, `^`, `~`."""

    def logical_not(self):
        return logical_not(self)

    def logical_and(self, other):
        return logical_and(self, other)

    def logical_or(self, other):
        return logical_or(self, other)

    def logical_xor(self, other):
        return logical_xor(self, other)

    def bitwise_and(self, other):
        return bitwise_and(self, other)

    def bitwise_or(self, other):
        return bitwise_or(self, other)

    def bitwise_xor(self, other):
        return bitwise_xor(self, other)

    def bitwise_not(self):
        return bitwise_not(self)

    def isnan(self):
        return isnan(self)

    def isinf(self):
        return isinf(self)

    def isfinite(self):
        return isfinite(self)

    # Python operators: a number goes to the function, which names the op if it is a float;
    # anything else is NotImplemented, so that Python tries the other side.
    def __and__(self, other):
        return bitwise_and(self, other) if _is_operand(other) else NotImplemented

    def __rand__(self, other):
        return bitwise_and(other, self) if _is_operand(other) else NotImplemented

    def __or__(self, other):
        return bitwise_or(self, other) if _is_operand(other) else NotImplemented

    def __ror__(self, other):
        return bitwise_or(other, self) if _is_operand(other) else NotImplemented

    def __xor__(self, other):
        return bitwise_xor(self, other) if _is_operand(other) else NotImplemented

    def __rxor__(self, other):
        return bitwise_xor(other, self) if _is_operand(other) else NotImplemented

    def __invert__(self):
        return bitwise_not(self)

    # m &= b writes into m, as PyTorch's does (every alias of m sees it): the in-place
    # machinery of minitorch/inplace.py, as for +=.
    def __iand__(self, other):
        return self._in_place("bitwise_and_", lambda t: bitwise_and(t, other))

    def __ior__(self, other):
        return self._in_place("bitwise_or_", lambda t: bitwise_or(t, other))

    def __ixor__(self, other):
        return self._in_place("bitwise_xor_", lambda t: bitwise_xor(t, other))


def _is_tensor(x) -> bool:
    return isinstance(x, LogicalMethods)  # every Tensor mixes it in


def _is_operand(x) -> bool:
    return isinstance(x, (LogicalMethods, int, float))  # (bool is an int)


# Every public function hands a Proxy (any __torch_function__ type) to it: see
# [Note: __torch_function__] in minitorch/overrides.py.
make_overridable(globals(), __all__)
