"""Reductions (REDUCTIONS: sum, max, min, argmax, argmin) over every set of dims of 1-d, 2-d
and 3-d inputs, keepdim or not.

A Reduction means out[index] = reduce(inner_fn(index, rindex) for every rindex) ([Note: the
loop-IR ops] in ir/ops_handler.py); its order is not fixed, so a float sum may differ from the
reference by what reordering can change (`sum_ulps`); an integer sum is exact (it wraps around
in any order to the same bits). max and min are exact, propagate NaN, and on bools are `any`
and `all`; argmax and argmin give the position of the first extreme, or of the first NaN.
Which zero a sum of zeros or max(-0.0, +0.0) gives is left open.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from codegen.backend import Backend
from ir.agreement import MATH_ULPS
from ir.ops_handler import REDUCTIONS, ops
from tests.conformance.kernels import (
    assert_agrees,
    computed,
    float_dtypes,
    input_buffer,
    program_of,
    random_values,
    reduction,
    run_backend,
    run_reference,
    special_values,
    sum_ulps,
)

# The inputs, one per rank, each in a different layout: reversed, row-major, permuted.
SHAPES = {1: (13,), 2: (6, 7), 3: (3, 4, 5)}


def _numpy_position(find):
    """np.argmax (or argmin) over a set of axes: the position in their row-major order."""

    def reduce(a: np.ndarray, axis, keepdims: bool = False) -> np.ndarray:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        kept = [d for d in range(a.ndim) if d not in axes]
        moved = a.transpose(kept + list(axes)).reshape([a.shape[d] for d in kept] + [-1])
        out = find(moved, axis=-1)
        return np.expand_dims(out, axes) if keepdims else out

    return reduce


# numpy's reductions, in the input's dtype (np.sum would widen an int32 sum to int64)
NUMPY = {
    "sum": lambda a, **kwargs: np.sum(a, dtype=a.dtype, **kwargs), "max": np.max, "min": np.min,
    "argmax": _numpy_position(np.argmax), "argmin": _numpy_position(np.argmin),
}  # fmt: skip
ARG_REDUCTIONS = ("argmax", "argmin")  # positions: no value over zero terms

# What each reduction gives over zero terms (for bool, max is `any` and min is `all`).
IDENTITIES = {"sum": 0, "max": -np.inf, "min": np.inf}
BOOL_IDENTITIES = {"max": False, "min": True}


def _identity(reduction_type: str, dtype: np.dtype) -> bool | int | float:
    if dtype.kind == "b":
        return BOOL_IDENTITIES[reduction_type]
    if dtype.kind == "i" and reduction_type != "sum":  # the integer's extremes
        info = np.iinfo(dtype)
        return info.min if reduction_type == "max" else info.max
    return IDENTITIES[reduction_type]


def _input(rank: int, dtype: np.dtype) -> np.ndarray:
    shape = SHAPES[rank]
    values = random_values(dtype, int(np.prod(shape)), seed=rank)
    if rank == 1:
        return values[::-1]  # a negative stride
    if rank == 3:
        return values.reshape(shape[1:] + shape[:1]).transpose(2, 0, 1)  # strides (1, 25, 5)
    return values.reshape(shape)


def _dim_sets(rank: int) -> list[tuple[int, ...]]:
    """Every non-empty set of dims: (0,), (1,), (0, 1), ... (0, 1, 2)."""
    return [c for k in range(1, rank + 1) for c in itertools.combinations(range(rank), k)]


def reduction_dtypes(backend: Backend, reduction_type: str) -> list[str]:
    """The dtypes a reduction is graded on: floats, integers, and bools for max and min (a sum
    of bools is an int64, another dtype)."""
    bools = ["bool"] if reduction_type != "sum" and "bool" in backend.dtypes else []  # any, all
    return float_dtypes(backend) + int_dtypes(backend) + bools


def int_dtypes(backend: Backend) -> list[str]:
    return sorted({"int32", "int64"} & backend.dtypes)


def _ulps(reduction_type: str, terms: np.ndarray, dims, keepdim: bool, want: np.ndarray):
    """How far a backend may be: a float sum's reordering (`sum_ulps`), else exactly."""
    if reduction_type != "sum" or terms.dtype.kind != "f":
        return 0
    return sum_ulps(terms, dims, keepdim, want)


def reduction_cases(backend: Backend) -> list[tuple[str, str, int]]:
    return [
        (t, dtype, rank)
        for t in REDUCTIONS
        for dtype in reduction_dtypes(backend, t)
        for rank in SHAPES
    ]


def special_value_cases(backend: Backend) -> list[tuple[str, str]]:
    return [(t, dtype) for t in REDUCTIONS for dtype in float_dtypes(backend)]


def integer_cases(backend: Backend) -> list[tuple[str, str]]:
    return [(t, dtype) for t in REDUCTIONS for dtype in int_dtypes(backend)]


def empty_cases(backend: Backend) -> list[tuple[str, str]]:
    return [
        (t, dtype)
        for t in REDUCTIONS
        if t not in ARG_REDUCTIONS
        for dtype in reduction_dtypes(backend, t)
    ]


