"""The swappable `ops`: what a loop body's operations mean is decided by whoever runs it.

[Note: ops handlers]
A loop body in our IR is a plain Python function, `inner_fn(index) -> value`, that computes one
element through calls on the module-level object `ops`:

    from ir.ops_handler import ops

    def inner_fn(index):
        (i0,) = index
        return ops.sin(ops.load("arg0_1", i0))

`ops` itself does nothing: it forwards every call to the *current handler*, and the handler
decides what a value is. Run the same body under

- the numpy handler (ir/interpreter.py): values are arrays and the body computes the result;
- the printing handler (ir/printer.py): values are names like 'tmp0' and the body prints itself;
- the LLVM handler (codegen/): values are LLVM IR registers and the body emits code;
- a recording handler (ir/scheduler.py): the body reports which buffers it loads, and where.

One body, many meanings, and no IR tree to walk. This is Inductor's `V.ops`, made visible: the
current handler is one per-thread variable, changed only by the context manager
`set_ops_handler`, so `grep set_ops_handler` finds every place that gives `ops` a meaning.

    with set_ops_handler(PrintingHandler()):
        inner_fn((Var("i0"),))

[Note: the loop-IR ops]
The methods of `OpsHandler` below are the whole vocabulary of a loop body, a closed list:
CORE_OPS and COMPOSITE_OPS name them all. ir/interpreter.py is their definition: whatever it
computes for an op, with numpy, is what the op means, and every backend is tested against it.

A *core* op is one that cannot be written with the others (or only by losing accuracy). A
handler must implement each one; the base class raises NotImplementedError naming the handler
and the op.

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

A *composite* op has a default right here, written with other ops on `self`, so a handler gets
it for free, and the handler's own version of any op the default uses is the one that runs.
A handler overrides a composite only to do better: LLVM has one instruction for sub and an
intrinsic for maximum, and its own tanh and sigmoid. So adding an op with a default to this
list never breaks a backend that does not know the op.

    composite       default
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

Integers (int32, int64) are two's complement: add, sub, mul, neg, abs and pow wrap around on
overflow, as numpy's do (abs and neg of the minimum give the minimum); comparisons are signed.
Bools are 0 and 1: add is `or`, mul is `and`, and False < True.

[Note: indirect loads]
gather, embedding and advanced indexing read an element whose position is *data*: out[i] =
x[idx[i]]. The index of a load is an Expr over loop variables, so the loaded value becomes one
more variable:

    tmp0 = ops.load('idx', i0)
    ind0 = ops.indirect_indexing(tmp0, 10, False)     # an Expr: Var('ind0')
    tmp1 = ops.load('x', 4*ind0 + i1)

`indirect_indexing(value, size, wrap_negative)` returns a Var that stands for `value` in index
expressions (a backend binds it in the env it evaluates indices with). It is also the bounds
check: a value outside [0, size) (outside [-size, size) with `wrap_negative`, which first adds
size to a negative one, as Python's x[-1]) raises IndexOutOfRangeError when the kernel runs,
and no out-of-bounds element is ever read (LLVM reads element 0 instead, then reports).

What each reduction_type of a Reduction means is in its docstring (ir/nodes.py).

[Note: where backends must agree] is in ir/agreement.py, with the table tests read.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ir.indexing import Expr
    from minitorch.dtype import DType

# The closed list of loop-IR ops ([Note: the loop-IR ops]), in the order OpsHandler has them.
CORE_OPS = (
    "load", "constant", "constant_like", "to_dtype",
    "add", "mul", "div", "abs", "pow",
    "sin", "cos", "exp", "log", "erf",
    "eq", "lt", "le", "where",
    "index_expr", "indirect_indexing", "rand",
)  # fmt: skip
COMPOSITE_OPS = (
    "neg", "sub", "square", "reciprocal", "sqrt", "rsqrt",
    "ne", "gt", "ge", "maximum", "minimum", "relu",
    "sigmoid", "log1p", "expm1", "tanh",
)  # fmt: skip
REDUCTIONS = ("sum", "max", "min", "argmax", "argmin")  # the values of Reduction.reduction_type


def _missing(handler: OpsHandler, op: str) -> NotImplementedError:
    return NotImplementedError(f"{type(handler).__name__} does not implement ops.{op}")


class OpsHandler:
    """The operations a loop body may use: a handler implements the core ones, at least.

    Values (`a`, `b` below) are whatever the handler makes them: arrays, names, LLVM values.
    Every op is elementwise; the body computes one element at the index it was given.
    """

    # -- core ops: every handler implements these ------------------------------------------

    def load(self, name: str, index: Expr) -> Any:
        """Element `index` (a flat offset in elements from the buffer's start) of buffer `name`."""
        raise _missing(self, "load")

    def constant(self, value: float | int, dtype: DType) -> Any:
        """A literal of the given dtype."""
        raise _missing(self, "constant")

    def constant_like(self, value: float | int, like: Any) -> Any:
        """A literal of the same dtype as the value `like` (which it does not otherwise use)."""
        raise _missing(self, "constant_like")

    def to_dtype(self, a: Any, dtype: DType) -> Any:
        """`a` as `dtype` (any of float32, float64, int32, int64, bool) as numpy's astype: True
        where not 0 (NaN too), floats truncated toward zero, integers wrapped around."""
        raise _missing(self, "to_dtype")

    def add(self, a: Any, b: Any) -> Any:
        """a + b"""
        raise _missing(self, "add")

    def mul(self, a: Any, b: Any) -> Any:
        """a * b"""
        raise _missing(self, "mul")

    def div(self, a: Any, b: Any) -> Any:
        """a / b (true division, of floats)"""
        raise _missing(self, "div")

    def abs(self, a: Any) -> Any:
        """|a|"""
        raise _missing(self, "abs")

    def pow(self, a: Any, exponent: float | int) -> Any:
        """a ** exponent, where the exponent is a Python number fixed when the graph was traced
        (an integer >= 0 when a is an integer)."""
        raise _missing(self, "pow")

    def sin(self, a: Any) -> Any:
        """sin(a)"""
        raise _missing(self, "sin")

    def cos(self, a: Any) -> Any:
        """cos(a)"""
        raise _missing(self, "cos")

    def exp(self, a: Any) -> Any:
        """e ** a"""
        raise _missing(self, "exp")

    def log(self, a: Any) -> Any:
        """the natural logarithm of a"""
        raise _missing(self, "log")

    def erf(self, a: Any) -> Any:
        """the error function of a"""
        raise _missing(self, "erf")

    # Comparisons take two values of one dtype and give a bool.
    def eq(self, a: Any, b: Any) -> Any:
        """a == b (False for NaN)"""
        raise _missing(self, "eq")

    def lt(self, a: Any, b: Any) -> Any:
        """a < b (False for NaN)"""
        raise _missing(self, "lt")

    def le(self, a: Any, b: Any) -> Any:
        """a <= b (False for NaN)"""
        raise _missing(self, "le")

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        """a if the bool `condition` is True, else b (a and b of one dtype)"""
        raise _missing(self, "where")

    # Indices and random numbers: [Note: indirect loads], [Note: counter-based random numbers]
    def index_expr(self, expr: Expr, dtype: DType) -> Any:
        """The value of the index expression `expr`, as an integer of `dtype` (int64, int32)."""
        raise _missing(self, "index_expr")

    def indirect_indexing(self, value: Any, size: int, wrap_negative: bool) -> Expr:
        """An index variable standing for the integer `value`, checked to lie in [0, size)
        (after adding size to a negative value, with `wrap_negative`)."""
        raise _missing(self, "indirect_indexing")

    def rand(self, seed: Any, counter: Any) -> Any:
        """A uniform float64 in [0, 1): minitorch.counter_rng.uniform of two int64 values."""
        raise _missing(self, "rand")

    # -- composite ops: defaults in core ops, overridden where a handler does better --------

    def neg(self, a: Any) -> Any:
        """-a"""
        return self.mul(a, self.constant_like(-1, a))

    def sub(self, a: Any, b: Any) -> Any:
        """a - b"""
        return self.add(a, self.neg(b))

    def square(self, a: Any) -> Any:
        """a * a"""
        return self.mul(a, a)

    def reciprocal(self, a: Any) -> Any:
        """1 / a"""
        return self.div(self.constant_like(1, a), a)

    def sqrt(self, a: Any) -> Any:
        """the square root of a (NaN for a < 0; sqrt(-0.0) = -0.0)"""
        return self.pow(a, 0.5)

    def rsqrt(self, a: Any) -> Any:
        """1 / sqrt(a)"""
        return self.reciprocal(self.sqrt(a))

    def ne(self, a: Any, b: Any) -> Any:
        """a != b (True for NaN): a == b is False"""
        equal = self.eq(a, b)
        return self.eq(equal, self.constant_like(False, equal))

    def gt(self, a: Any, b: Any) -> Any:
        """a > b (False for NaN): b < a"""
        return self.lt(b, a)

    def ge(self, a: Any, b: Any) -> Any:
        """a >= b (False for NaN): b <= a"""
        return self.le(b, a)

    def maximum(self, a: Any, b: Any) -> Any:
        """the larger of a and b; NaN if either is NaN; b at a tie (so maximum(0.0, -0.0) is
        -0.0, as numpy's)"""
        a_is_nan = self.ne(a, a)
        return self.where(self.lt(b, a), a, self.where(a_is_nan, a, b))

    def minimum(self, a: Any, b: Any) -> Any:
        """the smaller of a and b; NaN if either is NaN; b at a tie"""
        a_is_nan = self.ne(a, a)
        return self.where(self.lt(a, b), a, self.where(a_is_nan, a, b))

    def relu(self, a: Any) -> Any:
        """max(a, 0), with relu(NaN) = NaN and relu(-0.0) = 0.0"""
        zero = self.constant_like(0, a)
        return self.where(self.le(a, zero), zero, a)

    def sigmoid(self, a: Any) -> Any:
        """1 / (1 + e ** -a)"""
        # e^a / (1 + e^a) for a < 0, where e^-a would overflow; 1 / (1 + e^-a) for a >= 0.
        numerator = self.exp(self.minimum(a, self.constant_like(0, a)))
        denominator = self.add(self.constant_like(1, a), self.exp(self.neg(self.abs(a))))
        return self.div(numerator, denominator)

    def log1p(self, a: Any) -> Any:
        """log(1 + a), accurate for small a"""
        u = self.add(self.constant_like(1, a), a)
        # u = 1 + a rounded; log(u) / (u - 1) is smooth, so its error from rounding u is
        # second order, and multiplying by the exact a gives log(1 + a) to a few ulps.
        scaled = self.mul(self.log(u), self.div(a, self.sub(u, self.constant_like(1, a))))
        at_inf = self.where(self.eq(u, self.constant_like(math.inf, a)), u, scaled)  # not inf/inf
        return self.where(self.eq(u, self.constant_like(1, a)), a, at_inf)  # a tiny (or -0.0)

    def expm1(self, a: Any) -> Any:
        """e ** a - 1, accurate for small a"""
        u = self.exp(a)
        u_minus_1 = self.sub(u, self.constant_like(1, a))
        # The mirror of log1p's trick: (u - 1) / log(u) is smooth in u.
        scaled = self.mul(u_minus_1, self.div(a, self.log(u)))
        result = self.where(self.eq(u, self.constant_like(math.inf, a)), u, scaled)
        minus_one = self.constant_like(-1, a)
        result = self.where(self.eq(u_minus_1, minus_one), minus_one, result)  # e^a rounds to 0
        return self.where(self.eq(u, self.constant_like(1, a)), a, result)  # a tiny (or -0.0)

    def tanh(self, a: Any) -> Any:
        """(e^a - e^-a) / (e^a + e^-a)"""
        # tanh|a| = -t / (t + 2), t = e^-2|a| - 1 in (-1, 0]: nothing overflows, and for small
        # |a| expm1 keeps the digits that 1 - e^-2|a| would cancel.
        t = self.expm1(self.mul(self.abs(a), self.constant_like(-2, a)))
        magnitude = self.div(self.neg(t), self.add(t, self.constant_like(2, a)))
        signed = self.where(self.lt(a, self.constant_like(0, a)), self.neg(magnitude), magnitude)
        return self.where(self.eq(a, self.constant_like(0, a)), a, signed)  # tanh(-0.0) = -0.0


class WrapperHandler(OpsHandler):
    """A handler in front of another: every op, composite ones included, goes to `inner`.

    Subclass it and override the ops to intercept; ir/symbolic.py rewrites the index of every
    load this way, and `ops` itself is a wrapper around whichever handler is current. Every op
    is forwarded explicitly (a test checks that none is missing), so a composite op reaches
    the inner handler as itself and is not decomposed on the way.
    """

    def __init__(self, inner: OpsHandler) -> None:
        self.inner = inner

    def load(self, name: str, index: Expr) -> Any:
        return self.inner.load(name, index)

    def constant(self, value: float | int, dtype: DType) -> Any:
        return self.inner.constant(value, dtype)

    def constant_like(self, value: float | int, like: Any) -> Any:
        return self.inner.constant_like(value, like)

    def to_dtype(self, a: Any, dtype: DType) -> Any:
        return self.inner.to_dtype(a, dtype)

    def add(self, a: Any, b: Any) -> Any:
        return self.inner.add(a, b)

    def mul(self, a: Any, b: Any) -> Any:
        return self.inner.mul(a, b)

    def div(self, a: Any, b: Any) -> Any:
        return self.inner.div(a, b)

    def abs(self, a: Any) -> Any:
        return self.inner.abs(a)

    def pow(self, a: Any, exponent: float | int) -> Any:
        return self.inner.pow(a, exponent)

    def sin(self, a: Any) -> Any:
        return self.inner.sin(a)

    def cos(self, a: Any) -> Any:
        return self.inner.cos(a)

    def exp(self, a: Any) -> Any:
        return self.inner.exp(a)

    def log(self, a: Any) -> Any:
        return self.inner.log(a)

    def erf(self, a: Any) -> Any:
        return self.inner.erf(a)

    def eq(self, a: Any, b: Any) -> Any:
        return self.inner.eq(a, b)

    def lt(self, a: Any, b: Any) -> Any:
        return self.inner.lt(a, b)

    def le(self, a: Any, b: Any) -> Any:
        return self.inner.le(a, b)

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        return self.inner.where(condition, a, b)

    def index_expr(self, expr: Expr, dtype: DType) -> Any:
        return self.inner.index_expr(expr, dtype)

    def indirect_indexing(self, value: Any, size: int, wrap_negative: bool) -> Expr:
        return self.inner.indirect_indexing(value, size, wrap_negative)

    def rand(self, seed: Any, counter: Any) -> Any:
        return self.inner.rand(seed, counter)

    def neg(self, a: Any) -> Any:
        return self.inner.neg(a)

    def sub(self, a: Any, b: Any) -> Any:
        return self.inner.sub(a, b)

    def square(self, a: Any) -> Any:
        return self.inner.square(a)

    def reciprocal(self, a: Any) -> Any:
        return self.inner.reciprocal(a)

    def sqrt(self, a: Any) -> Any:
        return self.inner.sqrt(a)

    def rsqrt(self, a: Any) -> Any:
        return self.inner.rsqrt(a)

    def ne(self, a: Any, b: Any) -> Any:
        return self.inner.ne(a, b)

    def gt(self, a: Any, b: Any) -> Any:
        return self.inner.gt(a, b)

    def ge(self, a: Any, b: Any) -> Any:
        return self.inner.ge(a, b)

    def maximum(self, a: Any, b: Any) -> Any:
        return self.inner.maximum(a, b)

    def minimum(self, a: Any, b: Any) -> Any:
        return self.inner.minimum(a, b)

    def relu(self, a: Any) -> Any:
        return self.inner.relu(a)

    def sigmoid(self, a: Any) -> Any:
        return self.inner.sigmoid(a)

    def log1p(self, a: Any) -> Any:
        return self.inner.log1p(a)

    def expm1(self, a: Any) -> Any:
        return self.inner.expm1(a)

    def tanh(self, a: Any) -> Any:
        return self.inner.tanh(a)


# This thread's handler: None outside every `set_ops_handler` block, so that a stray
# `ops.sin(x)` fails loudly. Per thread (a context variable, as grad mode is: [Note: grad mode
# is per thread] in minitorch/autograd/grad_mode.py), so that two threads lowering or running
# kernels at once each see their own meaning of `ops`; Inductor's `V.ops` is thread-local too.
_current_handler: contextvars.ContextVar[OpsHandler | None] = contextvars.ContextVar(
    "ops_handler", default=None
)


@contextmanager
def set_ops_handler(handler: OpsHandler) -> Iterator[OpsHandler]:
    """Make `handler` the meaning of `ops` inside the block, in this thread; the previous one
    comes back after.

    Blocks nest: the printer may run a body while the scheduler's recorder is current.
    """
    previous = _current_handler.get()
    _current_handler.set(handler)
    try:
        yield handler
    finally:
        _current_handler.set(previous)


def current_ops_handler() -> OpsHandler:
    """The handler `ops` forwards to right now, in this thread."""
    handler = _current_handler.get()
    if handler is None:
        raise RuntimeError(
            "ops called with no ops handler set: a loop body only runs inside "
            "`with set_ops_handler(handler):`"
        )
    return handler


class _Ops(WrapperHandler):
    """The type of `ops`: a wrapper whose inner handler is whichever one is current."""

    def __init__(self) -> None:
        pass  # no fixed inner handler: see the property

    @property
    def inner(self) -> OpsHandler:
        return current_ops_handler()


ops = _Ops()
