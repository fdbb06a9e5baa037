"""Our polynomial sin, cos, exp, log and pow, compiled and vectorized, against numpy.

sin and cos have two paths ([Note: sin and cos over the whole float range] in
codegen/llvm/trig.py): the tests cover the fast one (|x| <= 2^30), the exact one (up to the
largest float), kernels that meet both at once, and the scalar loops as well as the vector ones.

Errors are measured in ulp against a long-double reference; the bounds below are what the
functions achieve with a little margin (measured maxima are in the comments).
"""

import functools

import numpy as np
import pytest
from codegen_testing import compile_unary, ulp_error

from ir.ops_handler import ops

pytestmark = pytest.mark.extras("exact_trig")

N = 1 << 16
RNG = np.random.default_rng(20240601)


@functools.cache
def compiled(name: str, dtype: type):
    return compile_unary(getattr(ops, name), dtype, N)


@functools.cache
def compiled_pow(exponent: float, dtype: type):
    return compile_unary(lambda x: ops.pow(x, exponent), dtype, N)


def uniform(low: float, high: float, dtype: type) -> np.ndarray:
    return RNG.uniform(low, high, N).astype(dtype)


def log_uniform(low: float, high: float, dtype: type) -> np.ndarray:
    return np.exp(RNG.uniform(np.log(low), np.log(high), N)).astype(dtype)


DTYPES = [np.float32, np.float64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sin", "cos"])
@pytest.mark.parametrize("bound", [1.0, 10.0, 1e3, 1e6, 1e9, 1e15, 1e20])
def test_sin_cos_accuracy(name, dtype, bound):
    # measured: <= 1.5 ulp for every bound, float32 and float64
    x = uniform(-bound, bound, dtype)
    assert ulp_error(compiled(name, dtype)(x), x, getattr(np, name)) <= 2.0


def huge(dtype: type, n: int = N) -> np.ndarray:
    """Magnitudes spread evenly over the exponents from 2^30 (the slow path) to the largest
    float, with random signs."""
    top = np.log2(float(np.finfo(dtype).max))
    x = np.exp2(RNG.uniform(30, top, n)) * np.where(RNG.random(n) < 0.5, -1, 1)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_accuracy_over_the_whole_float_range(name, dtype):
    # measured: float32 <= 0.5 ulp (computed in double), float64 <= 1.43 ulp
    x = huge(dtype)
    assert ulp_error(compiled(name, dtype)(x), x, getattr(np, name)) <= 2.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_near_multiples_of_half_pi(name, dtype):
    # Where the result is tiny, any error in the reduction x - j*pi/2 shows in full.
    j = RNG.integers(-(10**6), 10**6, N)
    x = (j * (np.pi / 2)).astype(dtype)
    x = np.nextafter(x, np.where(RNG.random(N) < 0.5, np.inf, -np.inf).astype(dtype))
    assert ulp_error(compiled(name, dtype)(x), x, getattr(np, name)) <= 2.0


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_at_the_double_closest_to_a_multiple_of_half_pi(name):
    # x = 6381956970095103 * 2^797 is within ~2^-61 of a multiple of pi/2: the hardest
    # reduction of all doubles (Muller, Elementary Functions). Its neighbours too.
    x = np.array([6381956970095103 * 2.0**797], np.float64)
    x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, 0), -x])
    assert ulp_error(compiled(name, np.float64)(x), x, getattr(np, name)) <= 2.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_of_huge_values_are_numbers_as_in_numpy(name, dtype):
    # These used to be NaN; numpy gives a number for every finite x.
    finfo = np.finfo(dtype)
    values = [1e15, 3e17, -1e20, 1e30, 3.4e38, -3.4e38, 2.0**30, 2.0**30 * (1 + finfo.eps)]
    if dtype == np.float64:
        values += [1.7e308, -1e300, float(finfo.max)]
    x = np.array(values, dtype)
    got = compiled(name, dtype)(x)
    assert np.isfinite(got).all()
    assert ulp_error(got, x, getattr(np, name)) <= 2.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_with_ordinary_and_huge_values_in_one_kernel(name, dtype):
    # One huge value sends the whole kernel through its exact body again; the vector variants
    # of the slow path then keep the fast path's answers in the lanes that are not huge.
    x = uniform(-10, 10, dtype)
    x[::7] = huge(dtype, len(x[::7]))
    x[3] = np.nan
    x[5] = np.inf
    with np.errstate(invalid="ignore"):
        assert ulp_error(compiled(name, dtype)(x), x, getattr(np, name)) <= 2.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_in_a_loop_too_short_to_vectorize(name, dtype):
    # Three elements: the scalar loop runs, with the scalar slow path.
    short = compile_unary(getattr(ops, name), dtype, 3)
    for x in ([0.5, 1e20, -3.0], [np.inf, 2.0**31, np.nan], [1.0, 2.0, 3.0]):
        x = np.array(x, dtype)
        got = short(x)
        with np.errstate(invalid="ignore"):
            assert ulp_error(got, x, getattr(np, name)) <= 2.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("where", ["small", "full", "subnormal results"])