@pytest.mark.backend_cases("reduction_type, dtype, rank", reduction_cases)
def test_reduction_over_every_set_of_dims(
    backend: Backend, reduction_type: str, dtype: str, rank: int
):
    array = _input(rank, np.dtype(dtype))
    x = input_buffer("x", array)
    cases = [(dims, keepdim) for dims in _dim_sets(rank) for keepdim in (False, True)]
    buffers = [
        computed(f"buf{k}", reduction(x, dims, keepdim, reduction_type))
        for k, (dims, keepdim) in enumerate(cases)
    ]
    program = program_of([x], buffers)
    expected = run_reference(program, {"x": array})
    got = run_backend(backend, program, {"x": array}, expected)
    for k, (dims, keepdim) in enumerate(cases):
        name = f"buf{k}"
        want = expected[name]
        numpy = NUMPY[reduction_type](array, axis=dims, keepdims=keepdim)
        ulps = _ulps(reduction_type, array, dims, keepdim, want)
        case = f"{reduction_type} over dims {dims}, keepdim={keepdim}"
        assert_agrees({name: want}, {name: numpy}, ulps, {"case": case})
        assert_agrees({name: got[name]}, {name: want}, ulps, {"case": case})


@pytest.mark.backend_cases("reduction_type, dtype", special_value_cases)
def test_reduction_of_special_values(backend: Backend, reduction_type: str, dtype: str):
    """Rows of NaN, infinities, subnormals and extremes, each reduced along dim 1."""
    dtype = np.dtype(dtype)
    info = np.finfo(dtype)
    special = special_values(dtype)
    rows = [
        [1.0, np.nan, 2.0],
        [np.inf, 1.0, 2.0],
        [np.inf, -np.inf, 0.5],
        [-np.inf, -np.inf, -np.inf],
        [info.max, info.max, 1.0],  # the sum overflows in any order
        [info.smallest_subnormal] * 3,
        [-info.smallest_subnormal, info.smallest_normal, 0.0],
    ]
    if reduction_type != "sum":
        rows.append([info.max, -info.max, 3.0])  # (a sum of these depends on the order)
    # and every special value of the dtype next to two ordinary ones
    ordinary = np.broadcast_to(random_values(dtype, 2, seed=5), (special.size, 2))
    with np.errstate(over="ignore"):
        array = np.concatenate([np.array(rows, dtype), np.column_stack([special, ordinary])])
    _check_rows(backend, reduction_type, array)


@pytest.mark.backend_cases("reduction_type, dtype", integer_cases)
def test_integer_reduction_of_extremes(backend: Backend, reduction_type: str, dtype: str):
    """Rows at the integer's extremes: a sum that overflows wraps around, as numpy's does."""
    info = np.iinfo(dtype)
    rows = [
        [info.max, 1, 2],  # wraps past the maximum
        [info.min, -1, 0],  # and past the minimum
        [info.min, info.max, 5],
        [info.max, info.max, info.max],
        [info.min, info.min, info.min],
        [-7, 0, 7],
    ]
    _check_rows(backend, reduction_type, np.array(rows, dtype))


@pytest.mark.backend_cases("reduction_type, dtype", empty_cases)
def test_a_reduction_over_no_terms_is_its_identity(
    backend: Backend, reduction_type: str, dtype: str
):
    array = np.zeros((4, 0), dtype)
    x = input_buffer("x", array)
    program = program_of([x], [computed("buf0", reduction(x, (1,), False, reduction_type))])
    expected = run_reference(program, {"x": array})
    identity = _identity(reduction_type, np.dtype(dtype))
    assert_agrees(expected, {"buf0": np.full(4, identity, dtype)})
    assert_agrees(run_backend(backend, program, {"x": array}, expected), expected)


@pytest.mark.backend_cases("dtype", float_dtypes)
def test_a_reduction_computes_its_body_per_term(backend: Backend, dtype: str):
    """The terms of a reduction may be any expression, here sum(sin(x) * x) over dim 1."""
    array = random_values(np.dtype(dtype), 6 * 50, seed=6).reshape(6, 50)
    x = input_buffer("x", array)
    body = reduction(x, (1,), False, "sum", lambda value: ops.mul(ops.sin(value), value))
    program = program_of([x], [computed("buf0", body)])
    expected = run_reference(program, {"x": array})
    got = run_backend(backend, program, {"x": array}, expected)
    terms = np.sin(array) * array
    term_ulps = MATH_ULPS["sin"] + 1  # sin's error, and the product's rounding
    assert_agrees(got, expected, sum_ulps(terms, (1,), False, expected["buf0"], term_ulps))


def _check_rows(backend: Backend, reduction_type: str, array: np.ndarray) -> None:
    """`array` reduced along dim 1 by `backend`, against the reference and numpy."""
    x = input_buffer("x", array)
    program = program_of([x], [computed("buf0", reduction(x, (1,), False, reduction_type))])
    expected = run_reference(program, {"x": array})
    got = run_backend(backend, program, {"x": array}, expected)
    with np.errstate(over="ignore", invalid="ignore"):
        numpy = NUMPY[reduction_type](array, axis=1)
    ulps = _ulps(reduction_type, array, (1,), False, expected["buf0"])
    rows = np.empty(len(array), object)
    rows[:] = [tuple(row.tolist()) for row in array]
    want = expected["buf0"] + 0  # + 0: either zero is right (see the module docstring)
    assert_agrees({"buf0": want}, {"buf0": numpy + 0}, ulps, {"row": rows})
    assert_agrees({"buf0": got["buf0"] + 0}, {"buf0": want}, ulps, {"row": rows})
