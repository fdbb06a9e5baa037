"""The op table, pointwise ops: arithmetic, powers, elementwise functions, conversions.

See [Note: the op table] in registry.py. The comparisons, `where`, maximum and minimum, and
the composites written with them (relu, clamp, masked_fill, isclose) are selection.py.

A derivative receives the incoming gradient, the op's output and its arguments, and returns one
gradient per argument (None for Python numbers and non-differentiable inputs). Derivatives and
decompositions call the ops themselves, so AOT autograd can record them.

[Note: the pointwise primitives]
Every primitive is one more op that AOT autograd's graphs, the loop-level IR and each backend
must know, so an op is primitive only when it has to be (this module's ops and selection.py's):

    primitive        why
    ---------------  ------------------------------------------------------------------------
    add sub mul div  arithmetic
    neg abs          abs: clearing the sign bit is exact (-0.0 -> 0.0, NaN stays NaN); the
                     composite max(x, -x) gives -0.0 for numpy's tie rule
    pow              x ** y: exp(y log x) fails for negative bases and integer dtypes
    sin cos exp log  transcendental functions
    tanh             exp forms cancel near 0: (1 - e^-2x) / (1 + e^-2x) loses the digits of
                     a small x
    sigmoid          its derivative must be s (1 - s): the composite 1 / (1 + e^-x)
                     differentiates to e^-x / (1 + e^-x)^2 = inf / inf = NaN for x < -88
                     in float32
    erf              a special function: no finite combination of the others computes it
    log1p expm1      log(1 + x) and exp(x) - 1 round 1 + x (or e^x) first and lose the digits
                     of a small x: log1p(1e-10) would be 0, or 1.00000008e-10 in float64
    eq ne lt le      comparisons (bool results)
    where            selection between two values
    maximum minimum  NaN propagates (where(a > b, a, b) would drop a NaN a), and ties split
                     the gradient evenly, as PyTorch's do
    to_copy          conversion between dtypes and devices

    composite        decomposition
    ---------------  ------------------------------------------------------------------------
    gt ge            lt, le with the operands swapped: a > b is b < a
    sqrt             pow(x, 0.5)
    rsqrt            div(1, sqrt(x)), as PyTorch computes it
    reciprocal       div(1, x)
    relu             where(x <= 0, 0, x): relu'(0) = 0, and a NaN passes through
    clamp            where(x < min, min, x), then where(y > max, max, y)
    masked_fill      where(mask, value, x), in x's dtype
    isclose          eq(a, b), or where the error |a - b| is finite, le(error, atol + rtol |b|)
    gelu silu        0.5 x (1 + erf(x / sqrt 2)) (or its tanh form), x sigmoid(x)

The derivatives here and in selection.py skip the gradient of an input that does not require
one (helpers.py's `needs_grad`): the engine would drop it anyway, and each skipped formula is
ops not run, nor traced.
"""

from __future__ import annotations

import math

from minitorch.errors import DTypeError, MinitorchError, at_user_line
from minitorch.ops import meta as m
from minitorch.ops import pointwise_kernels as k
from minitorch.ops import pointwise_meta as pm
from minitorch.ops.helpers import is_tensor, needs_grad, sum_to
from minitorch.ops.registry import OpDef, register

# the ops this family registers
__all__ = [
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "abs",
    "pow",
    "sin",
    "cos",
    "exp",
    "log",
    "tanh",
    "sigmoid",
    "erf",
    "log1p",
    "expm1",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "gelu",
    "silu",
    "to_copy",
]


# ---- arithmetic --------------------------------------------------------------------------

add = register(
    OpDef(
        "add",
        "pointwise",
        m.binary("add"),
        impl=lambda xp, a, b: xp.add(a, b),
        backward=lambda g, out, a, b: (sum_to(g, a), sum_to(g, b)),
        lowering="lowered",
    )
)
sub = register(
    OpDef(
        "sub",
        "pointwise",
        m.binary("sub"),
        impl=lambda xp, a, b: xp.subtract(a, b),
        backward=lambda g, out, a, b: (sum_to(g, a), sum_to(neg(g), b)),
        lowering="lowered",
    )
)
mul = register(
    OpDef(
        "mul",
        "pointwise",
        m.binary("mul"),
        impl=lambda xp, a, b: xp.multiply(a, b),
        backward=lambda g, out, a, b: (
            sum_to(mul(g, b), a) if needs_grad(a) else None,
            sum_to(mul(g, a), b) if needs_grad(b) else None,
        ),
        lowering="lowered",
    )
)  # as in PyTorch, `x * 2` saves nothing of x, nor `x * mask` of x (only the mask)


