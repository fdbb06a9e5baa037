"""LLVM kernels of comparisons, where, maximum/minimum, abs and bool buffers, against the
reference interpreter (ir/interpreter.py) and numpy, NaN included."""

import numpy as np
import pytest
from codegen_testing import BACKEND, computed, input_buffer, load, run_both

from ir.nodes import LoweredProgram
from ir.ops_handler import ops
from ir.scheduler import schedule
from minitorch.dtype import bool_, float32, float64

RNG = np.random.default_rng(5)
DTYPES = {np.float32: float32, np.float64: float64}


def with_specials(n: int, dtype: type) -> np.ndarray:
    """Whole numbers (so that some pairs tie), NaN, +-inf, +-0."""
    x = np.round(RNG.uniform(-3, 3, n)).astype(dtype)
    x[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, np.nan]
    return RNG.permutation(x)


def binary_program(op, a: np.ndarray, b: np.ndarray, out_dtype) -> LoweredProgram:
    x, y = input_buffer("x", a), input_buffer("y", b)
    body = lambda index: op(load(x, index), load(y, index))  # noqa: E731
    return LoweredProgram((x, y), (computed("buf0", out_dtype, a.shape, body),), ("buf0",))


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize(
    "name, reference",
    [
        ("eq", np.equal),
        ("ne", np.not_equal),
        ("lt", np.less),
        ("le", np.less_equal),
    ],
)
def test_comparisons(name, reference, dtype):
    a, b = with_specials(1000, dtype), with_specials(1000, dtype)
    (got,), (expected,) = run_both(binary_program(getattr(ops, name), a, b, bool_), [a, b])
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, reference(a, b))


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("name, reference", [("maximum", np.maximum), ("minimum", np.minimum)])
def test_maximum_minimum_propagate_nan(name, reference, dtype):
    a, b = with_specials(1000, dtype), with_specials(1000, dtype)
    (got,), (expected,) = run_both(binary_program(getattr(ops, name), a, b, DTYPES[dtype]), [a, b])
    np.testing.assert_array_equal(got, expected)  # equal_nan, and -0.0 == 0.0
    np.testing.assert_array_equal(got, reference(a, b))


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_abs(dtype):
    a = with_specials(100, dtype)
    x = input_buffer("x", a)
    program = LoweredProgram(
        (x,), (computed("buf0", DTYPES[dtype], a.shape, lambda i: ops.abs(load(x, i))),), ("buf0",)
    )
    (got,), (expected,) = run_both(program, [a])
    np.testing.assert_array_equal(got, np.abs(a))
    assert not np.signbit(got).any()  # abs(-0.0) is +0.0


def test_where_with_a_bool_input_and_a_computed_condition():
    values = RNG.uniform(-1, 1, 257).astype(np.float32)
    mask = RNG.random(257) < 0.5
    x, m = input_buffer("x", values), input_buffer("mask", mask)
    zero = lambda: ops.constant(0.0, float32)  # noqa: E731
    positive = computed("buf0", bool_, (257,), lambda i: ops.lt(zero(), load(x, i)))
    picked = computed(
        "buf1",
        float32,
        (257,),
        lambda i: ops.where(
            load(m, i), load(x, i), ops.where(load(positive, i), zero(), load(x, i))
        ),
    )
    program = LoweredProgram((x, m), (positive, picked), ("buf0", "buf1"))
    (got_mask, got), (expected_mask, expected) = run_both(program, [values, mask])
    np.testing.assert_array_equal(got_mask, values > 0)
    np.testing.assert_array_equal(got, np.where(mask, values, np.where(values > 0, 0.0, values)))
    np.testing.assert_array_equal(got, expected)


def test_bools_convert_to_floats_and_back():
    mask = RNG.random(100) < 0.5
    floats = with_specials(100, np.float64)
    m, f = input_buffer("mask", mask), input_buffer("f", floats)
    as_float = computed("buf0", float64, (100,), lambda i: ops.to_dtype(load(m, i), float64))
    as_bool = computed("buf1", bool_, (100,), lambda i: ops.to_dtype(load(f, i), bool_))
    both = computed("buf2", bool_, (100,), lambda i: ops.maximum(load(m, i), load(as_bool, i)))
    program = LoweredProgram((m, f), (as_float, as_bool, both), ("buf0", "buf1", "buf2"))
    (got_float, got_bool, got_or), expected = run_both(program, [mask, floats])
    np.testing.assert_array_equal(got_float, mask.astype(np.float64))
    np.testing.assert_array_equal(got_bool, floats.astype(bool))  # NaN is True, as in numpy
    np.testing.assert_array_equal(got_or, mask | floats.astype(bool))
    for got, want in zip((got_float, got_bool, got_or), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_selection_and_activations_vectorize():
    a = np.zeros(4096, np.float32)
    x, y = input_buffer("x", a), input_buffer("y", a)

    def body(i):
        less = ops.lt(load(x, i), load(y, i))
        picked = ops.where(less, ops.maximum(load(x, i), load(y, i)), ops.abs(load(y, i)))
        return ops.add(ops.tanh(picked), ops.mul(ops.sigmoid(load(x, i)), ops.erf(load(y, i))))

    program = LoweredProgram((x, y), (computed("buf0", float32, (4096,), body),), ("buf0",))
    (kernel,) = schedule(program)
    compiled = BACKEND.compile_kernel(kernel, program.dtypes())
    assert "x float>" in compiled.optimized_source  # vector registers, e.g. <8 x float>
    assert "@minitorch." not in compiled.optimized_source  # tanh, sigmoid, erf: all inlined
    assert "@llvm.exp.f" not in compiled.optimized_source  # with our own exp
