"""The op table, truth and bits: logical_and/or/xor/not, bitwise_and/or/xor/not, isnan,
isinf, isfinite.

See [Note: the op table] in registry.py.

[Note: logical and bitwise ops]
The logical ops read each operand as a truth value (nonzero is True, NaN included) and give
bool; they are composites of comparisons, so they compile as fused loops:

    logical_not(x)     x == 0
    logical_and(a, b)  minimum(a != 0, b != 0)        (on bools, min is "and")
    logical_or(a, b)   maximum(a != 0, b != 0)        (and max is "or")
    logical_xor(a, b)  (a != 0) != (b != 0)

The bitwise ops work on the bits of integers (and bools, where they are the logical ops), with
PyTorch's promotion; a float operand is a DTypeError. `bitwise_not` is a composite
(~x == -x - 1 in two's complement, and logical_not on bools); and/or/xor are primitives run as
extern kernels. The public functions (and `&`, `|`, `^`) send two bools to the logical
composites, so masks combine inside compiled loops.

isnan, isinf and isfinite are composites too: NaN is the one value not equal to itself, and
|x| < inf is False for inf and NaN alone.
"""

from __future__ import annotations

import math

from minitorch.dtype import bool_, result_type
from minitorch.errors import DTypeError, at_user_line
from minitorch.ops import meta as m
from minitorch.ops.pointwise import abs, neg, sub
from minitorch.ops.registry import OpDef, TensorMeta, register
from minitorch.ops.selection import eq, lt, maximum, minimum, ne

# the ops this family registers
__all__ = [
    "logical_not",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "isnan",
    "isinf",
    "isfinite",
]

# ---- logical -------------------------------------------------------------------------------


def _truth(x):
    """x as bool: nonzero (and NaN) is True."""
    if getattr(x, "dtype", None) is bool_:
        return x
    return ne(x, 0)


logical_not = register(OpDef("logical_not", "composite", None, decomposition=lambda x: eq(x, 0)))
logical_and = register(
    OpDef(
        "logical_and", "composite", None, decomposition=lambda a, b: minimum(_truth(a), _truth(b))
    )
)
logical_or = register(
    OpDef("logical_or", "composite", None, decomposition=lambda a, b: maximum(_truth(a), _truth(b)))
)
logical_xor = register(
    OpDef("logical_xor", "composite", None, decomposition=lambda a, b: ne(_truth(a), _truth(b)))
)

# ---- bitwise -------------------------------------------------------------------------------


def _check_integral(op: str, x) -> None:
    if isinstance(x, float) or (hasattr(x, "dtype") and x.dtype.is_floating_point):
        name = "float" if isinstance(x, float) else x.dtype.name
        raise DTypeError(
            at_user_line(
                f"{op}: not implemented for {name}; bitwise ops take integer or bool tensors"
            )
        )


def _bitwise_meta(op: str):
    """Broadcast shapes and promote dtypes, as add does; integers and bools only."""

    def rule(a, b) -> TensorMeta:
        _check_integral(op, a)
        _check_integral(op, b)
        shape = m.broadcast_shapes(op, m.operand_shape(op, a), m.operand_shape(op, b))
        dtype = result_type(a, b)
        m.check_scalars_fit(op, dtype, a, b)
        return TensorMeta(shape, dtype)

    rule.__name__ = f"{op}_meta"
    return rule


def _bitwise_impl(name: str):
    def impl(xp, a, b):
        return getattr(xp, name)(a, b)  # the dispatcher casts to the rule's dtype

    return impl


# why primitive: bit operations on integers, which no arithmetic op expresses in one step
bitwise_and = register(
    OpDef(
        "bitwise_and", "pointwise", _bitwise_meta("bitwise_and"), impl=_bitwise_impl("bitwise_and")
    )
)
# why primitive: as bitwise_and
bitwise_or = register(
    OpDef("bitwise_or", "pointwise", _bitwise_meta("bitwise_or"), impl=_bitwise_impl("bitwise_or"))
)
# why primitive: as bitwise_and
bitwise_xor = register(
    OpDef(
        "bitwise_xor", "pointwise", _bitwise_meta("bitwise_xor"), impl=_bitwise_impl("bitwise_xor")
    )
)


def _bitwise_not(x):
    _check_integral("bitwise_not", x)
    if x.dtype is bool_:
        return eq(x, False)
    return sub(neg(x), 1)  # ~x == -x - 1 in two's complement (wrapping at the minimum)


bitwise_not = register(OpDef("bitwise_not", "composite", None, decomposition=_bitwise_not))

# ---- isnan, isinf, isfinite ------------------------------------------------------------------


def _isinf(x):
    if not x.dtype.is_floating_point:
        return ne(x, x)  # integers are never infinite: all False
    return eq(abs(x), math.inf)


def _isfinite(x):
    if not x.dtype.is_floating_point:
        return eq(x, x)  # all True
    return lt(abs(x), math.inf)  # False for inf and NaN


isnan = register(OpDef("isnan", "composite", None, decomposition=lambda x: ne(x, x)))
isinf = register(OpDef("isinf", "composite", None, decomposition=_isinf))
isfinite = register(OpDef("isfinite", "composite", None, decomposition=_isfinite))
