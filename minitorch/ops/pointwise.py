"""The op table, pointwise ops: arithmetic, powers, transcendental functions.

See [Note: the op table] in registry.py.

A derivative receives the incoming gradient, the op's output and its arguments, and returns one
gradient per argument (None for Python numbers and non-differentiable inputs). Derivatives and
decompositions call the ops themselves, so AOT autograd can record them.
"""

from __future__ import annotations

from minitorch.ops import meta as m
from minitorch.ops.helpers import is_tensor, sum_to
from minitorch.ops.registry import OpDef, register

# the ops this family registers
__all__ = ["add", "sub", "mul", "div", "neg", "pow", "sin", "cos", "exp", "log", "to_copy"]

# ---- pointwise, binary -------------------------------------------------------------------

add = register(OpDef(
    "add", "pointwise", m.binary("add"),
    impl=lambda xp, a, b: xp.add(a, b),
    backward=lambda g, out, a, b: (sum_to(g, a), sum_to(g, b)),
))
sub = register(OpDef(
    "sub", "pointwise", m.binary("sub"),
    impl=lambda xp, a, b: xp.subtract(a, b),
    backward=lambda g, out, a, b: (sum_to(g, a), sum_to(neg(g), b)),
))
mul = register(OpDef(
    "mul", "pointwise", m.binary("mul"),
    impl=lambda xp, a, b: xp.multiply(a, b),
    backward=lambda g, out, a, b: (sum_to(mul(g, b), a), sum_to(mul(g, a), b)),
))


def _div_backward(g, out, a, b):
    # d(a/b)/da = 1/b;  d(a/b)/db = -a/b**2 = -out/b
    grad_b = sum_to(neg(mul(g, div(out, b))), b) if is_tensor(b) else None
    return sum_to(div(g, b), a), grad_b


div = register(OpDef(
    "div", "pointwise", m.binary("div", float_result=True),
    impl=lambda xp, a, b: xp.true_divide(a, b),
    backward=_div_backward,
))

# ---- pointwise, unary --------------------------------------------------------------------

neg = register(OpDef(
    "neg", "pointwise", m.unary_same("neg"),
    impl=lambda xp, a: xp.negative(a),
    backward=lambda g, out, a: (neg(g),),
))


def _pow_backward(g, out, x, exponent):
    # d(x**c)/dx = c * x**(c-1)
    if exponent == 0:
        return mul(g, 0.0), None
    x_pow = x if exponent == 2 else pow(x, exponent - 1)
    return mul(g, mul(x_pow, exponent)), None


pow = register(OpDef(
    "pow", "pointwise", m.pow_meta,
    impl=lambda xp, a, exponent: xp.power(a, exponent),
    backward=_pow_backward,
))
sin = register(OpDef(
    "sin", "pointwise", m.unary_float("sin"),
    impl=lambda xp, a: xp.sin(a),
    backward=lambda g, out, x: (mul(g, cos(x)),),
))
cos = register(OpDef(
    "cos", "pointwise", m.unary_float("cos"),
    impl=lambda xp, a: xp.cos(a),
    backward=lambda g, out, x: (mul(g, neg(sin(x))),),
))
exp = register(OpDef(
    "exp", "pointwise", m.unary_float("exp"),
    impl=lambda xp, a: xp.exp(a),
    backward=lambda g, out, x: (mul(g, out),),
))
log = register(OpDef(
    "log", "pointwise", m.unary_float("log"),
    impl=lambda xp, a: xp.log(a),
    backward=lambda g, out, x: (div(g, x),),
))

# ---- conversions -------------------------------------------------------------------------


def _to_copy_meta(x, dtype=None, device=None) -> m.TensorMeta:
    return m.TensorMeta(tuple(x.shape), dtype or x.dtype)


def _to_copy_impl(xp, a, dtype=None, device=None):
    from minitorch.device import move

    a = move(a, device) if device is not None else a
    return a.astype(dtype.np) if dtype is not None else a.copy()


def _to_copy_backward(g, out, x, dtype=None, device=None):
    # The gradient goes back to the input's dtype and device.
    return (to_copy(g, dtype=x.dtype, device=x.device if device is not None else None),)


to_copy = register(OpDef(
    "to_copy", "pointwise", _to_copy_meta,
    impl=_to_copy_impl,
    backward=_to_copy_backward,
))
