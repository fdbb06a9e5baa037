"""`minitorch.testing.assert_close`: are two results the same, up to rounding? As PyTorch's.

    >>> minitorch.testing.assert_close(compiled(x), model(x))
    >>> minitorch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)

Two tensors are close when they have the same shape, dtype and device, and every element
satisfies |actual - expected| <= atol + rtol * |expected| (NaNs match only with
`equal_nan=True`; equal infinities match). Unless given, the tolerances come from the dtype
(of the less precise of the two, when `check_dtype=False` lets them differ):

    dtype     rtol     atol
    float16   1e-3     1e-5
    bfloat16  1.6e-2   1e-5
    float32   1.3e-6   1e-5      (about 10 ulps: enough for a different order of summation)
    float64   1e-7     1e-7
    integers  0        0         (equal)
    bool      0        0

Python numbers compare as scalars (float64 tolerances); lists, tuples and dicts element by
element, and the message names the item that failed. A mismatch raises an AssertionError
(a `CloseError`) that says what differs, in PyTorch's words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from minitorch.device import to_host
from minitorch.dtype import DType, bfloat16, float16, float32, float64
from minitorch.errors import ArgumentTypeError, MinitorchError
from minitorch.tensor import Tensor

# (rtol, atol), PyTorch's; others: exact
_TOLERANCES = {
    float16: (1e-3, 1e-5),
    bfloat16: (1.6e-2, 1e-5),
    float32: (1.3e-6, 1e-5),
    float64: (1e-7, 1e-7),
}

__all__ = ["CloseError", "assert_close"]


class CloseError(MinitorchError, AssertionError):
    """Two values that `assert_close` found not close."""


def assert_close(
    actual,
    expected,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    msg: str | None = None,
    **_ignored,
) -> None:
    """Raise CloseError unless `actual` and `expected` are close (see the module docstring)."""
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ArgumentTypeError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}."
        )
    options = (rtol, atol, equal_nan, check_device, check_dtype)
    try:
        _compare(actual, expected, options, path="")
    except CloseError as e:
        raise CloseError(msg if msg is not None else str(e)) from None


def _compare(actual, expected, options: tuple, path: str) -> None:
    """Recurse through sequences and mappings down to tensors and numbers."""
    if isinstance(actual, Tensor) or isinstance(expected, Tensor):
        return _fail_at(path, _compare_tensors, actual, expected, options)
    if _is_number(actual) and _is_number(expected):
        return _fail_at(path, _compare_scalars, actual, expected, options)
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise CloseError(
                f"The keys of the mappings do not match:\n"
                f"{sorted(map(repr, actual))} != {sorted(map(repr, expected))}"
                f"{_where(path)}"
            )
        for key in expected:
            _compare(actual[key], expected[key], options, f"{path}[{key!r}]")
        return None
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise CloseError(
                f"The length of the sequences mismatch: {len(actual)} != "
                f"{len(expected)}{_where(path)}"
            )
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, options, f"{path}[{i}]")
        return None
    if actual == expected and type(actual) is type(expected):  # None, strings, ...
        return None
    raise CloseError(
        f"Expected {expected!r} but got {actual!r} (of types "
        f"{type(expected).__name__} and {type(actual).__name__}){_where(path)}"
    )


def _fail_at(path: str, compare, actual, expected, options: tuple) -> None:
    try:
        compare(actual, expected, options)
    except CloseError as e:
        raise CloseError(f"{e}{_where(path)}") from None


def _where(path: str) -> str:
    return f"\n\nThe failure occurred for item {path}" if path else ""


def _is_number(x) -> bool:
    return isinstance(x, (bool, int, float, np.number, np.bool_))


def _is_sequence(x) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, str)


# ---- leaves: tensors and scalars ---------------------------------------------------------------


def _compare_tensors(actual, expected, options: tuple) -> None:
    rtol, atol, equal_nan, check_device, check_dtype = options
    for x in (actual, expected):
        if not isinstance(x, Tensor):
            raise CloseError(
                f"Expected both inputs to be tensors, but got a {type(x).__name__}: {x!r}"
            )
    _check_attribute("shape", actual.shape, expected.shape)
    if check_device:
        _check_attribute("device", actual.device, expected.device)
    if check_dtype:
        _check_attribute("dtype", actual.dtype, expected.dtype)
    if rtol is None:
        rtol, atol = (
            max(a, b) for a, b in zip(_tolerances(actual.dtype), _tolerances(expected.dtype))
        )
    a = to_host(actual.detach()._data)
    e = to_host(expected.detach()._data)
    exact = not (actual.dtype.is_floating_point or expected.dtype.is_floating_point)
    _compare_arrays(a, e, rtol, atol, equal_nan, "Tensor-likes", exact)


def _compare_scalars(actual, expected, options: tuple) -> None:
    rtol, atol, equal_nan, _, check_dtype = options
    if check_dtype and type(actual) is not type(expected):
        raise CloseError(
            f"The values for attribute 'type' do not match: "
            f"{type(actual).__name__} != {type(expected).__name__}."
        )
    if rtol is None:
        exact = isinstance(actual, (bool, int)) and isinstance(expected, (bool, int))
        rtol, atol = (0.0, 0.0) if exact else _TOLERANCES[float64]
    a, e = np.float64(actual), np.float64(expected)
    if _close(a, e, rtol, atol, equal_nan):
        return
    raise CloseError(
        f"Scalars are not close!\n\nExpected {expected} but got {actual}.\n"
        f"Absolute difference: {abs(a - e)} (up to {atol} allowed)\n"
        f"Relative difference: {abs(a - e) / abs(e)} (up to {rtol} allowed)"
    )


def _check_attribute(name: str, actual, expected) -> None:
    if actual != expected:
        raise CloseError(
            f"The values for attribute '{name}' do not match: {actual!r} != {expected!r}."
        )


def _tolerances(dtype: DType) -> tuple[float, float]:
    return _TOLERANCES.get(dtype, (0.0, 0.0))


def _close(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool):
    """|a - e| <= atol + rtol |e| elementwise; equal values (infinities) are close too."""
    with np.errstate(invalid="ignore", over="ignore"):
        close = (a == e) | (np.abs(a - e) <= atol + rtol * np.abs(e))
    if equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    return close


def _compare_arrays(
    a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool, what: str, exact: bool
) -> None:
    a, e = a.astype(np.float64), e.astype(np.float64)
    close = _close(a, e, rtol, atol, equal_nan)
    if close.all():
        return
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.where(close, 0.0, np.abs(a - e))
        rel_diff = np.where(close, 0.0, abs_diff / np.abs(e))
    bad = int((~close).sum())
    lines = [
        f"{what} are not {'equal' if exact else 'close'}!",
        "",
        f"Mismatched elements: {bad} / {close.size} ({100 * bad / close.size:.1f}%)",
    ]
    for name, diff, tol in (("absolute", abs_diff, atol), ("relative", rel_diff, rtol)):
        worst = np.unravel_index(np.nanargmax(diff) if not np.isnan(diff).all() else 0, diff.shape)
        allowed = "" if exact else f" (up to {tol} allowed)"
        value = diff[worst] if diff.ndim else diff
        lines.append(
            f"Greatest {name} difference: {_number(value, exact)} at index "
            f"{tuple(int(i) for i in worst)}{allowed}"
        )
    raise CloseError("\n".join(lines))


def _number(value, exact: bool):
    return int(value) if exact and np.isfinite(value) else float(value)
