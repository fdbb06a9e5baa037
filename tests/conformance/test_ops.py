"""Every loop-IR op, on every dtype the backend claims, on the edge cases of each dtype.

One kernel per (op, dtype): its input holds every special value of the dtype (±0, ±inf, NaN,
subnormals, the extremes, the edges of exp's range, large arguments) and a few hundred
ordinary ones; a binary op gets every pair of special values. The answer must agree with the
reference interpreter on the op's domain and to its tolerance: [Note: where backends must
agree] in ir/ops_handler.py, whose MATH_DOMAINS and MATH_ULPS this reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from codegen.backend import Backend
from ir.agreement import MATH_DOMAINS, MATH_ULPS
from ir.indexing import Const, Var
from ir.nodes import LoweredProgram, Pointwise
from ir.ops_handler import COMPOSITE_OPS, CORE_OPS, ops
from minitorch.dtype import get_dtype
from minitorch.errors import IndexOutOfRangeError
from tests.conformance.kernels import (
    assert_agrees,
    computed,
    input_buffer,
    load,
    program_of,
    random_values,
    run_backend,
    run_reference,
    special_values,
)

# Every op a loop body may call ([Note: the loop-IR ops]).
LOOP_IR_OPS = sorted(CORE_OPS + COMPOSITE_OPS)

FLOATS = frozenset({"float32", "float64"})
INTS = frozenset({"int32", "int64"})
ALL = FLOATS | INTS | {"bool"}


@dataclass(frozen=True)
class OpCase:
    """How an op is graded: which kernel tries it, on which dtypes (if the backend claims them).
    Its domain and tolerance are the note's: MATH_DOMAINS and MATH_ULPS."""

    kind: str  # 'unary', 'binary', 'compare', 'where', 'pow', ...: a key of BUILDERS
    dtypes: frozenset[str]
    signed_zero: bool = True  # whether -0.0 and +0.0 answers must match too


OP_CASES = {
    "load": OpCase("load", ALL),
    "constant": OpCase("constant", ALL),
    "constant_like": OpCase("constant_like", ALL),
    "to_dtype": OpCase("to_dtype", ALL),  # graded by test_to_dtype, for every pair of dtypes
    "add": OpCase("binary", FLOATS | INTS),
    "sub": OpCase("binary", FLOATS | INTS),
    "mul": OpCase("binary", FLOATS | INTS),
    "div": OpCase("binary", FLOATS),
    "neg": OpCase("unary", FLOATS | INTS),
    "abs": OpCase("unary", FLOATS | INTS),
    "square": OpCase("unary", FLOATS | INTS),
    "relu": OpCase("unary", FLOATS | INTS),
    "reciprocal": OpCase("unary", FLOATS),
    "sqrt": OpCase("unary", FLOATS),
    "rsqrt": OpCase("unary", FLOATS),
    "pow": OpCase("pow", FLOATS | INTS),  # tolerance per exponent and element: pow_ulps
    "sin": OpCase("unary", FLOATS),
    "cos": OpCase("unary", FLOATS),
    "exp": OpCase("unary", FLOATS),
    "log": OpCase("unary", FLOATS),
    "erf": OpCase("unary", FLOATS),
    "sigmoid": OpCase("unary", FLOATS),
    "tanh": OpCase("unary", FLOATS),
    "log1p": OpCase("unary", FLOATS),
    "expm1": OpCase("unary", FLOATS),
    # NOTE: which zero max(-0.0, +0.0) gives is left open: numpy's maximum goes by argument
    # order (max(-0.0, 0.0) is 0.0, max(0.0, -0.0) is -0.0), IEEE 754-2019's (llvm.maximum)
    # always gives +0.0, and its minimum -0.0.
    "maximum": OpCase("binary", ALL, signed_zero=False),
    "minimum": OpCase("binary", ALL, signed_zero=False),
    "eq": OpCase("compare", ALL),
    "ne": OpCase("compare", ALL),
    "lt": OpCase("compare", ALL),
    "le": OpCase("compare", ALL),
    "gt": OpCase("compare", ALL),
    "ge": OpCase("compare", ALL),
    "where": OpCase("where", ALL),
    "index_expr": OpCase("index_expr", INTS),
    "indirect_indexing": OpCase("indirect_indexing", INTS),  # the dtype of the indices
    "rand": OpCase("rand", frozenset({"int64"})),  # seed and counter; a float64 result
}

