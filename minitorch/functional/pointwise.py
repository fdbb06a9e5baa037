"""Public pointwise functions (`minitorch.sin`, `minitorch.add`, ...) and their Tensor methods."""

from __future__ import annotations

from minitorch import ops
from minitorch.functional._common import check_tensor

# the public functions of this family
__all__ = ["add", "cos", "div", "exp", "log", "mul", "neg", "pow", "sin", "sub"]


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


def neg(input):
    check_tensor("neg", input)
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
    check_tensor("pow", input)
    return ops.pow(input, exponent)


class PointwiseMethods:
    """The pointwise ops as Tensor methods and Python operators (mixed into Tensor)."""

    def sin(self):
        return sin(self)

    def cos(self):
        return cos(self)

    def exp(self):
        return exp(self)

    def log(self):
        return log(self)

    def neg(self):
        return neg(self)

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

    def __add__(self, other):
        return add(self, other) if _is_operand(other) else NotImplemented

    def __radd__(self, other):
        return add(other, self) if _is_operand(other) else NotImplemented

    def __sub__(self, other):
        return sub(self, other) if _is_operand(other) else NotImplemented

    def __rsub__(self, other):
        return sub(other, self) if _is_operand(other) else NotImplemented

    def __mul__(self, other):
        return mul(self, other) if _is_operand(other) else NotImplemented

    def __rmul__(self, other):
        return mul(other, self) if _is_operand(other) else NotImplemented

    def __truediv__(self, other):
        return div(self, other) if _is_operand(other) else NotImplemented

    def __rtruediv__(self, other):
        return div(other, self) if _is_operand(other) else NotImplemented

    def __pow__(self, exponent):
        return pow(self, exponent) if _is_operand(exponent) else NotImplemented

    def __neg__(self):
        return neg(self)

    def __pos__(self):
        return self


def _is_operand(x) -> bool:
    from minitorch.tensor import Tensor

    return isinstance(x, (Tensor, bool, int, float))