def test_exp_accuracy(dtype, where):
    # measured: <= 0.91 ulp everywhere
    top = float(np.log(np.finfo(dtype).max))
    low, high = {"small": (-1, 1), "full": (-top, top), "subnormal results": (-top - 16, -top)}[
        where
    ]
    x = uniform(low, high, dtype)
    assert ulp_error(compiled("exp", dtype)(x), x, np.exp) <= 1.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("where", ["near one", "wide", "tiny normals", "subnormals"])
def test_log_accuracy(dtype, where):
    # measured: float32 <= 0.88 ulp, float64 <= 1.2 ulp
    tiny = float(np.finfo(dtype).tiny)
    x = {
        "near one": lambda: uniform(0.999, 1.001, dtype),
        "wide": lambda: log_uniform(1e-30, 1e30, dtype),
        "tiny normals": lambda: log_uniform(tiny, 1.0, dtype),
        "subnormals": lambda: (RNG.uniform(0, 1, N) * tiny).astype(dtype),
    }[where]()
    assert ulp_error(compiled("log", dtype)(x), x, np.log) <= 1.5


SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0, 2.0, 1e-300, -1e-300, 1e300, -1e300]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["sin", "cos", "exp", "log"])
def test_special_values_match_numpy(name, dtype):
    tiny_subnormal = np.finfo(dtype).smallest_subnormal
    with np.errstate(all="ignore"):
        x = np.array(SPECIALS + [tiny_subnormal, -tiny_subnormal], dtype)
        expected = getattr(np, name)(x)
    got = compiled(name, dtype)(x)
    # Same class (nan, +-inf, +-0) and sign as numpy; finite values within 1 ulp.
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(expected[~np.isnan(got)]))
    finite = np.isfinite(expected)
    assert np.array_equal(got[~finite], expected[~finite], equal_nan=True)
    assert np.allclose(got[finite], expected[finite], rtol=2 * np.finfo(dtype).eps, atol=0)


def test_exp_overflows_to_inf_and_underflows_to_zero():
    x = np.array([88.8, 1000.0, -104.0, -1000.0], np.float32)
    assert compiled("exp", np.float32)(x).tolist() == [np.inf, np.inf, 0.0, 0.0]
    x = np.array([709.8, 1e5, -745.2, -1e5])
    assert compiled("exp", np.float64)(x).tolist() == [np.inf, np.inf, 0.0, 0.0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_exp_across_the_edge_where_it_underflows(dtype):
    # Below the edge the 0 is selected, not computed (mathlib.py's _emit_exp): both sides of
    # it, and -inf, agree with numpy; the subnormal results above it within 2 of their ulps.
    edge = float(np.log(np.finfo(dtype).smallest_subnormal))
    x = np.concatenate([np.linspace(edge - 3, edge + 3, 20001), [-np.inf, -1e30]]).astype(dtype)
    got, expected = compiled("exp", dtype)(x), np.exp(x)
    assert np.array_equal(got == 0, expected == 0)
    spacing = np.finfo(dtype).smallest_subnormal
    assert np.max(np.abs(got.astype(np.float64) - expected) / spacing) <= 2.0


POW_INPUTS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 3.0, -3.0, 1e-3, 1e3, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "exponent", [0, 1, 2, 3, -1, -2, 5, 0.5, -0.5, 2.5, -1.5, 1 / 3, 65, -65, 100, 2.0]
)
def test_pow_matches_numpy(exponent, dtype):
    x = np.concatenate([np.array(POW_INPUTS, dtype), uniform(-10, 10, dtype)[: -len(POW_INPUTS)]])
    with np.errstate(all="ignore"):
        expected = np.power(x, np.asarray(exponent, dtype))
    got = compiled_pow(exponent, dtype)(x)
    numbers = ~np.isnan(expected)
    assert np.array_equal(np.isnan(got), ~numbers)
    assert np.array_equal(np.signbit(got[numbers]), np.signbit(expected[numbers]))  # -0.0 too
    ends = np.isinf(expected) | (expected == 0)
    assert np.array_equal(got[ends], expected[ends])
    # float32 is computed in float64 and rounded once: ~1 ulp. In float64, repeated squaring
    # adds up to ~|n| roundings, and exp(c*log x) is off by up to ~|c*log x| ulp: log's error
    # (~1 ulp), times c, lands in exp's argument.
    rest = numbers & ~ends
    finfo = np.finfo(dtype)
    ulps = 2.0
    if dtype == np.float64 and exponent == int(exponent) and abs(exponent) <= 64:
        ulps += abs(exponent)
    elif dtype == np.float64:
        ulps += 2 * np.abs(exponent * np.log(np.abs(x[rest])))
    error = np.abs(got[rest].astype(np.float64) - expected[rest])
    assert (error <= ulps * finfo.eps * np.abs(expected[rest]) + finfo.smallest_subnormal).all()


def test_small_integer_powers_are_exact_multiplications():
    x = uniform(-100, 100, np.float32)
    assert np.array_equal(compiled_pow(2, np.float32)(x), x * x)
    assert np.array_equal(compiled_pow(-1, np.float32)(x), np.float32(1) / x)