# pow's exponent is a number fixed in the kernel; each is tried on every input.
EXPONENTS = (0, 1, 2, 3, -1, -2, 7, -3, 0.5, -0.5, 1.5, 2.5, 1 / 3, 2.0, 64, 65, 100)
# An integer's exponent is an integer n >= 0 (PyTorch refuses int ** -1); the powers wrap
# around, as numpy's do, so every order of multiplying gives the same bits.
INT_EXPONENTS = (0, 1, 2, 3, 7, 2.0, 64, 65, 100)


def exponents(dtype: np.dtype) -> tuple[float | int, ...]:
    return INT_EXPONENTS if dtype.kind == "i" else EXPONENTS


RANDOM_COUNT = 256  # ordinary values per kernel, besides the special ones


def pow_ulps(x: np.ndarray, exponent: float) -> float | np.ndarray:
    """The tolerance of x ** c, per element ([Note: where backends must agree]): MATH_ULPS in
    float32; in float64 |c| more for an integral |c| <= 64 (|c| multiplications), and
    2 |c ln|x|| more for any other c (what exp(c log x) carries)."""
    base = MATH_ULPS["pow"]
    if x.dtype == np.float32:
        return base
    if float(exponent).is_integer() and abs(exponent) <= 64:
        return base + abs(exponent)
    with np.errstate(divide="ignore", invalid="ignore"):
        return base + 2 * np.abs(exponent * np.log(np.abs(x.astype(np.float64))))


def op_cases(backend: Backend) -> list[tuple[str, str]]:
    """(op, dtype) for every op but to_dtype, on every dtype the backend claims that it takes."""
    return [
        (op, dtype)
        for op in LOOP_IR_OPS
        if op != "to_dtype"
        for dtype in sorted(OP_CASES[op].dtypes & backend.dtypes)
    ]


def test_every_loop_ir_op_is_graded():
    assert sorted(OP_CASES) == LOOP_IR_OPS


@pytest.mark.backend_cases("op, dtype", op_cases)
def test_op(backend: Backend, op: str, dtype: str):
    case = OP_CASES[op]
    domain = MATH_DOMAINS.get(op, math.inf)
    program, inputs, shown = BUILDERS[case.kind](op, np.dtype(dtype), domain)
    expected = run_reference(program, inputs)
    got = run_backend(backend, program, inputs, expected)
    if case.kind == "pow":
        for k, exponent in enumerate(exponents(inputs["x"].dtype)):
            name = f"buf{k}"
            ulps = pow_ulps(inputs["x"], exponent)
            assert_agrees(
                {name: got[name]}, {name: expected[name]}, ulps, {**shown, "exponent": exponent}
            )
        return
    if not case.signed_zero:
        got = {name: _unsigned_zero(value) for name, value in got.items()}
        expected = {name: _unsigned_zero(value) for name, value in expected.items()}
    assert_agrees(got, expected, MATH_ULPS.get(op, 0), shown)


def to_dtype_cases(backend: Backend) -> list[tuple[str, str]]:
    claimed = sorted(OP_CASES["to_dtype"].dtypes & backend.dtypes)
    return [(source, target) for source in claimed for target in claimed]


@pytest.mark.backend_cases("source, target", to_dtype_cases)
def test_to_dtype(backend: Backend, source: str, target: str):
    x = _values(np.dtype(source))
    if np.dtype(source).kind == "f" and np.dtype(target).kind == "i":
        info = np.iinfo(target)  # a float out of the int's range has no defined conversion
        x = x[np.isfinite(x) & (x > info.min) & (x < info.max)]
    program, inputs = _pointwise(
        [x], get_dtype(target), lambda a: ops.to_dtype(a, get_dtype(target))
    )
    expected = run_reference(program, inputs)
    got = run_backend(backend, program, inputs, expected)
    assert_agrees(got, expected, 0, {"x": x})


# ---- the kernels -------------------------------------------------------------------------
# BUILDERS[kind](op, dtype, domain) -> (program, its inputs by name, the inputs to show for each
# output element when it is wrong)


