"""The op table, pointwise ops: arithmetic, comparisons, selection, elementwise functions.

See [Note: the op table] in registry.py.

A derivative receives the incoming gradient, the op's output and its arguments, and returns one
gradient per argument (None for Python numbers and non-differentiable inputs). Derivatives and
decompositions call the ops themselves, so AOT autograd can record them.

[Note: the pointwise primitives]
Every primitive is one more op that AOT autograd's graphs, the loop-level IR and each backend
must know, so an op is primitive only when it has to be:

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

The derivatives below skip the gradient of an input that does not require one (`_needs_grad`):
the engine would drop it anyway, and each skipped formula is ops not run, nor traced.
"""

from __future__ import annotations

import math

from minitorch.dtype import bool_, float32, result_type
from minitorch.errors import DTypeError, MinitorchError, ShapeError, at_user_line
from minitorch.ops import meta as m
from minitorch.ops import pointwise_kernels as k
from minitorch.ops import pointwise_meta as pm
from minitorch.ops.helpers import is_tensor, sum_to
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
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "where",
    "maximum",
    "minimum",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "relu",
    "clamp",
    "masked_fill",
    "isclose",
    "gelu",
    "silu",
    "to_copy",
]


def _needs_grad(x) -> bool:
    return getattr(x, "requires_grad", False)


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
            sum_to(mul(g, b), a) if _needs_grad(a) else None,
            sum_to(mul(g, a), b) if _needs_grad(b) else None,
        ),
        lowering="lowered",
    )
)  # as in PyTorch, `x * 2` saves nothing of x, nor `x * mask` of x (only the mask)


def _div_backward(g, out, a, b):
    # d(a/b)/da = 1/b;  d(a/b)/db = -a/b**2, from the inputs as PyTorch saves them: reading
    # `out` (-out/b) would refuse a backward after an in-place write to the quotient. Not
    # written with a/b in it either: AOT autograd's CSE would make that node the forward's
    # quotient, and a compiled backward would read (and save) the output after all.
    grad_b = sum_to(neg(div(div(mul(g, a), b), b)), b) if _needs_grad(b) else None
    return (sum_to(div(g, b), a) if _needs_grad(a) else None), grad_b


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
    grad_x = grad_y = None
    if _needs_grad(x) and is_tensor(exponent):
        grad_x = where(eq(exponent, 0), 0.0, mul(g, mul(exponent, pow(x, sub(exponent, 1)))))
    elif _needs_grad(x):
        x_pow = x if exponent == 2 else pow(x, exponent - 1)
        grad_x = mul(g, 0.0) if exponent == 0 else mul(g, mul(x_pow, exponent))
    if _needs_grad(exponent):
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

# ---- comparisons and selection -----------------------------------------------------------
# Comparisons have no derivative (their results are bool), and compare in PyTorch's promoted
# dtype (see k.promoted).

# why primitive: a new kind of computation (bool results); gt and ge are these, swapped
eq = register(
    OpDef(
        "eq",
        "pointwise",
        pm.compare("eq"),
        impl=lambda xp, a, b: xp.equal(*k.promoted(xp, a, b)),
        lowering="lowered",
    )
)
ne = register(
    OpDef(
        "ne",
        "pointwise",
        pm.compare("ne"),
        impl=lambda xp, a, b: xp.not_equal(*k.promoted(xp, a, b)),
        lowering="lowered",
    )
)
lt = register(
    OpDef(
        "lt",
        "pointwise",
        pm.compare("lt"),
        impl=lambda xp, a, b: xp.less(*k.promoted(xp, a, b)),
        lowering="lowered",
    )
)
le = register(
    OpDef(
        "le",
        "pointwise",
        pm.compare("le"),
        impl=lambda xp, a, b: xp.less_equal(*k.promoted(xp, a, b)),
        lowering="lowered",
    )
)


def _swapped(op: OpDef, name: str):
    """a > b is b < a; the shapes are checked first so that an error names `name`."""

    def decomposition(a, b):
        _check_broadcast(name, a, b)
        return op(b, a)

    decomposition.__name__ = name
    return decomposition


gt = register(OpDef("gt", "composite", None, decomposition=_swapped(lt, "gt")))
ge = register(OpDef("ge", "composite", None, decomposition=_swapped(le, "ge")))


def _where_backward(g, out, condition, input, other):
    # Each value gets the gradient where it was picked.
    grad_input = sum_to(where(condition, g, 0.0), input) if _needs_grad(input) else None
    grad_other = sum_to(where(condition, 0.0, g), other) if _needs_grad(other) else None
    return None, grad_input, grad_other


# why primitive: selection between two values; relu, clamp, masked_fill and the derivatives
# at kinks are written with it
where = register(
    OpDef(
        "where",
        "pointwise",
        pm.where_meta,
        impl=lambda xp, condition, a, b: xp.where(condition, a, b),
        backward=_where_backward,
        lowering="lowered",
    )
)


def _extremum_backward(loses):
    """maximum's (loses = lt) or minimum's (loses = gt) derivative, as PyTorch's: the operand
    that was picked gets the gradient; at a tie each gets half; a NaN gets it all."""

    def backward(g, out, a, b):
        half = mul(g, 0.5)
        tie = eq(a, b)
        grad_a = where(loses(a, b), 0.0, where(tie, half, g)) if _needs_grad(a) else None
        grad_b = where(loses(b, a), 0.0, where(tie, half, g)) if _needs_grad(b) else None
        return (
            sum_to(grad_a, a) if grad_a is not None else None,
            sum_to(grad_b, b) if grad_b is not None else None,
        )

    return backward


