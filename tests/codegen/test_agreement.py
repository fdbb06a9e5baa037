"""The LLVM backend against the interpreter, op by op, on the domains and to the tolerances
of [Note: where backends must agree] (ir/agreement.py): the table is a promise, and this
holds LLVM to it. Composite ops LLVM does not implement run as their defaults here."""

import functools
import itertools

import numpy as np
import pytest
from codegen_testing import BACKEND, compile_unary, input_buffer, load, unary_program

import minitorch.dtype as dt
from codegen.llvm.kernel import generate_kernel
from codegen.llvm.ops import LLVMOps
from ir.agreement import MATH_DOMAINS, MATH_ULPS
from ir.indexing import Var, index_vars
from ir.interpreter import disagreements, run_kernel, run_reference
from ir.nodes import ComputedBuffer, Layout, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import CORE_OPS, OpsHandler, ops
from ir.scheduler import FusedKernel, Loop, _stride, schedule
from minitorch.errors import CompileError

N = 1 << 14
RNG = np.random.default_rng(11)
DTYPES = [np.float32, np.float64]
UNARY = ["sin", "cos", "exp", "log", "erf", "abs", "neg", "square", "reciprocal", "sqrt",
         "rsqrt", "relu", "sigmoid", "log1p", "expm1", "tanh"]  # fmt: skip
BINARY = ["add", "mul", "div", "sub", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge"]
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, 89.0, -89.0,
            700.0, -700.0, 1e-40, -1e-40, 5e-324, 1e300, -1e300]  # fmt: skip


def test_llvm_implements_every_core_op():
    for name in CORE_OPS:
        assert getattr(LLVMOps, name, None) not in (None, getattr(OpsHandler, name, None)), name


