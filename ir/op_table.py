"""The loop-IR ops, in one table: what each takes, what dtype it gives, and what it means.

[Note: the loop-IR ops]
A loop body ([Note: ops handlers] in ir/ops_handler.py) computes with a closed vocabulary. Each
op that computes a value from values is one entry of LOOP_OPS below, on one line:

    LoopOp("sub",  2,     same,       np.subtract, _sub)
            name   arity  dtype rule  meaning      decomposition

- `ops.sub(a, b)` calls it: first its `arity` values (arrays, names, LLVM registers: whatever
  the handler makes values), then its `params`, Python numbers and dtypes fixed when the body
  was written (pow's exponent, to_dtype's dtype).
- The dtype rule gives the result's numpy dtype from the operands' dtypes and the params, and
  refuses what a typed backend could not compute: float32 + float64, the sin of an integer.
- The meaning is a numpy function of the values and the params: `LoopOp.evaluate` runs the rule
  and then it, and that is what the op means (ir/interpreter.py runs every body so); every
  backend is tested against it ([Note: where backends must agree] in ir/agreement.py).
- The decomposition, if the op has one, writes it in other ops on a handler `h`. It is what a
  handler with no method of its own for the op runs, so the handler's own versions of the ops
  it uses are the ones that run.

Everything else about an op is derived from its entry. `handler.sub(...)` on a handler whose
class has no `sub` method goes to its `table_op` (OpsHandler.__getattr__): by default the
decomposition, or a NotImplementedError naming the handler and the op. A wrapper's table_op
hands the op on as itself (so does `ops`), the printer's writes `tmp2 = ops.sub(tmp0, tmp1)`,
the interpreter's evaluates. A code generator keeps its own lowering of each op it knows (that
is the backend-specific part: one LLVM instruction, one numpy expression); an op it lacks runs
as its decomposition, and tests/codegen/test_loop_op_lowerings.py names every (backend, op)
pair that has neither. So adding an op is adding its entry: that test adds `cube` and `hypot`
at test time and runs them through the printer, the interpreter, LLVM and numpy source.

Four ops are not entries but methods every handler writes (KERNEL_OPS in ir/ops_handler.py):
`load`, `index_expr` and `indirect_indexing` read the kernel (its memory, its loop variables),
and `constant_like(value, like)` takes its value after a param.

A *core* op (no decomposition) cannot be written with the others, or only by losing accuracy.

    core            meaning (a, b are values of one dtype; bool results are the dtype bool)
    --------------  ---------------------------------------------------------------------------
    load            element `index` (a flat offset, in elements) of a buffer
    constant        a literal of a given dtype (a float truncated toward zero for an integer)
    constant_like   a literal of the dtype of another value (what defaults make constants with)
    to_dtype        conversion between float32, float64, int32, int64 and bool (numpy's astype)
    add mul         a + b, a * b
    div             a / b, of floats only: PyTorch's int / int is a float, so lowering
                    converts integers first
    abs             |a|: clears the sign bit, so abs(-0.0) = 0.0 (no where() can do that)
    pow             a ** c for a Python number c (exp(c log a) fails for negative a; an
                    integer's c is an integer >= 0)
    sin cos         transcendental functions
    exp log
    erf             a special function; accurate float32 needs float64 inside, and a
                    decomposition cannot name its operand's dtype to convert back
    eq lt le        a == b, a < b, a <= b: False where either is NaN
    where           a where the bool `condition` is True, else b
    index_expr      the value of an index expression (ir/indexing.py) as an int64 or int32:
                    what lets a body compare its own index (cat's `i < 3`)
    indirect_indexing
                    a loaded integer turned into an index variable for later loads (Inductor's
                    `ops.indirect_indexing`): see [Note: indirect loads]
    rand            a uniform float64 in [0, 1), a pure function of two int64s, (seed, counter):
                    see [Note: counter-based random numbers] in minitorch/counter_rng.py

A *composite* op has a decomposition, so a backend gets it for free, and lowers it itself only
to do better: LLVM has one instruction for sub and an intrinsic for maximum, and its own tanh
and sigmoid. So adding an op with a decomposition never breaks a backend that does not know it.

    composite       decomposition
    --------------  ---------------------------------------------------------------------------
    neg             a * -1 (exact, and -0.0 for 0.0, which 0 - a would not give)
    sub             a + (-b) (exact)
    square          a * a
    reciprocal      1 / a
    sqrt            a ** 0.5
    rsqrt           1 / sqrt(a), as PyTorch computes it
    ne gt ge        eq(eq(a, b), False); lt and le with the operands swapped
    maximum         b < a ? a : (a is NaN ? a : b): NaN propagates, a tie gives b (numpy's)
    minimum         a < b ? a : (a is NaN ? a : b)
    relu            a <= 0 ? 0 : a (relu(-0.0) = 0.0, relu(NaN) = NaN)
    sigmoid         e^min(a, 0) / (1 + e^-|a|): never overflows (the eager kernel's formula)
    log1p           log(u) * a / (u - 1), u = 1 + a, and a where u == 1 (Goldberg's trick:
                    the rounding error of u cancels)
    expm1           (u - 1) * a / log(u), u = e^a, and a where u == 1 (Kahan's trick)
    tanh            -t / (t + 2) with t = expm1(-2|a|), and the sign of a: never overflows

The meaning of a composite is its numpy function, not its decomposition (the interpreter never
decomposes): tests/ir/test_ops_handler.py holds each decomposition to it.

Integers (int32, int64) are two's complement: add, sub, mul, neg, abs and pow wrap around on
overflow, as numpy's do (abs and neg of the minimum give the minimum); comparisons are signed.
Bools are 0 and 1: add is `or`, mul is `and`, and False < True.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from minitorch import counter_rng
from minitorch.errors import CompileError
from minitorch.ops import pointwise_kernels


@dataclass(frozen=True, eq=False)  # compared by identity: hashed fast, as a cache key
class LoopOp:
    """One loop-IR op: `ops.<name>(values..., params...)` ([Note: the loop-IR ops])."""

    name: str  # ops.<name>
    arity: int  # how many values it takes, before its params
    dtype_rule: Callable[..., np.dtype]  # (operand dtypes..., params...) -> the result's dtype
    numpy: Callable[..., Any]  # its meaning: (arrays..., params...) -> an array
    decomposition: Callable[..., Any] | None = None  # (handler, values..., params...) -> value
    params: tuple[str, ...] = ()  # the names of the arguments after the values

    def result_dtype(self, dtypes: list[np.dtype], params: tuple) -> np.dtype:
        """The dtype rule: the result's dtype, or a CompileError naming the op."""
        try:
            return np.dtype(self.dtype_rule(*dtypes, *params))
        except Refused as refused:
            raise CompileError(f"ops.{self.name} {refused}") from None

    def evaluate(self, *args: Any) -> Any:
        """What the op means, on numpy arrays: the dtype rule, then the numpy function."""
        dtypes = [np.result_type(value) for value in args[: self.arity]]
        dtype = self.result_dtype(dtypes, args[self.arity :])
        result = self.numpy(*args)
        if np.result_type(result) != dtype:  # the entry disagrees with itself
            raise CompileError(f"ops.{self.name} computes {np.result_type(result)}, not {dtype}")
        return result


