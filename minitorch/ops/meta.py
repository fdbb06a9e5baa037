"""Shape and dtype rules shared by the rows of the op table.

Each rule takes the op's arguments (tensors, real or fake, and Python scalars) and returns the
output's `TensorMeta`, or raises a `ShapeError`/`DTypeError` that names the op and the shapes.
"""

from __future__ import annotations

import operator
import sys

import numpy as np

from minitorch.dtype import DType, bool_, float32, int64, result_type
from minitorch.errors import (
    ArgumentTypeError,
    DTypeError,
    InvalidArgumentError,
    ShapeError,
    at_user_line,
)
from minitorch.ops.registry import TensorMeta
from minitorch.unsupported import UnsupportedDType


def operand_shape(op: str, x) -> tuple[int, ...]:
    """The shape of an operand: () for a Python number; anything else must be a tensor."""
    if isinstance(x, (bool, int, float)):
        return ()
    if not isinstance(getattr(x, "dtype", None), DType):
        raise ArgumentTypeError(
            at_user_line(f"{op}: expected a Tensor or a Python number, got {type(x).__name__}")
        )
    return tuple(x.shape)


def check_scalars_fit(op: str, dtype: DType, *operands) -> None:
    """Python ints must fit the dtype they compute in, as PyTorch requires; numpy would raise
    its own OverflowError (or, for int32, wrap around)."""
    for x in operands:
        if type(x) is not int:
            continue
        if dtype.is_floating_point:
            fits = abs(x) <= sys.float_info.max
        elif dtype.category == 0:  # any int converts to bool
            fits = True
        else:
            info = np.iinfo(dtype.np)
            fits = info.min <= x <= info.max
        if not fits:
            raise InvalidArgumentError(
                at_user_line(
                    f"{op}: value {x} cannot be converted to {dtype.name} without overflow"
                )
            )


