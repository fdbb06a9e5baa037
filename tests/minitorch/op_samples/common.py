"""Shared pieces of the op samples: tensor placeholders, PyTorch's promotion, OpSpec.

Each family module (pointwise.py, reductions.py, views.py, ...) defines `SPECS`: for each op
of that family, its sample arguments, its numpy reference and the dtype PyTorch gives it.
tests/minitorch/test_op_table.py runs every sample of every family.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

f32, f64, i32, i64, b8 = "float32", "float64", "int32", "int64", "bool"


@dataclass(frozen=True)
class T:
    """A tensor argument: its shape, dtype, and the interval its values are drawn from."""

    shape: tuple[int, ...]
    dtype: str = f32
    low: float = -2.0
    high: float = 2.0


POSITIVE = {"low": 0.5, "high": 2.0}  # for log, division and fractional powers


def S(*args, **kwargs) -> tuple[tuple, dict]:
    """One sample: the op's positional and keyword arguments, with T for tensors."""
    return args, kwargs


_CATEGORY = {"bool": 0, "int32": 1, "int64": 1, "float32": 2, "float64": 2}


def torch_result_dtype(*operands) -> str:
    """PyTorch's type promotion, as its documentation states it.

    The result's category (bool < int < float) is the highest among all operands. Its dtype is
    the widest of that category among the tensors with dimensions; if none of them has that
    category, among the 0-d tensors; else the Python scalar's default (int64, float32).
    """
    groups: tuple[list[str], list[str], list[str]] = ([], [], [])
    for x in operands:
        if isinstance(x, np.ndarray):
            groups[0 if x.ndim else 1].append(x.dtype.name)
        else:
            groups[2].append("float32" if isinstance(x, float) else "int64")
    top = max(_CATEGORY[d] for group in groups for d in group)
    for group in groups:
        same = [d for d in group if _CATEGORY[d] == top]
        if same:
            return max(same, key=lambda d: np.dtype(d).itemsize)
    raise AssertionError("no operands")


def float_result(arrays: list, **kwargs) -> str:
    """sin, exp, mean, ...: a float input keeps its dtype; ints compute in the default float."""
    kind = arrays[0].dtype.name
    return kind if _CATEGORY[kind] == 2 else "float32"


def same_as_input(arrays: list, **kwargs) -> str:
    return arrays[0].dtype.name


def promoted(arrays: list, **kwargs) -> str:
    """Binary ops: PyTorch's promotion of the first two arguments."""
    return torch_result_dtype(*arrays[:2])


@dataclass(frozen=True)
class OpSpec:
    """How to test one op: samples, a numpy reference, and the dtype PyTorch gives it."""

    samples: list  # S(...) argument lists, with T for tensors
    numpy: Callable  # the reference, called with numpy arrays and the same kwargs
    dtype: Callable[..., str] = same_as_input  # expected result dtype: dtype(arrays, **kwargs)
    grad: bool = True  # check derivatives by finite differences (float samples only)
    extra: dict = field(default_factory=dict)  # anything a family needs