class Refused(Exception):
    """A dtype rule's refusal: the message goes after 'ops.<name>' in a CompileError."""


# -- dtype rules -------------------------------------------------------------------------------


def same(*dtypes: np.dtype) -> np.dtype:
    """The operands' one dtype: a typed backend cannot add a float32 to a float64, nor can we."""
    if len(set(dtypes)) > 1:
        raise Refused(f"of {' and '.join(map(str, dtypes))}: lowering must insert to_dtype")
    return dtypes[0]


def floats(*dtypes: np.dtype) -> np.dtype:
    """The operands' one dtype, a float: PyTorch's sin(int) and int / int are floats, and
    lowering converts integers first."""
    dtype = same(*dtypes)
    if dtype.kind != "f":
        raise Refused(f"of {dtype}: convert to a float with ops.to_dtype")
    return dtype


def compare(a: np.dtype, b: np.dtype) -> np.dtype:
    """bool, of two operands of one dtype."""
    same(a, b)
    return np.dtype(np.bool_)


def given(*args: Any) -> np.dtype:
    """The dtype param, the last argument: constant(value, dtype), to_dtype(a, dtype)."""
    return args[-1].np


def where_dtype(condition: np.dtype, a: np.dtype, b: np.dtype) -> np.dtype:
    if condition != np.bool_:
        raise Refused(f"with a {condition} condition")
    return same(a, b)


