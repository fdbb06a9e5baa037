"""Eager kernels of the pointwise ops that take more than one array-module call.

Like every kernel of the op table they are written against the array module `xp` (numpy for
"cpu", cupy for "cuda"), and the dispatcher converts what they return to the dtype of the
op's shape/dtype rule.
"""

from __future__ import annotations

import math

from minitorch.dtype import DType, bool_, result_type
from minitorch.ops.helpers import ArrayMeta, is_tensor


def as_float(xp, a):
    """`a` itself if it holds floats, else `a` in the default float dtype, as PyTorch computes
    sin(int_tensor) (numpy would compute in float64, or in float16 for bool)."""
    return a if a.dtype.kind == "f" else a.astype(xp.float32)


def promoted(xp, a, b) -> tuple:
    """`a` and `b` as arrays of PyTorch's result dtype of the two; Python numbers stay numbers
    (numpy gives them the array's dtype).

    numpy alone would compare an int64 array with 0.5, or a float32 array with a 0-d float64
    array, in float64, where PyTorch compares in float32; for values float32 rounds (ints above
    2**24, 0.1 held in float64) the answers differ.
    """
    if is_tensor(a) and is_tensor(b):
        if a.dtype == b.dtype:  # the common case: nothing to do
            return a, b
    elif is_tensor(a) and a.dtype.kind in _KINDS_TAKING[type(b)]:  # numpy agrees: x < 0.5
        return a, b
    elif is_tensor(b) and b.dtype.kind in _KINDS_TAKING[type(a)]:
        return a, b
    dtype = result_type(_meta(a), _meta(b)).np
    return _cast(a, dtype), _cast(b, dtype)


# The kinds of array (numpy's dtype.kind) whose dtype PyTorch keeps next to a Python number of
# each type: a float32 array and 0.5 compare in float32, but an int array and 0.5 in float32.
_KINDS_TAKING = {bool: "biuf", int: "iuf", float: "f"}


def _meta(x):
    return ArrayMeta(x) if is_tensor(x) else x


def _cast(x, dtype):
    return x.astype(dtype, copy=False) if is_tensor(x) else x


# ---- pow ---------------------------------------------------------------------------------


def power(xp, a, b):
    """a ** b in the promoted dtype. Integer powers follow PyTorch where numpy would raise: a
    negative exponent gives 1 / a**n truncated (0), except for the bases 1 and -1."""
    a, b = promoted(xp, a, b)
    dtype = (a if is_tensor(a) else b).dtype
    if dtype.kind == "f" or not is_tensor(b):  # the shape/dtype rule refuses int ** -1
        # NOTE: the operator, not xp.power: numpy's `**` computes x ** 0.5 as sqrt(x) and
        # x ** 2 as x * x, where np.power calls pow() (20x slower for sqrt).
        return a**b
    negative = b < 0
    result = xp.power(a, xp.where(negative, 0, b))
    # NOTE: the conditions as arrays: a number base gives bools, which cupy's where refuses
    is_one, is_minus_one = xp.asarray(a == 1), xp.asarray(a == -1)
    inverse = xp.where(is_one, 1, xp.where(is_minus_one, 1 - 2 * (b % 2), 0))  # (-1)**b = +-1
    return xp.where(negative, inverse, result)


def log_of_number(x: float) -> float:
    """log(x) of a Python number, as a tensor's log gives it: -inf at 0, NaN below."""
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def number_of_dtype(value: bool | int | float, dtype: DType) -> bool | int | float:
    """A Python number converted to `dtype`'s kind: 2.7 -> 2 for ints, 2 -> True for bool."""
    if dtype is bool_:
        return bool(value)
    return float(value) if dtype.is_floating_point else int(value)


# ---- sigmoid and erf ---------------------------------------------------------------------


def sigmoid(xp, a):
    """1 / (1 + e^-x), computed as e^min(x, 0) / (1 + e^-|x|): that is e^x / (1 + e^x) for
    x < 0, so nothing overflows and sigmoid(-100) keeps its digits instead of rounding to 0.
    (No xp.where: numpy's is slow on masks that do not follow a pattern.)"""
    x = as_float(xp, a)
    return xp.exp(xp.minimum(x, 0)) / (1 + xp.exp(-xp.abs(x)))


# erf(x) = 2/sqrt(pi) x e^(-x^2) sum_k (2x^2)^k / (1 * 3 * ... * (2k+1)): the series of
# 2/sqrt(pi) integral_0^x e^(-t^2) dt rearranged so that every term is positive. Nothing
# cancels, and for x < 2 the first 30 terms reach double precision.
_ERF_SERIES = [1 / math.prod(range(1, 2 * k + 2, 2)) for k in range(30)]
# Terms of the series and levels of erfc's continued fraction that reach float64's precision
# (and, computed in float64, float32's) for every x: measured against math.erf.
_ERF_TERMS = {"float64": (30, 40), "float32": (20, 20)}


def erf(xp, a):
    """The error function: the series above for |x| < 2, 1 - erfc(|x|) beyond, odd in x.

    Both are evaluated in float64 and rounded once, so float32 results are within an ulp.
    """
    series_terms, fraction_depth = _ERF_TERMS["float64" if a.dtype.itemsize == 8 else "float32"]
    x = a.astype(xp.float64)
    ax = xp.abs(x)
    out = xp.empty_like(ax)
    near = ax < 2.0
    out[near] = _erf_series(xp, ax[near], series_terms)
    far = ~near  # NaN lands here, and stays NaN
    out[far] = 1.0 - _erfc_fraction(xp, ax[far], fraction_depth)
    return xp.copysign(out, x)


def _erf_series(xp, x, terms: int):
    u = 2.0 * x * x
    total = _ERF_SERIES[terms - 1]
    for coefficient in reversed(_ERF_SERIES[: terms - 1]):  # Horner's rule in u
        total = total * u + coefficient
    return (2 / math.sqrt(math.pi)) * x * xp.exp(-x * x) * total


def _erfc_fraction(xp, x, depth: int):
    """erfc(x) = e^(-x^2) / sqrt(pi) / (x + (1/2) / (x + (2/2) / (x + (3/2) / (x + ...)))),
    evaluated from `depth` levels down upwards; it converges fast for x >= 2."""
    t = x
    for level in range(depth, 0, -1):
        t = x + (level / 2) / t
    return xp.exp(-x * x) / (math.sqrt(math.pi) * t)
