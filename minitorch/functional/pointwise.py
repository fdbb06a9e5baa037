"""Public pointwise functions (`minitorch.sin`, `minitorch.where`, ...) and their Tensor methods.

Each function takes PyTorch's arguments and calls the op table (`minitorch.ops`), where
[Note: the pointwise primitives] says which of them are primitives.
"""

from __future__ import annotations

import numpy as np

from minitorch import ops
from minitorch.errors import DTypeError, at_user_line
from minitorch.functional._common import check_tensor
from minitorch.overrides import make_overridable

# the public functions of this family
__all__ = [
    "abs",
    "add",
    "allclose",
    "clamp",
    "clip",
    "cos",
    "div",
    "eq",
    "erf",
    "exp",
    "expm1",
    "ge",
    "gt",
    "isclose",
    "le",
    "log",
    "log1p",
    "lt",
    "masked_fill",
    "maximum",
    "minimum",
    "mul",
    "ne",
    "neg",
    "pow",
    "reciprocal",
    "relu",
    "rsqrt",
    "sigmoid",
    "sin",
    "sqrt",
    "sub",
    "tanh",
    "where",
]

# ---- one tensor --------------------------------------------------------------------------


def abs(input):
    check_tensor("abs", input)
    return ops.abs(input)


def neg(input):
    check_tensor("neg", input)
    return ops.neg(input)


def sin(input):
    check_tensor("sin", input)
    return ops.sin(input)


def cos(input):
    check_tensor("cos", input)
    return ops.cos(input)


def exp(input):
    check_tensor("exp", input)
    return ops.exp(input)


def log(input):
    check_tensor("log", input)
    return ops.log(input)


def sqrt(input):
    check_tensor("sqrt", input)
    return ops.sqrt(input)


def rsqrt(input):
    """1 / sqrt(input)"""
    check_tensor("rsqrt", input)
    return ops.rsqrt(input)


def reciprocal(input):
    """1 / input (a float for integer input)"""
    check_tensor("reciprocal", input)
    return ops.reciprocal(input)


def tanh(input):
    check_tensor("tanh", input)
    return ops.tanh(input)


def sigmoid(input):
    """1 / (1 + exp(-input))"""
    check_tensor("sigmoid", input)
    return ops.sigmoid(input)


def relu(input):
    """max(input, 0)"""
    check_tensor("relu", input)
    return ops.relu(input)


def erf(input):
    """2 / sqrt(pi) * integral from 0 to input of exp(-t^2) dt"""
    check_tensor("erf", input)
    return ops.erf(input)


def log1p(input):
    """log(1 + input), accurate for a small input (where 1 + input would round it away)."""
    check_tensor("log1p", input)
    return ops.log1p(input)


def expm1(input):
    """exp(input) - 1, accurate for a small input."""
    check_tensor("expm1", input)
    return ops.expm1(input)


# ---- arithmetic --------------------------------------------------------------------------


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
    """input ** exponent; either may be a Python number: pow(x, 2), pow(2, x)."""
    if not _is_tensor(input) and not _is_tensor(exponent):
        raise DTypeError(
            at_user_line(
                f"pow(): expected a Tensor, got {type(input).__name__} and "
                f"{type(exponent).__name__}"
            )
        )
    return ops.pow(input, exponent)


def maximum(input, other):
    """The larger of input and other, elementwise; NaN if either is NaN."""
    check_tensor("maximum", input)
    check_tensor("maximum", other)
    return ops.maximum(input, other)


def minimum(input, other):
    """The smaller of input and other, elementwise; NaN if either is NaN."""
    check_tensor("minimum", input)
    check_tensor("minimum", other)
    return ops.minimum(input, other)


def clamp(input, min=None, max=None):
    """min(max(input, min), max), elementwise; `min` and `max` are numbers or tensors, and
    either may be None."""
    check_tensor("clamp", input)
    return ops.clamp(input, min, max)


clip = clamp  # PyTorch's alias

# ---- comparisons and selection -----------------------------------------------------------


def eq(input, other):
    """input == other, elementwise, as a bool tensor"""
    check_tensor("eq", input)
    return ops.eq(input, other)


def ne(input, other):
    """input != other"""
    check_tensor("ne", input)
    return ops.ne(input, other)


def lt(input, other):
    """input < other"""
    check_tensor("lt", input)
    return ops.lt(input, other)


def le(input, other):
    """input <= other"""
    check_tensor("le", input)
    return ops.le(input, other)


def gt(input, other):
    """input > other"""
    check_tensor("gt", input)
    return ops.gt(input, other)


def ge(input, other):
    """input >= other"""
    check_tensor("ge", input)
    return ops.ge(input, other)


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Elementwise |input - other| <= atol + rtol * |other| (or equal), as a bool tensor."""
    check_tensor("isclose", input)
    check_tensor("isclose", other)
    return ops.isclose(input, other, rtol, atol, equal_nan)


def allclose(
    input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Is every element of isclose(input, other, ...) true? A Python bool."""
    close = isclose(input, other, rtol, atol, equal_nan)
    return close.numel() == 0 or bool(ops.amin(close).item())


