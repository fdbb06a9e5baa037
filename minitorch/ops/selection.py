"""The op table, selection: comparisons, `where`, maximum and minimum, and their composites.

See [Note: the op table] in registry.py, and [Note: the pointwise primitives] in pointwise.py
for why eq, ne, lt, le, where, maximum and minimum are primitives, and gt, ge, relu, clamp,
masked_fill and isclose are written with them. Their kind is "pointwise" like pointwise.py's:
one value of the result from one value of each (broadcast) operand.

The composites check their arguments first (`_refuse_bool`, `_check_broadcast`), so that an
error names the op the user called (clamp), not one it decomposes into (where).
"""

from __future__ import annotations

import math

from minitorch.dtype import bool_, float32, result_type
from minitorch.errors import DTypeError, MinitorchError, ShapeError, at_user_line
from minitorch.ops import meta as m
from minitorch.ops import pointwise_kernels as k
from minitorch.ops import pointwise_meta as pm
from minitorch.ops.helpers import is_tensor, needs_grad, sum_to
from minitorch.ops.pointwise import abs, add, mul, sub, to_copy
from minitorch.ops.registry import OpDef, register

# the ops this family registers
__all__ = [
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "where",
    "maximum",
    "minimum",
    "relu",
    "clamp",
    "masked_fill",
    "isclose",
]


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
    grad_input = sum_to(where(condition, g, 0.0), input) if needs_grad(input) else None
    grad_other = sum_to(where(condition, 0.0, g), other) if needs_grad(other) else None
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
        grad_a = where(loses(a, b), 0.0, where(tie, half, g)) if needs_grad(a) else None
        grad_b = where(loses(b, a), 0.0, where(tie, half, g)) if needs_grad(b) else None
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


# ---- checks the composites make first, so that an error names them -------------------------


def _refuse_bool(op: str, x) -> None:
    if x.dtype is bool_:
        raise DTypeError(at_user_line(f"{op}: not supported for dtype bool"))


def _check_broadcast(op: str, *operands) -> None:
    """Raise the ShapeError of `op` (not of the ops it decomposes into) for bad shapes."""
    shapes = [m.operand_shape(op, x) for x in operands if x is not None]
    if any(s != shapes[0] for s in shapes):
        m.broadcast_shapes(op, *shapes)
