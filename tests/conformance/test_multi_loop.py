"""Kernels of several loops over the same rows ([Note: fusion] in ir/scheduler.py): softmax-
and layernorm-like programs, built by hand, that the scheduler fuses into one kernel each.

The backend's answer is held to the reference interpreter running the same fused kernel, and
the interpreter's to itself running one kernel per buffer (the definition, with nothing
fused), on rows of random values and rows with NaN, infinities, one element or none.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen.backend import Backend
from ir import interpreter
from ir.indexing import Const, Var
from ir.nodes import InputBuffer, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import ops
from ir.scheduler import reloads, schedule
from minitorch.dtype import float32, int64
from tests.conformance.kernels import (
    Size,
    compile_program,
    computed,
    contiguous,
    execute,
    float_dtypes,
    input_buffer,
    load,
    random_values,
    run_backend,
    run_reference,
)
from tests.conformance.test_symbolic_sizes import STATIC_SIZES, SYMBOLIC_SIZES


def _float_rows(dtype: np.dtype, n: int) -> np.ndarray:
    """Random rows of n, then rows holding a NaN, an inf, only -inf, and huge values."""
    rows = random_values(dtype, 6 * n, seed=n).reshape(6, n)
    rows[1, n // 2] = np.nan
    rows[2, 0] = np.inf
    rows[3, :] = -np.inf
    rows[4, :] = np.finfo(dtype).max / 2
    return rows


def _softmax(x: InputBuffer, reload: bool) -> LoweredProgram:
    """max, sum of exp(x - max), exp(x - max) / sum along the last dim of x; with `reload`,
    exp(x - max) is one buffer that the sum and the division both load."""
    *outer, n = x.layout.size
    dtype = x.layout.dtype
    row = (*outer, 1)  # keepdim
    rindex = lambda i, r: (*i[:-1], r[0])  # noqa: E731 (the element of row i at r)
    m = computed("buf0", Reduction(dtype, row, (n,), "max", lambda i, r: load(x, rindex(i, r))))
    row_max = lambda i: load(m, (*i[:-1], Const(0)))  # noqa: E731
    exp = lambda i: ops.exp(ops.sub(load(x, i), row_max(i)))  # noqa: E731
    if reload:
        e = computed("buf1", Pointwise(dtype, x.layout.size, exp))
        term = lambda i: load(e, i)  # noqa: E731
        buffers = [m, e]
    else:
        term, buffers = exp, [m]
    s = computed("buf2", Reduction(dtype, row, (n,), "sum", lambda i, r: term(rindex(i, r))))
    out = Pointwise(dtype, x.layout.size, lambda i: ops.div(term(i), load(s, (*i[:-1], Const(0)))))
    buffers += [s, computed("buf3", out)]
    return LoweredProgram((x,), tuple(buffers), ("buf3",))


def _layernorm(x: InputBuffer) -> LoweredProgram:
    """(x - mean) / sqrt(var + eps) along dim 1, with the mean and 1/sqrt computed once per
    row (Pointwise buffers over the rows, between the loops)."""
    rows, n = x.layout.size
    dtype = x.layout.dtype
    c = lambda v: ops.constant(v, dtype)  # noqa: E731
    total = computed(
        "buf0", Reduction(dtype, (rows, 1), (n,), "sum", lambda i, r: load(x, (i[0], r[0])))
    )
    mean = computed(
        "buf1", Pointwise(dtype, (rows, 1), lambda i: ops.div(load(total, i), c(float(n))))
    )
    centered = lambda i0, i1: ops.sub(load(x, (i0, i1)), load(mean, (i0, Const(0))))  # noqa: E731
    squares = computed(
        "buf2",
        Reduction(dtype, (rows, 1), (n,), "sum", lambda i, r: ops.square(centered(i[0], r[0]))),
    )
    rstd = computed(
        "buf3",
        Pointwise(
            dtype,
            (rows, 1),
            lambda i: ops.rsqrt(ops.add(ops.div(load(squares, i), c(float(n))), c(1e-5))),
        ),
    )
    out = computed(
        "buf4",
        Pointwise(
            dtype, (rows, n), lambda i: ops.mul(centered(i[0], i[1]), load(rstd, (i[0], Const(0))))
        ),
    )
    return LoweredProgram((x,), (total, mean, squares, rstd, out), ("buf4",))


def _integer_rows(x: InputBuffer) -> LoweredProgram:
    """out = x * sum(x - max) + max along dim 1: wraps around, exactly, in any order."""
    rows, n = x.layout.size
    dtype = x.layout.dtype
    m = computed(
        "buf0", Reduction(dtype, (rows, 1), (n,), "max", lambda i, r: load(x, (i[0], r[0])))
    )
    row_max = lambda i0: load(m, (i0, Const(0)))  # noqa: E731
    s = computed(
        "buf1",
        Reduction(
            dtype,
            (rows, 1),
            (n,),
            "sum",
            lambda i, r: ops.sub(load(x, (i[0], r[0])), row_max(i[0])),
        ),
    )
    out = computed(
        "buf2",
        Pointwise(
            dtype,
            (rows, n),
            lambda i: ops.add(ops.mul(load(x, i), load(s, (i[0], Const(0)))), row_max(i[0])),
        ),
    )
    return LoweredProgram((x,), (m, s, out), ("buf2",))


def _after_argmax(x: InputBuffer) -> LoweredProgram:
    """out = x * argmax(x along dim 1): the argmax runs in a loop of its own."""
    rows, n = x.layout.size
    dtype = x.layout.dtype
    position = computed(
        "buf0", Reduction(int64, (rows, 1), (n,), "argmax", lambda i, r: load(x, (i[0], r[0])))
    )
    out = computed(
        "buf1",
        Pointwise(
            dtype,
            (rows, n),
            lambda i: ops.mul(load(x, i), ops.to_dtype(load(position, (i[0], Const(0))), dtype)),
        ),
    )
    return LoweredProgram((x,), (position, out), ("buf1",))


def _check(backend: Backend, program: LoweredProgram, array: np.ndarray, loops: int | None) -> None:
    """One kernel of `loops` loops; the backend agrees with the interpreter, and the fused
    interpreter with the unfused one. (Rows of one element have other loops: a Pointwise
    over (6, 1) runs once per row.)"""
    (kernel,) = schedule(program)
    assert loops is None or len(kernel.loops) == loops, str(kernel)
    (unfused,) = interpreter.run_reference(program, None, [array])
    expected = run_reference(program, {"x": array})
    got = run_backend(backend, program, {"x": array}, expected)
    (name,) = program.outputs
    for result in (expected[name], got[name]):
        assert result.dtype == unfused.dtype and result.shape == unfused.shape
        if unfused.dtype.kind == "f":
            np.testing.assert_array_equal(np.isnan(result), np.isnan(unfused))
            np.testing.assert_allclose(result, unfused, rtol=2e-5, atol=2e-5, equal_nan=True)
        else:
            np.testing.assert_array_equal(result, unfused)


def float_cases(backend: Backend) -> list[str]:
    return float_dtypes(backend)


@pytest.mark.backend_cases("dtype", float_cases)
@pytest.mark.parametrize("n", [1, 7, 64])
@pytest.mark.parametrize("reload", [False, True])
def test_softmax_rows(backend: Backend, dtype: str, n: int, reload: bool):
    array = _float_rows(np.dtype(dtype), n)
    x = input_buffer("x", array)
    with np.errstate(all="ignore"):
        _check(backend, _softmax(x, reload), array, loops=3 if n > 1 else None)
    if reload and n > 1:
        assert reloads(schedule(_softmax(x, reload))[0]) == ("buf1",)


@pytest.mark.backend_cases("dtype", float_cases)
def test_softmax_of_a_transposed_3d_input(backend: Backend, dtype: str):
    """Outer ranges (3, 4, 1) over rows of 5, read through strides (1, 15, 3)."""
    array = random_values(np.dtype(dtype), 60, seed=3).reshape(5, 4, 3).transpose(2, 1, 0)
    _check(backend, _softmax(input_buffer("x", array), reload=False), array, loops=3)


@pytest.mark.backend_cases("dtype", float_cases)
def test_softmax_of_rows_of_no_elements(backend: Backend, dtype: str):
    array = np.zeros((4, 0), dtype)
    _check(backend, _softmax(input_buffer("x", array), reload=False), array, loops=3)


@pytest.mark.backend_cases("dtype", float_cases)
@pytest.mark.parametrize("n", [1, 9, 100])
def test_layernorm_rows_with_steps_once_per_row(backend: Backend, dtype: str, n: int):
    array = _float_rows(np.dtype(dtype), n)
    array[4, :] = 3.0  # a row of equal values: variance 0
    with np.errstate(all="ignore"):
        _check(backend, _layernorm(input_buffer("x", array)), array, 5 if n > 1 else None)


def integer_cases(backend: Backend) -> list[str]:
    return sorted({"int32", "int64"} & backend.dtypes)


@pytest.mark.backend_cases("dtype", integer_cases)
def test_integer_rows_wrap_around_exactly(backend: Backend, dtype: str):
    info = np.iinfo(dtype)
    array = random_values(np.dtype(dtype), 40, seed=4).reshape(5, 8)
    array[0, :3] = [info.max, info.min, info.max]
    _check(backend, _integer_rows(input_buffer("x", array)), array, loops=3)


@pytest.mark.backend_cases("dtype", float_cases)
def test_element_nodes_after_an_argmax(backend: Backend, dtype: str):
    array = _float_rows(np.dtype(dtype), 6)
    with np.errstate(all="ignore"):
        _check(backend, _after_argmax(input_buffer("x", array)), array, loops=2)


@pytest.mark.backend_cases("dtype", lambda b: ["float32"] if "float32" in b.dtypes else [])
def test_softmax_compiled_once_over_size_symbols(backend: Backend, dtype: str):
    """Rows (s0, 1) of s1: the loops' bounds are symbols; sizes 1 are compiled as numbers."""

    def program(s0: Size, s1: Size) -> LoweredProgram:
        return _softmax(InputBuffer("x", contiguous((s0, s1), float32)), reload=False)

    if backend.symbolic_sizes:
        generic = compile_program(backend, program(Var("s0"), Var("s1")), ("s0", "s1"))
    for s0, s1 in SYMBOLIC_SIZES + STATIC_SIZES:
        concrete = program(s0, s1)
        array = random_values(np.float32, s0 * s1, seed=s0 + 7 * s1).reshape(s0, s1)
        expected = run_reference(concrete, {"x": array})
        if backend.symbolic_sizes and (s0, s1) in SYMBOLIC_SIZES:
            got = execute(generic, concrete, {"x": array}, expected, {"s0": s0, "s1": s1})
        else:
            got = execute(compile_program(backend, concrete), concrete, {"x": array}, expected)
        (unfused,) = interpreter.run_reference(concrete, None, [array])
        np.testing.assert_allclose(expected["buf3"], unfused, rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(got["buf3"], unfused, rtol=2e-5, atol=2e-5)


@pytest.mark.backend_cases("dtype", float_cases)
def test_reductions_over_no_dims_between_pointwise_steps(backend: Backend, dtype: str):
    """log_softmax of a 0-d tensor lowers to reductions over no dims (one term each), which
    share the steps of the pointwise nodes around them; both stay registers between steps."""
    array = np.array(2.5, dtype)
    x = input_buffer("x", array)
    dtype_ = x.layout.dtype
    shifted = computed("buf0", Pointwise(dtype_, (), lambda i: ops.neg(load(x, ()))))
    m = computed("buf1", Reduction(dtype_, (), (), "max", lambda i, r: load(shifted, ())))
    centered = computed(
        "buf2", Pointwise(dtype_, (), lambda i: ops.sub(load(shifted, ()), load(m, ())))
    )
    total = computed(
        "buf3", Reduction(dtype_, (), (), "sum", lambda i, r: ops.exp(load(centered, ())))
    )
    out = computed(
        "buf4",
        Pointwise(dtype_, (), lambda i: ops.sub(load(centered, ()), ops.log(load(total, ())))),
    )
    program = LoweredProgram((x,), (shifted, m, centered, total, out), ("buf4",))
    (kernel,) = schedule(program)
    assert kernel.writes == ("buf4",)
    _check(backend, program, array, loops=3)
