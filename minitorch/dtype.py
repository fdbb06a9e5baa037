"""dtypes and PyTorch's type-promotion rules.

    >>> promote_types(float32, float64)
    minitorch.float64
    >>> result_type(tensor_int32, 2.5)      # a Python float lifts ints to the default float
    minitorch.float32
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_BOOL, _INT, _FLOAT = 0, 1, 2  # categories: a higher category wins promotion


@dataclass(frozen=True, eq=False)
class DType:
    """One element type; compared by identity, like torch.dtype."""

    name: str  # 'float32'
    np: np.dtype  # the numpy dtype of the storage
    category: int  # _BOOL, _INT or _FLOAT

    @property
    def itemsize(self) -> int:
        return self.np.itemsize

    @property
    def is_floating_point(self) -> bool:
        return self.category == _FLOAT

    def __repr__(self) -> str:
        return f"minitorch.{self.name}"

    def __reduce__(self):  # pickling/copying keeps identity
        return (get_dtype, (self.name,))


float32 = DType("float32", np.dtype(np.float32), _FLOAT)
float64 = DType("float64", np.dtype(np.float64), _FLOAT)
int32 = DType("int32", np.dtype(np.int32), _INT)
int64 = DType("int64", np.dtype(np.int64), _INT)
bool_ = DType("bool", np.dtype(np.bool_), _BOOL)

ALL_DTYPES = (float32, float64, int32, int64, bool_)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NUMPY = {d.np: d for d in ALL_DTYPES}
# The dtype a Python scalar of each category becomes (torch.get_default_dtype() for floats).
_DEFAULT_FOR_CATEGORY = {_BOOL: bool_, _INT: int64, _FLOAT: float32}


def _scalar_category(value: bool | int | float) -> int:
    """A Python number's category; subclasses too (numpy's float64 is a float)."""
    return _BOOL if isinstance(value, bool) else _INT if isinstance(value, int) else _FLOAT


def get_dtype(name: str) -> DType:
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype) -> DType:
    """The minitorch dtype of a numpy dtype; float16 etc. are refused by name."""
    dtype = _BY_NUMPY.get(np_dtype)  # fast path: an array's own dtype object (Tensor.dtype)
    if dtype is not None:
        return dtype
    from minitorch.errors import DTypeError

    dtype = _BY_NUMPY.get(np.dtype(np_dtype))
    if dtype is None:
        names = ", ".join(d.name for d in ALL_DTYPES)
        raise DTypeError(f"numpy dtype {np.dtype(np_dtype)} is not supported (use one of {names})")
    return dtype


def default_dtype_for(value: bool | int | float) -> DType:
    """The dtype `minitorch.tensor(value)` gets: bool, int64 or float32."""
    return _DEFAULT_FOR_CATEGORY[_scalar_category(value)]


def promote_types(a: DType, b: DType) -> DType:
    """The smallest dtype both convert to without losing category: int32 + float64 -> float64."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    return a if a.itemsize >= b.itemsize else b


def result_type(*operands) -> DType:
    """PyTorch's promotion over tensors and Python scalars.

    Operands are ranked in three groups: tensors with dimensions, zero-dim tensors, Python
    scalars. The highest category present wins; the dtype comes from the first group that holds
    an operand of that category, so `float32_tensor + 2.0` stays float32 and
    `int_tensor + 2.5` becomes the default float.
    """
    groups: tuple[list[DType], list[DType], list[DType]] = ([], [], [])
    for x in operands:
        if isinstance(x, (bool, int, float)):
            groups[2].append(_DEFAULT_FOR_CATEGORY[_scalar_category(x)])
        else:
            groups[0 if len(x.shape) else 1].append(x.dtype)
    top = max(d.category for group in groups for d in group)
    for group in groups:
        candidates = [d for d in group if d.category == top]
        if candidates:
            result = candidates[0]
            for d in candidates[1:]:
                result = promote_types(result, d)
            return result
    raise AssertionError("result_type needs at least one operand")