def where(condition, input, other):
    """input where condition is True, else other; input and other may be Python numbers.

    >>> minitorch.where(x > 0, x, 0.0)      # relu
    """
    check_tensor("where", condition)
    return ops.where(condition, input, other)


def masked_fill(input, mask, value):
    """input with `value` wherever the bool `mask` is True (value: a number or a 0-d tensor)."""
    check_tensor("masked_fill", input)
    return ops.masked_fill(input, mask, value)


# ---- Tensor methods ----------------------------------------------------------------------


class PointwiseMethods:
    """The pointwise ops as Tensor methods and Python operators (mixed into Tensor)."""

    # NOTE: defining __eq__ would make Tensor unhashable; PyTorch keeps tensors hashable by
    # identity, so they work as dict keys and in sets (the optimizer's state, for one).
    __hash__ = object.__hash__

    def abs(self):
        return abs(self)

    def neg(self):
        return neg(self)

    def sin(self):
        return sin(self)

    def cos(self):
        return cos(self)

    def exp(self):
        return exp(self)

    def log(self):
        return log(self)

    def sqrt(self):
        return sqrt(self)

    def rsqrt(self):
        return rsqrt(self)

    def reciprocal(self):
        return reciprocal(self)

    def tanh(self):
        return tanh(self)

    def sigmoid(self):
        return sigmoid(self)

    def relu(self):
        return relu(self)

    def erf(self):
        return erf(self)

    def log1p(self):
        return log1p(self)

    def expm1(self):
        return expm1(self)

    def add(self, other, *, alpha=1):
        return add(self, other, alpha=alpha)

    def sub(self, other, *, alpha=1):
        return sub(self, other, alpha=alpha)

    def mul(self, other):
        return mul(self, other)

    def div(self, other):
        return div(self, other)

    def pow(self, exponent):
        return pow(self, exponent)

    def maximum(self, other):
        return maximum(self, other)

    def minimum(self, other):
        return minimum(self, other)

    def clamp(self, min=None, max=None):
        return clamp(self, min, max)

    def clip(self, min=None, max=None):
        return clamp(self, min, max)

    def eq(self, other):
        return eq(self, other)

    def ne(self, other):
        return ne(self, other)

    def lt(self, other):
        return lt(self, other)

    def le(self, other):
        return le(self, other)

    def gt(self, other):
        return gt(self, other)

    def ge(self, other):
        return ge(self, other)

    def where(self, condition, other):
        """self where condition is True, else other: x.where(c, y) is where(c, x, y)."""
        return where(condition, self, other)

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
        return isclose(self, other, rtol, atol, equal_nan)

    def allclose(
        self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
    ) -> bool:
        return allclose(self, other, rtol, atol, equal_nan)

    def masked_fill(self, mask, value):
        return masked_fill(self, mask, value)

    # ---- operators -----------------------------------------------------------------------
    # NOTE: straight to the op table (the functions above add only argument checks that an
    # operator on a tensor never needs): an operator is the most common call of all.

    def __add__(self, other):
        return ops.add(self, other) if _is_operand(other) else NotImplemented

    def __radd__(self, other):
        return ops.add(other, self) if _is_operand(other) else NotImplemented

    def __sub__(self, other):
        return ops.sub(self, other) if _is_operand(other) else NotImplemented

    def __rsub__(self, other):
        return ops.sub(other, self) if _is_operand(other) else NotImplemented

    def __mul__(self, other):
        return ops.mul(self, other) if _is_operand(other) else NotImplemented

    def __rmul__(self, other):
        return ops.mul(other, self) if _is_operand(other) else NotImplemented

    def __truediv__(self, other):
        return ops.div(self, other) if _is_operand(other) else NotImplemented

    def __rtruediv__(self, other):
        return ops.div(other, self) if _is_operand(other) else NotImplemented

    def __pow__(self, exponent):
        return ops.pow(self, exponent) if _is_operand(exponent) else NotImplemented

    def __rpow__(self, base):
        return ops.pow(base, self) if _is_operand(base) else NotImplemented

    def __neg__(self):
        return ops.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return ops.abs(self)

    def __eq__(self, other):
        return ops.eq(self, other) if _is_operand(other) else NotImplemented

    def __ne__(self, other):
        return ops.ne(self, other) if _is_operand(other) else NotImplemented

    def __lt__(self, other):
        return ops.lt(self, other) if _is_operand(other) else NotImplemented

    def __le__(self, other):
        return ops.le(self, other) if _is_operand(other) else NotImplemented

    def __gt__(self, other):
        return ops.gt(self, other) if _is_operand(other) else NotImplemented

    def __ge__(self, other):
        return ops.ge(self, other) if _is_operand(other) else NotImplemented


# Every Tensor is a PointwiseMethods (the class mixes it in), so these need no import of
# minitorch.tensor, which imports this module; they run on every operator.
def _is_tensor(x) -> bool:
    return isinstance(x, PointwiseMethods)


def _is_operand(x) -> bool:
    """A tensor or a number; a numpy scalar is a number ([Note: numpy scalars] in dispatch)."""
    return isinstance(x, (PointwiseMethods, bool, int, float, np.generic))


# Every public function hands a Proxy (any __torch_function__ type) to it: see
# [Note: __torch_function__] in minitorch/overrides.py.
make_overridable(globals(), __all__)