def pow_dtype(a: np.dtype, exponent: float | int) -> np.dtype:
    if a.kind == "i" and not (float(exponent).is_integer() and exponent >= 0):
        raise Refused(f"of {a} to the power {exponent}: only n >= 0")
    return a


def rand_dtype(seed: np.dtype, counter: np.dtype) -> np.dtype:
    same(seed, counter)
    return np.dtype(np.float64)


# -- meanings longer than a numpy function -------------------------------------------------------


def _constant(value: float | int, dtype) -> np.ndarray:
    return np.asarray(value, dtype=dtype.np)


def _to_dtype(a: np.ndarray, dtype) -> np.ndarray:
    return np.asarray(a).astype(dtype.np)


def _power(a: np.ndarray, exponent: float | int) -> np.ndarray:
    return np.power(a, np.asarray(exponent, dtype=a.dtype))  # a.dtype, not float64


# erf and sigmoid mean what eager mode computes: its kernels (written against numpy's API).
def _erf(a: np.ndarray) -> np.ndarray:
    return pointwise_kernels.erf(np, a).astype(a.dtype)


def _sigmoid(a: np.ndarray) -> np.ndarray:
    return pointwise_kernels.sigmoid(np, a).astype(a.dtype)


def _uniform(seed: np.ndarray, counter: np.ndarray) -> np.ndarray:
    return counter_rng.uniform(np, seed, counter)


def _rsqrt(a: np.ndarray) -> np.ndarray:
    return np.reciprocal(np.sqrt(a))


def _relu(a: np.ndarray) -> np.ndarray:
    return np.where(a <= 0, np.zeros((), a.dtype), a)  # as the eager composite computes it


# -- decompositions: each op written in others, on a handler h -----------------------------------


def _neg(h, a):
    return h.mul(a, h.constant_like(-1, a))


def _sub(h, a, b):
    return h.add(a, h.neg(b))


def _square(h, a):
    return h.mul(a, a)


def _reciprocal(h, a):
    return h.div(h.constant_like(1, a), a)


def _sqrt(h, a):  # NaN for a < 0; sqrt(-0.0) = -0.0
    return h.pow(a, 0.5)


def _rsqrt_of(h, a):
    return h.reciprocal(h.sqrt(a))


def _ne(h, a, b):  # True for NaN: a == b is False
    equal = h.eq(a, b)
    return h.eq(equal, h.constant_like(False, equal))


def _gt(h, a, b):
    return h.lt(b, a)


def _ge(h, a, b):
    return h.le(b, a)


def _maximum(h, a, b):  # NaN if either is; b at a tie (maximum(0.0, -0.0) is -0.0, as numpy's)
    a_is_nan = h.ne(a, a)
    return h.where(h.lt(b, a), a, h.where(a_is_nan, a, b))


def _minimum(h, a, b):
    a_is_nan = h.ne(a, a)
    return h.where(h.lt(a, b), a, h.where(a_is_nan, a, b))


def _relu_of(h, a):  # relu(NaN) = NaN, relu(-0.0) = 0.0
    zero = h.constant_like(0, a)
    return h.where(h.le(a, zero), zero, a)


def _sigmoid_of(h, a):
    # e^a / (1 + e^a) for a < 0, where e^-a would overflow; 1 / (1 + e^-a) for a >= 0.
    numerator = h.exp(h.minimum(a, h.constant_like(0, a)))
    denominator = h.add(h.constant_like(1, a), h.exp(h.neg(h.abs(a))))
    return h.div(numerator, denominator)