def _div_backward(g, out, a, b):
    # d(a/b)/da = 1/b;  d(a/b)/db = -a/b**2, from the inputs as PyTorch saves them: reading
    # `out` (-out/b) would refuse a backward after an in-place write to the quotient. Not
    # written with a/b in it either: AOT autograd's CSE would make that node the forward's
    # quotient, and a compiled backward would read (and save) the output after all.
    grad_b = sum_to(neg(div(div(mul(g, a), b), b)), b) if needs_grad(b) else None
    return (sum_to(div(g, b), a) if needs_grad(a) else None), grad_b


div = register(
    OpDef(
        "div",
        "pointwise",
        m.binary("div", float_result=True),
        impl=lambda xp, a, b: xp.true_divide(a, b),
        backward=_div_backward,
        lowering="lowered",
    )
)
neg = register(
    OpDef(
        "neg",
        "pointwise",
        m.unary_same("neg"),
        impl=lambda xp, a: xp.negative(a),
        backward=lambda g, out, a: (neg(g),),
        lowering="lowered",
    )
)


def _abs_backward(g, out, x):
    # d|x|/dx = sign(x), and 0 at x = 0 (PyTorch's convention)
    # NOTE: imported here: selection.py's composites are written with this module's arithmetic,
    # so it imports this module; a derivative runs after both are loaded.
    from minitorch.ops.selection import gt, lt, where

    return (where(gt(x, 0), g, where(lt(x, 0), neg(g), 0.0)),)


# why primitive: see [Note: the pointwise primitives] (exact for -0.0)
abs = register(
    OpDef(
        "abs",
        "pointwise",
        m.unary_same("abs"),
        impl=lambda xp, a: xp.abs(a),
        backward=_abs_backward,
        lowering="lowered",
    )
)

# ---- powers ------------------------------------------------------------------------------


def _pow_backward(g, out, x, exponent):
    """d(x**y)/dx = y x**(y-1) (0 where y = 0);  d(x**y)/dy = x**y log(x) (0 where x = 0 and
    y >= 0, the limit PyTorch takes)."""
    from minitorch.ops.selection import eq, ge, where  # NOTE: imported here: see _abs_backward

    grad_x = grad_y = None
    if needs_grad(x) and is_tensor(exponent):
        grad_x = where(eq(exponent, 0), 0.0, mul(g, mul(exponent, pow(x, sub(exponent, 1)))))
    elif needs_grad(x):
        x_pow = x if exponent == 2 else pow(x, exponent - 1)
        grad_x = mul(g, 0.0) if exponent == 0 else mul(g, mul(x_pow, exponent))
    if needs_grad(exponent):
        grad_y = mul(g, mul(out, log(x) if is_tensor(x) else k.log_of_number(x)))
        if is_tensor(x):
            grad_y = where(eq(x, 0), where(ge(exponent, 0), 0.0, grad_y), grad_y)
        elif x == 0:
            grad_y = where(ge(exponent, 0), 0.0, grad_y)
    return (
        sum_to(grad_x, x) if grad_x is not None else None,
        sum_to(grad_y, exponent) if grad_y is not None else None,
    )


# why primitive: see [Note: the pointwise primitives] (negative bases, integer powers)
pow = register(
    OpDef(
        "pow",
        "pointwise",
        pm.pow_meta,
        impl=k.power,
        backward=_pow_backward,
        lowering="lowered",
    )
)
sqrt = register(
    OpDef("sqrt", "composite", None, decomposition=lambda x: pow(x, 0.5), saves_output=True)
)
rsqrt = register(
    OpDef("rsqrt", "composite", None, decomposition=lambda x: div(1.0, sqrt(x)), saves_output=True)
)
reciprocal = register(
    OpDef("reciprocal", "composite", None, decomposition=lambda x: div(1.0, x), saves_output=True)
)

# ---- elementwise functions ---------------------------------------------------------------

