"""dtypes and PyTorch's type-promotion rules.

    >>> promote_types(float32, float64)
    minitorch.float64
    >>> result_type(tensor_int32, 2.5)      # a Python float lifts ints to the default float
    minitorch.float32
    >>> promote_types(float16, bfloat16)    # neither holds the other: both fit in float32
    minitorch.float32

[Note: half precision]
PyTorch's CPU kernels compute a float16 or bfloat16 op in float32 and round its result once
(a float16 sum or cumsum accumulates in float32). The dispatcher does the same: for an op whose
result dtype has a `rounding`, it hands the kernel float32 copies of its half-precision arrays
and rounds what comes back (`round_float16`, numpy's correctly rounded cast; `round_bfloat16`).
Left to itself, numpy would accumulate a float16 cumsum in float16 (0.1 summed 5000 times
stops at 256). The one other place that writes computed values into a half-precision array,
an optimizer's step, rounds a bfloat16 parameter after it (`round_bfloat16_`).

[Note: bfloat16]
numpy has float16 but no bfloat16 (float32's 8 exponent bits, 7 of mantissa). A bfloat16
tensor's array holds float32 values that are all exactly bfloat16 numbers, rounded as PyTorch
rounds (to nearest, ties to even, on the top 16 bits; any NaN becomes the quiet NaN 0x7FC0).
The array's numpy dtype, `BFLOAT16_NP`, is a *big-endian* float32 tagged by metadata: numpy
computes with it as with float32, and views and copies keep it, but it is never equal to float32
itself, so nothing that compares or hashes numpy dtypes (the meta cache, compiled code's
guards) can take a bfloat16 array for a float32 one. (The metadata alone would not do: a dtype
with metadata equals and hashes as the dtype without.) Its `itemsize` is 2, and
`minitorch.save` writes 2 bytes per element, as PyTorch stores it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

_BOOL, _INT, _FLOAT = 0, 1, 2  # categories: a higher category wins promotion


@dataclass(frozen=True, eq=False)
class DType:
    """One element type; compared by identity, like torch.dtype."""

    name: str  # 'float32'
    np: np.dtype  # the numpy dtype of the storage
    category: int  # _BOOL, _INT or _FLOAT
    element_size: int = 0  # bytes per element in PyTorch, where not the storage's (bfloat16)
    rounding: Callable | None = None  # array -> its values made exact (bfloat16's rounding)

    @property
    def itemsize(self) -> int:
        return self.element_size or self.np.itemsize

    @property
    def is_floating_point(self) -> bool:
        return self.category == _FLOAT

    def __repr__(self) -> str:
        return f"minitorch.{self.name}"

    def __reduce__(self):  # pickling/copying keeps identity
        return (get_dtype, (self.name,))


# bfloat16's storage: a tagged big-endian float32, unequal to float32 ([Note: bfloat16])
BFLOAT16_NP = np.dtype(">f4", metadata={"minitorch": "bfloat16"})
_BF16_NAN = 0x7FC00000  # PyTorch's NaN for every NaN rounded to bfloat16


def round_bfloat16(values) -> np.ndarray:
    """A new array of `values` (numbers, an array) rounded to bfloat16, dtype BFLOAT16_NP."""
    x = np.array(values, dtype=np.float32)  # a copy: the result owns its memory
    _round_bits(x)
    return x.astype(BFLOAT16_NP)


def round_bfloat16_(x: np.ndarray) -> None:
    """Round a bfloat16 tensor's array in place, after something wrote float32 values in."""
    if x.dtype != BFLOAT16_NP:
        raise TypeError(f"round_bfloat16_ needs a bfloat16 array, not {x.dtype}")
    values = x.astype(np.float32)  # native byte order
    _round_bits(values)
    x[...] = values


def _round_bits(x: np.ndarray) -> None:
    """Round a native float32 array to bfloat16 in place: to nearest, ties to even, as
    c10::BFloat16's round_to_nearest_even (add 0x7FFF plus the lowest kept bit, cut 16 bits)."""
    nan = np.isnan(x)
    bits = x.view(np.uint32)  # NOTE: a view in any layout (a reshape could be a copy)
    bits += ((bits >> 16) & 1) + np.uint32(0x7FFF)  # wraps only for NaNs, replaced below
    bits &= np.uint32(0xFFFF0000)
    bits[nan] = _BF16_NAN


float32 = DType("float32", np.dtype(np.float32), _FLOAT)
float64 = DType("float64", np.dtype(np.float64), _FLOAT)


def round_float16(values) -> np.ndarray:
    """A new array of float32 `values` rounded to float16 (numpy's cast: to nearest, ties to
    even, overflowing to inf, as PyTorch's; without numpy's overflow warning, as PyTorch)."""
    with np.errstate(over="ignore"):
        return np.array(values, dtype=np.float16)


float16 = DType("float16", np.dtype(np.float16), _FLOAT, rounding=round_float16)
bfloat16 = DType("bfloat16", BFLOAT16_NP, _FLOAT, element_size=2, rounding=round_bfloat16)
# The storage dtypes of the half-precision dtypes, whose kernels compute in float32
HALF_STORAGE = (float16.np, BFLOAT16_NP)
int32 = DType("int32", np.dtype(np.int32), _INT)
int64 = DType("int64", np.dtype(np.int64), _INT)
bool_ = DType("bool", np.dtype(np.bool_), _BOOL)

ALL_DTYPES = (float32, float64, float16, bfloat16, int32, int64, bool_)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
# NOTE: not bfloat16: a big-endian float32 is bfloat16 only with its metadata (below)
_BY_NUMPY = {d.np: d for d in ALL_DTYPES if d is not bfloat16}
# The dtype a Python scalar of each category becomes (torch.get_default_dtype() for floats).
_DEFAULT_FOR_CATEGORY = {_BOOL: bool_, _INT: int64, _FLOAT: float32}


def _scalar_category(value: bool | int | float) -> int:
    """A Python number's category; subclasses too (numpy's float64 is a float)."""
    return _BOOL if isinstance(value, bool) else _INT if isinstance(value, int) else _FLOAT


def get_dtype(name: str) -> DType:
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype) -> DType:
    """The minitorch dtype of a numpy dtype (BFLOAT16_NP: bfloat16); others are refused by
    name."""
    dtype = _BY_NUMPY.get(np_dtype)  # fast path: an array's own dtype object (Tensor.dtype)
    if dtype is not None:
        return dtype
    from minitorch.errors import DTypeError

    np_dtype = np.dtype(np_dtype)
    if np_dtype == BFLOAT16_NP and np_dtype.metadata == BFLOAT16_NP.metadata:
        return bfloat16  # NOTE: not a plain big-endian float32 the user made
    dtype = _BY_NUMPY.get(np_dtype)
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
    if {a, b} == {float16, bfloat16}:  # neither holds the other's range and precision
        return float32
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