def _log1p(h, a):
    u = h.add(h.constant_like(1, a), a)
    # u = 1 + a rounded; log(u) / (u - 1) is smooth, so its error from rounding u is second
    # order, and multiplying by the exact a gives log(1 + a) to a few ulps.
    scaled = h.mul(h.log(u), h.div(a, h.sub(u, h.constant_like(1, a))))
    at_inf = h.where(h.eq(u, h.constant_like(math.inf, a)), u, scaled)  # not inf / inf
    return h.where(h.eq(u, h.constant_like(1, a)), a, at_inf)  # a tiny (or -0.0)


def _expm1(h, a):
    u = h.exp(a)
    u_minus_1 = h.sub(u, h.constant_like(1, a))
    # The mirror of log1p's trick: (u - 1) / log(u) is smooth in u.
    scaled = h.mul(u_minus_1, h.div(a, h.log(u)))
    result = h.where(h.eq(u, h.constant_like(math.inf, a)), u, scaled)
    minus_one = h.constant_like(-1, a)
    result = h.where(h.eq(u_minus_1, minus_one), minus_one, result)  # e^a rounds to 0
    return h.where(h.eq(u, h.constant_like(1, a)), a, result)  # a tiny (or -0.0)


def _tanh(h, a):
    # tanh|a| = -t / (t + 2), t = e^-2|a| - 1 in (-1, 0]: nothing overflows, and for small |a|
    # expm1 keeps the digits that 1 - e^-2|a| would cancel.
    t = h.expm1(h.mul(h.abs(a), h.constant_like(-2, a)))
    magnitude = h.div(h.neg(t), h.add(t, h.constant_like(2, a)))
    signed = h.where(h.lt(a, h.constant_like(0, a)), h.neg(magnitude), magnitude)
    return h.where(h.eq(a, h.constant_like(0, a)), a, signed)  # tanh(-0.0) = -0.0


# -- the table -----------------------------------------------------------------------------------

# name -> its LoopOp: every loop-IR op but KERNEL_OPS, core ones first ([Note: the loop-IR ops])
LOOP_OPS: dict[str, LoopOp] = {op.name: op for op in (
    LoopOp("constant", 0, given, _constant, params=("value", "dtype")),
    LoopOp("to_dtype", 1, given, _to_dtype, params=("dtype",)),
    LoopOp("add", 2, same, np.add),
    LoopOp("mul", 2, same, np.multiply),
    LoopOp("div", 2, floats, np.true_divide),
    LoopOp("abs", 1, same, np.abs),
    LoopOp("pow", 1, pow_dtype, _power, params=("exponent",)),
    LoopOp("sin", 1, floats, np.sin),
    LoopOp("cos", 1, floats, np.cos),
    LoopOp("exp", 1, floats, np.exp),
    LoopOp("log", 1, floats, np.log),
    LoopOp("erf", 1, floats, _erf),
    LoopOp("eq", 2, compare, np.equal),
    LoopOp("lt", 2, compare, np.less),
    LoopOp("le", 2, compare, np.less_equal),
    LoopOp("where", 3, where_dtype, np.where),  # (condition, a, b)
    LoopOp("rand", 2, rand_dtype, _uniform),  # (seed, counter)
    LoopOp("neg", 1, same, np.negative, _neg),
    LoopOp("sub", 2, same, np.subtract, _sub),
    LoopOp("square", 1, same, np.square, _square),
    LoopOp("reciprocal", 1, floats, np.reciprocal, _reciprocal),
    LoopOp("sqrt", 1, floats, np.sqrt, _sqrt),
    LoopOp("rsqrt", 1, floats, _rsqrt, _rsqrt_of),
    LoopOp("ne", 2, compare, np.not_equal, _ne),
    LoopOp("gt", 2, compare, np.greater, _gt),
    LoopOp("ge", 2, compare, np.greater_equal, _ge),
    LoopOp("maximum", 2, same, np.maximum, _maximum),
    LoopOp("minimum", 2, same, np.minimum, _minimum),
    LoopOp("relu", 1, same, _relu, _relu_of),
    LoopOp("sigmoid", 1, floats, _sigmoid, _sigmoid_of),
    LoopOp("log1p", 1, floats, np.log1p, _log1p),
    LoopOp("expm1", 1, floats, np.expm1, _expm1),
    LoopOp("tanh", 1, floats, np.tanh, _tanh),
)}  # fmt: skip