def domain_samples(name: str, dtype: type) -> np.ndarray:
    """Special values, magnitudes spread log-uniformly over the op's whole domain, and values
    spread uniformly over [-1000, 1000] (where exp and tanh change most)."""
    finfo = np.finfo(dtype)
    top = min(MATH_DOMAINS.get(name, np.inf), float(finfo.max))
    low = np.log(float(finfo.smallest_subnormal))
    magnitudes = np.exp(RNG.uniform(low, np.log(top), N // 2)) * RNG.choice([-1, 1], N // 2)
    with np.errstate(over="ignore"):
        specials = np.array(SPECIALS).astype(dtype)
    specials = specials[~(np.abs(specials) > top)]
    spread = RNG.uniform(-1000, 1000, N)
    return np.concatenate([specials, magnitudes, spread]).astype(dtype)[:N]


@functools.cache
def compiled(op, dtype: type):
    return compile_unary(op, dtype, N)


def interpreted(op, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        (out,) = run_reference(unary_program(op, x), None, [x])
    return out


def assert_agrees(got: np.ndarray, want: np.ndarray, ulps, *inputs: np.ndarray) -> None:
    bad = disagreements(got, want, ulps)
    assert not bad.any(), [x[bad][:4] for x in (*inputs, got, want)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_ops_agree_on_their_domain(name, dtype):
    op = getattr(ops, name)
    x = domain_samples(name, dtype)
    assert_agrees(compiled(op, dtype)(x), interpreted(op, x), MATH_ULPS.get(name, 0), x)


def binary_program(op, a: np.ndarray, b: np.ndarray) -> LoweredProgram:
    ba, bb = input_buffer("a", a), input_buffer("b", b)
    dtype = dt.bool_ if op in (ops.eq, ops.ne, ops.lt, ops.le, ops.gt, ops.ge) else ba.layout.dtype
    body = lambda index: op(load(ba, index), load(bb, index))  # noqa: E731
    out = ComputedBuffer("buf0", Layout.contiguous(a.shape, dtype), Pointwise(dtype, a.shape, body))
    return LoweredProgram((ba, bb), (out,), ("buf0",))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_ops_agree_exactly(name, dtype):
    with np.errstate(over="ignore"):
        specials = np.array(SPECIALS).astype(dtype)
    pairs = np.array(list(itertools.product(specials, repeat=2)), dtype)
    a = np.concatenate([pairs[:, 0], RNG.standard_normal(1000).astype(dtype)])
    b = np.concatenate([pairs[:, 1], RNG.standard_normal(1000).astype(dtype)])
    program = binary_program(getattr(ops, name), a, b)
    with np.errstate(all="ignore"):
        (want,) = run_reference(program, None, [a, b])
    memory = {"a": a, "b": b, "buf0": np.empty_like(want)}
    (kernel,) = schedule(program)
    BACKEND.compile_kernel(kernel, program.dtypes())(memory)
    got = memory["buf0"]
    if name in ("maximum", "minimum"):  # the one documented difference: the sign of a zero
        got, want = got + dtype(0), want + dtype(0)  # -0.0 + 0.0 = 0.0
    assert_agrees(got, want, 0, a, b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("exponent", [2, 3, -1, 5, 13, -7, 64, 0.5, -0.5, 2.5, 1 / 3, -1.5, 100])
def test_pow_agrees_to_its_bound(exponent, dtype):
    x = domain_samples("pow", dtype)
    op = lambda a: ops.pow(a, exponent)  # noqa: E731
    with np.errstate(all="ignore"):
        if dtype == np.float32:
            ulps = MATH_ULPS["pow"]
        elif float(exponent).is_integer() and abs(exponent) <= 64:
            ulps = MATH_ULPS["pow"] + abs(exponent)
        else:
            ulps = MATH_ULPS["pow"] + 2 * np.abs(exponent * np.log(np.abs(x.astype(np.float64))))
    assert_agrees(compile_unary(op, dtype, N)(x), interpreted(op, x), ulps, x)


# -- reductions --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.bool_])
@pytest.mark.parametrize("kind", ["max", "min", "sum"])
def test_reductions_agree(kind, dtype):
    if dtype == np.bool_ and kind == "sum":
        pytest.skip("a sum of bools is an int64: not an LLVM dtype yet")
    x = RNG.standard_normal((6, 300)) > 0.9 if dtype == np.bool_ else RNG.standard_normal((6, 300))
    x = x.astype(dtype)
    if dtype != np.bool_:
        x[2, 17] = np.nan
    bx = input_buffer("x", x)
    data = Reduction(bx.layout.dtype, (6,), (300,), kind, lambda i, r: load(bx, (i[0], r[0])))
    node = ComputedBuffer("buf0", Layout.contiguous((6,), bx.layout.dtype), data)
    program = LoweredProgram((bx,), (node,), ("buf0",))
    (kernel,) = schedule(program)
    memory = {"x": x, "buf0": np.zeros(6, dtype)}
    BACKEND.compile_kernel(kernel, program.dtypes())(memory)
    (want,) = run_reference(program, [kernel], [x])
    # A sum may add in any order: (n - 1) eps sum|term| ([Note: where backends must agree]).
    if kind == "sum":
        bound = 299 * np.finfo(dtype).eps * np.abs(x).sum(axis=1)
        assert np.isnan(memory["buf0"][2]) and np.isnan(want[2])
        keep = [0, 1, 3, 4, 5]
        assert (np.abs(memory["buf0"][keep] - want[keep]) <= bound[keep]).all()
    else:
        assert_agrees(memory["buf0"], want, 0, x)


# -- size symbols are the names the kernel was given -------------------------------------------


def test_stride_treats_only_the_given_sizes_as_sizes():
    (i0,) = index_vars("i", 1)
    s0, scale = Var("s0"), Var("scale")
    assert _stride(i0 % s0, "i0", sizes=("s0",)) == 1  # s0 large: no wrap-around
    assert _stride(i0 * 3 + scale, "i0", sizes=("s0",)) == 3
    # A name that merely starts with "s" is a loop variable like any other (at 0), not a size.
    assert _stride(i0 * Var("s_buf") + i0, "i0", sizes=("s0",)) == 1


def test_sizes_must_be_size_symbols():
    x = np.zeros(4, np.float32)
    program = unary_program(ops.sin, x)
    (kernel,) = schedule(program)
    with pytest.raises(CompileError, match="not size symbols"):
        generate_kernel(kernel, program.dtypes(), sizes=("scale",))
    with pytest.raises(CompileError, match="not size symbols"):
        BACKEND.compile_kernel(kernel, program.dtypes(), ("s0", "s_buf"))


def test_a_kernel_with_sizes_agrees_with_the_interpreter_given_them():
    s0 = Var("s0")
    layout = Layout((s0, 3), (3, 1), dt.float64)
    body = lambda i: ops.exp(ops.load("x", (s0 - 1 - i[0]) * 3 + i[1]))  # noqa: E731
    node = ComputedBuffer("buf0", layout, Pointwise(dt.float64, (s0, 3), body))
    kernel = FusedKernel("kernel0", (Loop((), (node,)),), (s0, 3), (), ("x",), ("buf0",))
    dtypes = {"x": dt.float64, "buf0": dt.float64}
    for n in (2, 7):
        x = RNG.standard_normal((n, 3))
        got, want = {"x": x, "buf0": np.zeros((n, 3))}, {"x": x, "buf0": np.zeros((n, 3))}
        BACKEND.compile_kernel(kernel, dtypes, ("s0",))(got, {"s0": n})
        run_kernel(kernel, want, {"s0": n})
        assert_agrees(got["buf0"], want["buf0"], MATH_ULPS["exp"], x)
