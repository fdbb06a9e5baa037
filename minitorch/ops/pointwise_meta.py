"""Shape and dtype rules of the pointwise ops that ops/meta.py does not share with others.

compare   eq, lt, ...: broadcast; the result is bool
where     broadcast all three; the dtype promotes the two values, never the condition
pow_meta  broadcast; promote base and exponent (a tensor or a Python number on either side)
"""

from __future__ import annotations

from minitorch.dtype import bool_, result_type
from minitorch.errors import DTypeError, at_user_line
from minitorch.ops.helpers import is_tensor
from minitorch.ops.meta import broadcast_shapes, check_scalars_fit, operand_shape
from minitorch.ops.registry import TensorMeta


def compare(op: str):
    """eq, ne, lt, le: broadcast shapes; the operands compare in their promoted dtype (see
    ops/selection.py), and the result is bool."""

    def rule(a, b) -> TensorMeta:
        return TensorMeta(broadcast_shapes(op, operand_shape(op, a), operand_shape(op, b)), bool_)

    rule.__name__ = f"{op}_meta"
    return rule


def where_meta(condition, input, other) -> TensorMeta:
    """where(condition, input, other): three shapes broadcast; the dtype is input's and other's.

    where(bool (2, 1), float32 (3,), 0) -> float32 (2, 3)
    """
    if not is_tensor(condition) or condition.dtype is not bool_:
        got = condition.dtype.name if is_tensor(condition) else type(condition).__name__
        raise DTypeError(at_user_line(f"where: expected a bool condition, got {got}"))
    shape = broadcast_shapes(
        "where",
        operand_shape("where", condition),
        operand_shape("where", input),
        operand_shape("where", other),
    )
    dtype = result_type(input, other)
    check_scalars_fit("where", dtype, input, other)
    return TensorMeta(shape, dtype)


def pow_meta(input, exponent) -> TensorMeta:
    """input ** exponent: broadcast, promote; bool results and int ** negative int are refused.

    float32 (3,) ** 2 -> float32      2 ** int64 (3,) -> int64      int64 ** 0.5 -> float32
    """
    shape = broadcast_shapes("pow", operand_shape("pow", input), operand_shape("pow", exponent))
    dtype = result_type(input, exponent)
    check_scalars_fit("pow", dtype, input, exponent)
    if dtype is bool_:
        raise DTypeError(at_user_line("pow: not supported for dtype bool"))
    if not dtype.is_floating_point and type(exponent) is int and exponent < 0:
        raise DTypeError(
            at_user_line(
                f"pow: integers to negative integer powers are not allowed "
                f"({dtype.name} ** {exponent}; use a float base)"
            )
        )
    return TensorMeta(shape, dtype)