def broadcast_shapes(op: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy/PyTorch broadcasting: align right, a size-1 dim stretches to the other size."""
    ndim = max(len(s) for s in shapes)
    out = []
    for axis in range(-ndim, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(sizes) > 1:
            shown = " and ".join(str(tuple(s)) for s in shapes)
            raise ShapeError(
                at_user_line(f"{op}: shapes {shown} cannot be broadcast (dim {axis} differs)")
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def check_dtype(op: str, dtype) -> DType:
    """A dtype argument: a minitorch dtype (a str or a numpy dtype is refused by name)."""
    if isinstance(dtype, UnsupportedDType):  # complex64, ...: names what is missing
        raise dtype.refuse(op)
    if not isinstance(dtype, DType):
        raise ArgumentTypeError(
            at_user_line(
                f"{op}: argument 'dtype' must be a minitorch dtype, not {type(dtype).__name__}"
            )
        )
    return dtype


def as_dim(op: str, dim) -> int:
    """A dim argument as an int (anything with __index__); a float or a str is refused."""
    try:
        return operator.index(dim)
    except TypeError:
        raise ArgumentTypeError(
            at_user_line(f"{op}: dim must be an int, got {type(dim).__name__}")
        ) from None


def normalize_dims(op: str, dim, ndim: int) -> tuple[int, ...]:
    """`dim` as a sorted tuple of non-negative axes; None means every axis."""
    if dim is None:
        return tuple(range(ndim))
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    out = set()
    for d in map(lambda d: as_dim(op, d), dims):
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise ShapeError(at_user_line(f"{op}: dim {d} is out of range for a {ndim}-d tensor"))
        if d % max(ndim, 1) in out:
            raise ShapeError(at_user_line(f"{op}: dim {d} appears multiple times in {dims}"))
        out.add(d % max(ndim, 1))
    return tuple(sorted(out)) if ndim else ()


def unary_float(op: str):
    """sin, exp, ...: same shape; integer inputs compute in the default float dtype."""

    def rule(x) -> TensorMeta:
        dtype = x.dtype if x.dtype.is_floating_point else float32
        return TensorMeta(tuple(x.shape), dtype)

    rule.__name__ = f"{op}_meta"
    return rule


def unary_same(op: str):
    """neg, ...: same shape and dtype; bool is refused, as PyTorch does for `-x`."""

    def rule(x) -> TensorMeta:
        if x.dtype.category == 0:
            raise DTypeError(at_user_line(f"{op}: not supported for dtype {x.dtype.name}"))
        return TensorMeta(tuple(x.shape), x.dtype)

    rule.__name__ = f"{op}_meta"
    return rule


def binary(op: str, float_result: bool = False):
    """add, mul, ...: broadcast shapes, promote dtypes (div always gives a float)."""

    def rule(a, b) -> TensorMeta:
        shape = broadcast_shapes(op, operand_shape(op, a), operand_shape(op, b))
        dtype = result_type(a, b)
        if op == "sub" and dtype is bool_:
            raise DTypeError(
                at_user_line(
                    "sub: subtraction, the `-` operator, with two bool tensors is not supported; "
                    "use the `^` or logical_xor() operator instead"
                )
            )
        check_scalars_fit(op, dtype, a, b)
        if float_result and not dtype.is_floating_point:
            dtype = float32
        return TensorMeta(shape, dtype)

    rule.__name__ = f"{op}_meta"
    return rule


def sum_meta(x, dim=None, keepdim: bool = False) -> TensorMeta:
    """Reduce the dims in `dim` (all if None); integer sums accumulate in int64, as in PyTorch."""
    dims = normalize_dims("sum", dim, len(x.shape))
    shape = tuple(1 if i in dims else n for i, n in enumerate(x.shape) if keepdim or i not in dims)
    dtype = x.dtype if x.dtype.is_floating_point else int64  # bool and int32 sums too
    return TensorMeta(shape, dtype)


def check_sizes(op: str, shape, new_tensor: bool = False) -> tuple[int, ...]:
    """A shape argument as ints (anything with __index__ counts). view/reshape/expand also
    take -1 (inferred, or kept); a new tensor's sizes (`zeros(...)`) must all be >= 0."""
    sizes = []
    for pos, n in enumerate(shape):
        try:
            sizes.append(operator.index(n))
        except TypeError:
            raise ArgumentTypeError(
                at_user_line(
                    f"{op}: size must be a tuple of ints, but found element of type "
                    f"{type(n).__name__} at pos {pos}"
                )
            ) from None
    for n in sizes:
        if new_tensor and n < 0:
            raise ShapeError(
                at_user_line(f"{op}: trying to create tensor with negative dimension {n}: {sizes}")
            )
        if n < -1:
            raise ShapeError(at_user_line(f"{op}: invalid shape dimension {n} in {tuple(sizes)}"))
    return tuple(sizes)


def expand_meta(x, shape) -> TensorMeta:
    """Broadcast to `shape` (-1 keeps a size); only size-1 dims may grow."""
    shape = check_sizes("expand", shape)
    lead = len(shape) - len(x.shape)
    if lead < 0:
        raise ShapeError(at_user_line(f"expand: cannot expand {tuple(x.shape)} to {shape}"))
    if -1 in shape[:lead]:
        raise ShapeError(
            at_user_line(
                f"expand: -1 is not allowed in a new leading dim ({tuple(x.shape)} to {shape})"
            )
        )
    out = list(shape)
    for i, n in enumerate(x.shape):
        want = shape[lead + i]
        if want == -1:
            out[lead + i] = n
        elif n != want and n != 1:
            raise ShapeError(at_user_line(f"expand: cannot expand {tuple(x.shape)} to {shape}"))
    return TensorMeta(tuple(out), x.dtype)


def infer_reshape(op: str, old: tuple[int, ...], shape) -> tuple[int, ...]:
    """Resolve one -1 in `shape` so the element count is kept."""
    shape = check_sizes(op, shape)
    numel = 1
    for n in old:
        numel *= n
    known = 1
    for n in shape:
        if n != -1:
            known *= n
    if shape.count(-1) > 1 or (-1 in shape and (known == 0 or numel % known)):
        raise ShapeError(at_user_line(f"{op}: cannot reshape {old} to {shape}"))
    if -1 in shape:
        return tuple(numel // known if n == -1 else n for n in shape)
    if known != numel:
        raise ShapeError(at_user_line(f"{op}: cannot reshape {old} ({numel} elements) to {shape}"))
    return shape


def reshape_meta(x, shape) -> TensorMeta:
    return TensorMeta(infer_reshape("reshape", tuple(x.shape), shape), x.dtype)
