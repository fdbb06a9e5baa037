"""The op table: one row per op (see [Note: the op table] in registry.py).

A derivative receives the incoming gradient, the op's output and its arguments, and returns one
gradient per argument (None for Python numbers and non-differentiable inputs). Derivatives and
decompositions call these same ops, so AOT autograd can record them.
"""

from __future__ import annotations

from minitorch.ops import meta as m
from minitorch.ops.registry import OpDef, register


def _is_tensor(x) -> bool:
    return not isinstance(x, (bool, int, float))


def sum_to(grad, like):
    """Undo broadcasting: sum `grad` down to the shape of `like` (None for a Python number)."""
    if not _is_tensor(like):
        return None
    shape = tuple(like.shape)
    if tuple(grad.shape) == shape:
        return grad
    lead = len(grad.shape) - len(shape)
    if lead:
        grad = sum(grad, dim=tuple(range(lead)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = sum(grad, dim=stretched, keepdim=True)
    return grad


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
    grad_b = sum_to(neg(mul(g, div(out, b))), b) if _is_tensor(b) else None
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

# ---- reductions --------------------------------------------------------------------------


def _sum_impl(xp, a, dim=None, keepdim=False):
    axes = m.normalize_dims("sum", dim, a.ndim)
    out_dtype = m.sum_meta(_ArrayMeta(a), dim, keepdim).dtype.np
    return xp.sum(a, axis=axes, keepdims=keepdim, dtype=out_dtype)


def _sum_backward(g, out, x, dim=None, keepdim=False):
    # Every input element contributed once: put the reduced dims back, then broadcast.
    dims = m.normalize_dims("sum", dim, len(x.shape))
    if not keepdim:
        g = reshape(g, tuple(1 if i in dims else n for i, n in enumerate(x.shape)))
    return (expand(g, tuple(x.shape)),)


sum = register(OpDef(
    "sum", "reduction", m.sum_meta,
    impl=_sum_impl,
    backward=_sum_backward,
))


def _mean_decomposition(x, dim=None, keepdim=False):
    dims = m.normalize_dims("mean", dim, len(x.shape))
    count = 1
    for d in dims:
        count *= x.shape[d]
    return div(sum(x, dim=dims, keepdim=keepdim), count)


mean = register(OpDef("mean", "composite", None, decomposition=_mean_decomposition))

# ---- views -------------------------------------------------------------------------------

expand = register(OpDef(
    "expand", "view", m.expand_meta,
    impl=lambda xp, a, shape: xp.broadcast_to(a, m.expand_meta(_ArrayMeta(a), shape).shape),
    backward=lambda g, out, x, shape: (sum_to(g, x),),
))
reshape = register(OpDef(
    "reshape", "view", m.reshape_meta,
    impl=lambda xp, a, shape: xp.reshape(a, m.infer_reshape("reshape", a.shape, shape)),
    backward=lambda g, out, x, shape: (reshape(g, tuple(x.shape)),),
))


class _ArrayMeta:
    """Lets an eager kernel reuse a shape/dtype rule on a raw array."""

    def __init__(self, array):
        from minitorch.dtype import from_numpy_dtype

        self.shape = array.shape
        self.dtype = from_numpy_dtype(array.dtype)