# why primitive: see [Note: the pointwise primitives] (NaN propagation, even split at ties)
maximum = register(
    OpDef(
        "maximum",
        "pointwise",
        m.binary("maximum"),
        impl=lambda xp, a, b: xp.maximum(a, b),
        backward=_extremum_backward(lt),
        lowering="lowered",
    )
)
# why primitive: as maximum
minimum = register(
    OpDef(
        "minimum",
        "pointwise",
        m.binary("minimum"),
        impl=lambda xp, a, b: xp.minimum(a, b),
        backward=_extremum_backward(gt),
        lowering="lowered",
    )
)

# ---- composites of selection -------------------------------------------------------------


def _relu(x):
    """max(x, 0), written so that relu'(0) = 0 and relu(NaN) = NaN, as in PyTorch."""
    _refuse_bool("relu", x)
    return where(le(x, 0), 0, x)


relu = register(OpDef("relu", "composite", None, decomposition=_relu, saves_output=True))


def _clamp(x, min=None, max=None):
    """min(max(x, min), max): where(x < min, min, x), then where(y > max, max, y).

    The gradient reaches x where min <= x <= max, and when min > max every result is max,
    as in PyTorch.
    """
    if min is None and max is None:
        raise MinitorchError(at_user_line("clamp: at least one of 'min' or 'max' must be given"))
    _refuse_bool("clamp", x)
    _check_broadcast("clamp", x, min, max)
    bounds = [b for b in (min, max) if b is not None]
    m.check_scalars_fit("clamp", result_type(x, *bounds), *bounds)
    if min is not None:
        x = where(lt(x, min), min, x)
    if max is not None:
        x = where(gt(x, max), max, x)
    return x


clamp = register(OpDef("clamp", "composite", None, decomposition=_clamp))


def _masked_fill(x, mask, value):
    """where(mask, value, x), in x's dtype: the value is converted, as PyTorch does."""
    if not is_tensor(mask) or mask.dtype is not bool_:
        got = mask.dtype.name if is_tensor(mask) else type(mask).__name__
        raise DTypeError(at_user_line(f"masked_fill: expected a bool mask, got {got}"))
    if m.operand_shape("masked_fill", value) != ():
        raise ShapeError(
            at_user_line(
                f"masked_fill: the value must be a number or a 0-d tensor, got shape "
                f"{tuple(value.shape)}"
            )
        )
    _check_broadcast("masked_fill", x, mask)
    m.check_scalars_fit("masked_fill", x.dtype, value)
    if not is_tensor(value):
        value = k.number_of_dtype(value, x.dtype)  # 2.7 into an int tensor is 2
    out = where(mask, value, x)
    return out if out.dtype is x.dtype else to_copy(out, dtype=x.dtype)


masked_fill = register(OpDef("masked_fill", "composite", None, decomposition=_masked_fill))


def _isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """a == b, or |a - b| <= atol + rtol |b| with |a - b| finite; NaNs equal if equal_nan.

    Integers and bools compare in the default float, as in PyTorch; with both tolerances 0 the
    test is plain equality.
    """
    if not (is_tensor(a) and is_tensor(b)) or a.dtype is not b.dtype:
        got = " and ".join(x.dtype.name if is_tensor(x) else type(x).__name__ for x in (a, b))
        raise DTypeError(
            at_user_line(f"isclose: expected two tensors of the same dtype, got {got}")
        )
    if rtol < 0 or atol < 0:
        raise MinitorchError(
            at_user_line(
                f"isclose: rtol and atol must be non-negative, got rtol={rtol}, atol={atol}"
            )
        )
    _check_broadcast("isclose", a, b)
    close = eq(a, b)
    if equal_nan and a.dtype.is_floating_point:
        close = where(ne(a, a), ne(b, b), close)  # x != x only for NaN
    if rtol == 0 and atol == 0:
        return close
    if not a.dtype.is_floating_point:
        a, b = to_copy(a, dtype=float32), to_copy(b, dtype=float32)
    error = abs(sub(where(close, 0.0, a), where(close, 0.0, b)))  # no inf - inf
    within = le(error, add(abs(mul(b, rtol)), atol))
    return where(close, True, where(lt(error, math.inf), within, False))


isclose = register(OpDef("isclose", "composite", None, decomposition=_isclose))

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


def _refuse_bool(op: str, x) -> None:
    if x.dtype is bool_:
        raise DTypeError(at_user_line(f"{op}: not supported for dtype bool"))


def _require_float(op: str, x) -> None:
    if not x.dtype.is_floating_point:
        raise DTypeError(
            at_user_line(f"{op}: expected a floating point tensor, got {x.dtype.name}")
        )


def _check_broadcast(op: str, *operands) -> None:
    """Raise the ShapeError of `op` (not of the ops it decomposes into) for bad shapes."""
    shapes = [m.operand_shape(op, x) for x in operands if x is not None]
    if any(s != shapes[0] for s in shapes):
        m.broadcast_shapes(op, *shapes)


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