sin = register(
    OpDef(
        "sin",
        "pointwise",
        m.unary_float("sin"),
        impl=lambda xp, a: xp.sin(k.as_float(xp, a)),
        backward=lambda g, out, x: (mul(g, cos(x)),),
        lowering="lowered",
    )
)
cos = register(
    OpDef(
        "cos",
        "pointwise",
        m.unary_float("cos"),
        impl=lambda xp, a: xp.cos(k.as_float(xp, a)),
        backward=lambda g, out, x: (mul(g, neg(sin(x))),),
        lowering="lowered",
    )
)
exp = register(
    OpDef(
        "exp",
        "pointwise",
        m.unary_float("exp"),
        impl=lambda xp, a: xp.exp(k.as_float(xp, a)),
        backward=lambda g, out, x: (mul(g, out),),
        lowering="lowered",
    )
)
log = register(
    OpDef(
        "log",
        "pointwise",
        m.unary_float("log"),
        impl=lambda xp, a: xp.log(k.as_float(xp, a)),
        backward=lambda g, out, x: (div(g, x),),
        lowering="lowered",
    )
)
# why primitive: see [Note: the pointwise primitives] (accuracy near 0)
tanh = register(
    OpDef(
        "tanh",
        "pointwise",
        m.unary_float("tanh"),
        impl=lambda xp, a: xp.tanh(k.as_float(xp, a)),
        backward=lambda g, out, x: (mul(g, sub(1.0, mul(out, out))),),  # 1 - tanh(x)^2
        lowering="lowered",
    )
)
# why primitive: see [Note: the pointwise primitives] (a derivative that never overflows)
sigmoid = register(
    OpDef(
        "sigmoid",
        "pointwise",
        m.unary_float("sigmoid"),
        impl=k.sigmoid,
        backward=lambda g, out, x: (mul(g, mul(out, sub(1.0, out))),),  # s (1 - s)
        lowering="lowered",
    )
)
# why primitive: see [Note: the pointwise primitives] (a special function)
erf = register(
    OpDef(
        "erf",
        "pointwise",
        m.unary_float("erf"),
        impl=k.erf,
        backward=lambda g, out, x: (mul(g, mul(exp(neg(mul(x, x))), 2 / math.sqrt(math.pi))),),
        lowering="lowered",
    )
)
# why primitive: see [Note: the pointwise primitives] (accuracy near 0)
log1p = register(
    OpDef(
        "log1p",
        "pointwise",
        m.unary_float("log1p"),
        impl=lambda xp, a: xp.log1p(k.as_float(xp, a)),
        backward=lambda g, out, x: (div(g, add(x, 1.0)),),  # 1 / (1 + x)
        lowering="lowered",
    )
)
# why primitive: see [Note: the pointwise primitives] (accuracy near 0)
expm1 = register(
    OpDef(
        "expm1",
        "pointwise",
        m.unary_float("expm1"),
        impl=lambda xp, a: xp.expm1(k.as_float(xp, a)),
        backward=lambda g, out, x: (mul(g, add(out, 1.0)),),  # e^x = expm1(x) + 1
        lowering="lowered",
    )
)

# ---- activations -------------------------------------------------------------------------


def _gelu(x, approximate: str = "none"):
    """x Phi(x), Phi the normal distribution's CDF: 0.5 x (1 + erf(x / sqrt 2)), or with
    approximate="tanh", 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    _require_float("gelu", x)
    if approximate == "none":
        return mul(mul(x, 0.5), add(erf(mul(x, math.sqrt(0.5))), 1.0))
    if approximate == "tanh":
        inner = mul(add(x, mul(pow(x, 3), 0.044715)), math.sqrt(2 / math.pi))
        return mul(mul(x, 0.5), add(tanh(inner), 1.0))
    raise MinitorchError(
        at_user_line(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    )


def _silu(x):
    """x sigmoid(x)"""
    _require_float("silu", x)
    return mul(x, sigmoid(x))


gelu = register(OpDef("gelu", "composite", None, decomposition=_gelu))
silu = register(OpDef("silu", "composite", None, decomposition=_silu))


def _require_float(op: str, x) -> None:
    if not x.dtype.is_floating_point:
        raise DTypeError(
            at_user_line(f"{op}: expected a floating point tensor, got {x.dtype.name}")
        )


# ---- conversions -------------------------------------------------------------------------


def _to_copy_meta(x, dtype=None, device=None) -> m.TensorMeta:
    return m.TensorMeta(tuple(x.shape), x.dtype if dtype is None else m.check_dtype("to", dtype))


def _to_copy_impl(xp, a, dtype=None, device=None):
    from minitorch.device import move

    a = move(a, device) if device is not None else a
    # Row-major, as `contiguous()` (a clone) needs; PyTorch's clone and `to` keep the layout.
    return a.astype(dtype.np, order="C") if dtype is not None else a.copy()


def _to_copy_backward(g, out, x, dtype=None, device=None):
    # The gradient goes back to the input's dtype and device.
    return (to_copy(g, dtype=x.dtype, device=x.device if device is not None else None),)


to_copy = register(
    OpDef(
        "to_copy",
        "pointwise",
        _to_copy_meta,
        impl=_to_copy_impl,
        backward=_to_copy_backward,
        lowering="lowered",
        layout="row_major",
    )
)
