"""Statements whose eager answer hangs on the last bit of a float: the generator drops them.

A fused kernel may round differently from eager mode by an ulp or so (another summation order,
exp computed by mathlib instead of libm), and compare.py forgives that in float outputs. It
cannot forgive it once an op has made the float discrete: `t > t.mean(0)` where t holds copies
of one value, `argmax` over two rows that are means of equal values, `.long()` of 0.9999999 or
of exp(20.0). The answer is then decided by rounding, eager's and the compiled one's alike, and
a difference is a false alarm (findings of issue 28's campaign: seeds 100189, 200008, 200610,
200759, 202225). `Fragile` watches the ops a statement runs, in eager mode, as the generator
tries it, and says whether any of them is such a near tie:

    comparisons (lt, le, eq, ne) of two float tensors with a pair of elements near but not at
        equality (exact ties are kept: integer-valued floats compare exactly everywhere);
    argmax and argmin whose best and second best values are near but not equal;
    conversions of floats to integers (a cast, a float written into an integer tensor) of a
        value near but not at an integer, of NaN or an infinity, or of one past 2**24 (where a
        float32 has no fractional bits left, and past 2**31 the cast is undefined).

"Near" is relative to the values' size: 1e-4 in float32, 1e-10 in float64. The values are the
ones of the first call only; at the larger sizes of calls 3 and 4 a program may still meet one.
"""

from __future__ import annotations

import numpy as np

import minitorch
from minitorch.dispatch import DispatchMode

NEAR = {"float32": 1e-4, "float64": 1e-10}
_COMPARISONS = ("lt", "le", "eq", "ne")
_INT_DTYPES = (minitorch.int32, minitorch.int64)


class Fragile(DispatchMode):
    """`with Fragile() as mode: ...` then `mode.found`: did an op decide on a near tie?"""

    def __init__(self) -> None:
        self.found = False

    def run(self, op, args, kwargs, meta):
        if not self.found and not isinstance(meta, tuple):
            self.found = _fragile(op.name, args, kwargs, meta)
        return op(*args, **kwargs)  # the mode is off while it runs: this is the eager op


def _fragile(name: str, args: tuple, kwargs: dict, meta) -> bool:
    floats = [a for a in args if isinstance(a, minitorch.Tensor) and a.dtype.is_floating_point]
    if not floats:
        return False
    near = NEAR.get(floats[0].dtype.name, NEAR["float32"])
    with np.errstate(all="ignore"):
        if name in _COMPARISONS:
            if len(floats) < 2 or floats[0] is floats[1]:
                return False  # against a number, or itself: both sides round alike
            a, b = (f.detach().numpy().astype(np.float64) for f in floats[:2])
            return _near_not_equal(a, b, near)
        if name in ("argmax", "argmin"):
            values = floats[0].detach().numpy().astype(np.float64)
            dim = kwargs.get("dim")
            values = values.reshape(-1) if dim is None or values.ndim == 0 else values
            axis = -1 if dim is None or values.ndim == 0 else dim
            if values.shape[axis] < 2:
                return False
            ordered = np.sort(values, axis=axis)
            if name == "argmax":
                ordered = np.flip(ordered, axis=axis)
            first, second = (np.take(ordered, k, axis=axis) for k in (0, 1))
            return _near_not_equal(first, second, near)
        if meta.dtype in _INT_DTYPES and not name.startswith(("arg", "topk")):
            values = floats[0].detach().numpy().astype(np.float64)
            if not (np.abs(values) < 2.0**24).all():  # NaN compares False too
                return True
            return _near_not_equal(values, np.round(values), near)
    return False


def _near_not_equal(a: np.ndarray, b: np.ndarray, near: float) -> bool:
    gap = np.abs(a - b)
    scale = np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return bool(((gap > 0) & (gap <= near * scale)).any())