def _values(dtype: np.dtype, domain: float = math.inf) -> np.ndarray:
    """The special values of `dtype` and RANDOM_COUNT ordinary ones, within the domain."""
    x = np.concatenate([special_values(dtype), random_values(dtype, RANDOM_COUNT, seed=1)])
    if dtype.kind == "f":
        x = x[~(np.abs(x) > domain) | ~np.isfinite(x)]
    return x


def _pairs(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of special values, then pairs of ordinary values, as two flat arrays."""
    special = special_values(dtype)
    x, y = (a.ravel() for a in np.meshgrid(special, special, indexing="ij"))
    return (
        np.concatenate([x, random_values(dtype, RANDOM_COUNT, seed=2)]),
        np.concatenate([y, random_values(dtype, RANDOM_COUNT, seed=3)]),
    )


def _pointwise(arrays, dtype, body) -> tuple[LoweredProgram, dict[str, np.ndarray]]:
    """buf0[i] = body(x[i], y[i], ...) over 1-d inputs, named x, y, z in order."""
    names = ["x", "y", "z"][: len(arrays)]
    buffers = [input_buffer(name, a) for name, a in zip(names, arrays, strict=True)]

    def inner_fn(index):
        return body(*(load(b, index) for b in buffers))

    out = computed("buf0", Pointwise(dtype, arrays[0].shape, inner_fn))
    return program_of(buffers, [out]), dict(zip(names, arrays, strict=True))


def _load(op, dtype, domain):
    x = _values(dtype)
    return (*_pointwise([x], get_dtype(dtype.name), lambda a: a), {"x": x})


def _constants(dtype: np.dtype) -> list:
    """The Python numbers a constant is tried with: the dtype's special values, and floats
    that round (in float32, 1e-40 to a subnormal and -2.5e-310 to -0.0)."""
    values = special_values(dtype).tolist()
    return values + [0.1, 1 / 3, 1e-40, -2.5e-310] if dtype.kind == "f" else values


def _constant(op, dtype, domain):
    buffers = [
        computed(f"buf{k}", Pointwise(get_dtype(dtype.name), (3,),
                                      lambda index, v=v: ops.constant(v, get_dtype(dtype.name))))
        for k, v in enumerate(_constants(dtype))
    ]  # fmt: skip
    return program_of([], buffers), {}, {}


def _constant_like(op, dtype, domain):
    """buf_k[i] = a constant of x's dtype, next to x[i] (which it does not otherwise read)."""
    x = _values(dtype)
    source = input_buffer("x", x)
    buffers = [
        computed(f"buf{k}", Pointwise(get_dtype(dtype.name), x.shape,
                                      lambda i, v=v: ops.constant_like(v, load(source, i))))
        for k, v in enumerate(_constants(dtype))
    ]  # fmt: skip
    return program_of([source], buffers), {"x": x}, {}


def _unary(op, dtype, domain):
    x = _values(dtype, domain)
    return (*_pointwise([x], get_dtype(dtype.name), getattr(ops, op)), {"x": x})


def _binary(op, dtype, domain):
    x, y = _pairs(dtype)
    return (*_pointwise([x, y], get_dtype(dtype.name), getattr(ops, op)), {"x": x, "y": y})


def _compare(op, dtype, domain):
    x, y = _pairs(dtype)
    return (*_pointwise([x, y], get_dtype("bool"), getattr(ops, op)), {"x": x, "y": y})


def _where(op, dtype, domain):
    a, b = _pairs(dtype)
    condition = random_values(np.dtype(bool), a.size, seed=4)
    program, inputs = _pointwise([condition, a, b], get_dtype(dtype.name), ops.where)
    return program, inputs, {"condition": condition, "a": a, "b": b}


def _pow(op, dtype, domain):
    x = _values(dtype, domain)
    base = input_buffer("x", x)
    buffers = [
        computed(f"buf{k}", Pointwise(get_dtype(dtype.name), x.shape,
                                      lambda index, e=e: ops.pow(load(base, index), e)))
        for k, e in enumerate(exponents(dtype))
    ]  # fmt: skip
    return program_of([base], buffers), {"x": x}, {"x": x}


def _index_expr(op, dtype, domain):
    """Index expressions as values: affine (negative too), floor division and modulo."""
    i0 = Var("i0")
    bodies = [3 * i0 - 250, i0 // 7 + i0 % 5, Const(-(2**31))]
    buffers = [
        computed(f"buf{k}", Pointwise(get_dtype(dtype.name), (200,),
                                      lambda index, e=e: ops.index_expr(e, get_dtype(dtype.name))))
        for k, e in enumerate(bodies)
    ]  # fmt: skip
    return program_of([], buffers), {}, {}


def _indirect_indexing(op, dtype, domain):
    """buf0[i] = x[idx[i]] with idx in [-n, n) wrapped; buf1[i, j] = x2[idx2[i], j]."""
    rng = np.random.default_rng(5)
    x = random_values(np.dtype("float32"), 37, seed=6)
    idx = np.concatenate([[0, 36, -1, -37], rng.integers(-37, 37, 60)]).astype(dtype)
    x2 = random_values(np.dtype("float32"), 37 * 5, seed=7).reshape(37, 5)
    idx2 = np.concatenate([[0, 36], rng.integers(0, 37, 30)]).astype(dtype)
    sources = [input_buffer(n, a) for n, a in (("x", x), ("idx", idx), ("x2", x2), ("idx2", idx2))]
    source_x, source_idx, source_x2, source_idx2 = sources

    def wrapped(index):
        (i0,) = index
        return load(source_x, (ops.indirect_indexing(load(source_idx, (i0,)), 37, True),))

    def rows(index):
        i0, i1 = index
        row = ops.indirect_indexing(load(source_idx2, (i0,)), 37, False)
        return load(source_x2, (row, i1))

    buffers = [
        computed("buf0", Pointwise(get_dtype("float32"), idx.shape, wrapped)),
        computed("buf1", Pointwise(get_dtype("float32"), (idx2.size, 5), rows)),
    ]
    inputs = {"x": x, "idx": idx, "x2": x2, "idx2": idx2}
    return program_of(sources, buffers), inputs, {}


def _rand(op, dtype, domain):
    seed, counter = _pairs(dtype)
    return (
        *_pointwise([seed, counter], get_dtype("float64"), ops.rand),
        {"seed": seed, "counter": counter},
    )


BUILDERS = {
    "load": _load,
    "constant": _constant,
    "constant_like": _constant_like,
    "unary": _unary,
    "binary": _binary,
    "compare": _compare,
    "where": _where,
    "pow": _pow,
    "index_expr": _index_expr,
    "indirect_indexing": _indirect_indexing,
    "rand": _rand,
}


def _unsigned_zero(a: np.ndarray) -> np.ndarray:
    return a + 0 if a.dtype.kind == "f" else a  # -0.0 + 0 is +0.0


def _bad_indices(backend: Backend) -> list[tuple[int, bool]]:
    """(an index out of a dim of 37, whether negative ones wrap), if the backend loads int64."""
    return [(37, False), (-1, False), (-38, True)] if "int64" in backend.dtypes else []


@pytest.mark.backend_cases("bad, wrap", _bad_indices)
def test_an_index_out_of_its_dim_raises(backend: Backend, bad: int, wrap: bool):
    """[Note: indirect loads]: the kernel raises eager's IndexOutOfRangeError, naming the
    index and the size, and reads nothing out of bounds."""
    x = random_values(np.dtype("float32"), 37, seed=6)
    idx = np.array([0, 5, bad, 3], np.int64)
    source_x, source_idx = input_buffer("x", x), input_buffer("idx", idx)

    def body(index):
        position = ops.indirect_indexing(load(source_idx, index), 37, wrap)
        return load(source_x, (position,))

    out = computed("buf0", Pointwise(get_dtype("float32"), idx.shape, body))
    program = program_of([source_x, source_idx], [out])
    inputs = {"x": x, "idx": idx}
    with pytest.raises(IndexOutOfRangeError, match=f"index {bad} is out of bounds.* size 37"):
        run_reference(program, inputs)
    with pytest.raises(IndexOutOfRangeError, match=f"index {bad} is out of bounds.* size 37"):
        run_backend(backend, program, inputs, {})
