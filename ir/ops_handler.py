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

What the ops are, and what each means, is one table: [Note: the loop-IR ops] in
ir/op_table.py. A handler writes a method for each op it computes its own way; every other op
of the table reaches its `table_op`, which runs the op's decomposition (OpsHandler's), hands
the op on (WrapperHandler's, and so `ops`), prints it (ir/printer.py) or evaluates it with numpy
(ir/interpreter.py). `missing_ops` says which ops a handler can neither compute nor decompose.

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
import functools
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ir.op_table import LOOP_OPS, LoopOp

if TYPE_CHECKING:
    from ir.indexing import Expr

# The ops that are methods, not entries of the table: they read the kernel (its memory, its
# loop variables) or take their operand after a param ([Note: the loop-IR ops]).
KERNEL_OPS = ("load", "constant_like", "index_expr", "indirect_indexing")
# The loop-IR ops when this module was imported: core ones have no decomposition.
CORE_OPS = KERNEL_OPS + tuple(name for name, op in LOOP_OPS.items() if op.decomposition is None)
COMPOSITE_OPS = tuple(name for name, op in LOOP_OPS.items() if op.decomposition is not None)
REDUCTIONS = ("sum", "max", "min", "argmax", "argmin")  # the values of Reduction.reduction_type


def _missing(handler: OpsHandler, op: str) -> NotImplementedError:
    return NotImplementedError(f"{type(handler).__name__} does not implement ops.{op}")


class OpsHandler:
    """The operations a loop body may use: KERNEL_OPS as methods, the rest from the table.

    Values (`a`, `b`) are whatever the handler makes them: arrays, names, LLVM values. Every op
    is elementwise; the body computes one element at the index it was given. A subclass writes
    a method for each op it computes its own way (`def add(self, a, b)`); `handler.sub(a, b)`
    of an op of ir/op_table.py's LOOP_OPS that its class has no method for is
    `handler.table_op(LOOP_OPS["sub"], a, b)`.
    """

    def load(self, name: str, index: Expr) -> Any:
        """Element `index` (a flat offset in elements from the buffer's start) of buffer `name`."""
        raise _missing(self, "load")

    def constant_like(self, value: float | int, like: Any) -> Any:
        """A literal of the same dtype as the value `like` (which it does not otherwise use)."""
        raise _missing(self, "constant_like")

    # Indices: [Note: indirect loads]
    def index_expr(self, expr: Expr, dtype: Any) -> Any:
        """The value of the index expression `expr`, as an integer of `dtype` (int64, int32)."""
        raise _missing(self, "index_expr")

    def indirect_indexing(self, value: Any, size: int, wrap_negative: bool) -> Expr:
        """An index variable standing for the integer `value`, checked to lie in [0, size)
        (after adding size to a negative value, with `wrap_negative`)."""
        raise _missing(self, "indirect_indexing")

    def table_op(self, op: LoopOp, *args: Any) -> Any:
        """An op of the table this handler has no method for: its decomposition, written in
        other ops on this handler; an op without one is a NotImplementedError naming both."""
        if op.decomposition is None:
            raise _missing(self, op.name)
        return op.decomposition(self, *args)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """`handler.sub`, where the class has no method `sub`: the table's op, to table_op.
        (Python calls this only for an attribute it did not find; others stay missing.)"""
        op = LOOP_OPS.get(name)
        if op is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return types.MethodType(_method(op), self)  # equal to itself, as a bound method is


@functools.cache
def _method(op: LoopOp) -> Callable[..., Any]:
    """The method `handler.<op.name>(...)`: handler.table_op(op, ...). One per op, so that
    `ops.eq == ops.eq`, as it would be were it written out."""

    def method(handler: OpsHandler, *args: Any) -> Any:
        return handler.table_op(op, *args)

    method.__name__ = method.__qualname__ = op.name
    return method


class WrapperHandler(OpsHandler):
    """A handler in front of another: every op, composite ones included, goes to `inner`.

    Subclass it and override the ops to intercept; ir/symbolic.py rewrites the index of every
    load this way, and `ops` itself is a wrapper around whichever handler is current. An op of
    the table reaches the inner handler as itself (table_op below), not decomposed on the way.
    """

    def __init__(self, inner: OpsHandler) -> None:
        self.inner = inner

    def load(self, name: str, index: Expr) -> Any:
        return self.inner.load(name, index)

    def constant_like(self, value: float | int, like: Any) -> Any:
        return self.inner.constant_like(value, like)

    def index_expr(self, expr: Expr, dtype: Any) -> Any:
        return self.inner.index_expr(expr, dtype)

    def indirect_indexing(self, value: Any, size: int, wrap_negative: bool) -> Expr:
        return self.inner.indirect_indexing(value, size, wrap_negative)

    def table_op(self, op: LoopOp, *args: Any) -> Any:
        return getattr(self.inner, op.name)(*args)


def missing_ops(handler_class: type[OpsHandler]) -> list[str]:
    """The ops a handler of this class can neither compute nor decompose into ops it computes.

    A class computes an op it has a method for, and every op of the table if it has its own
    table_op (the printer, the interpreter, a wrapper); it decomposes an op whose
    decomposition uses only ops it computes or decomposes.
    """
    missing = [n for n in KERNEL_OPS if getattr(handler_class, n) is getattr(OpsHandler, n)]
    if handler_class.table_op is not OpsHandler.table_op:
        return missing
    has = {name for name in LOOP_OPS if hasattr(handler_class, name)}
    has |= set(KERNEL_OPS) - set(missing)
    grew = True
    while grew:  # until no more decompositions become possible
        ready = {
            name
            for name, op in LOOP_OPS.items()
            if name not in has and op.decomposition is not None and uses(op) <= has
        }
        has |= ready
        grew = bool(ready)
    return missing + [name for name in LOOP_OPS if name not in has]


def uses(op: LoopOp) -> set[str]:
    """The ops `op`'s decomposition calls (run once on a handler that only takes notes)."""
    recorder = _Uses()
    op.decomposition(recorder, *[None] * (op.arity + len(op.params)))
    return recorder.names


class _Uses(OpsHandler):
    """Every value is None; each op called is noted by name."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def constant_like(self, value: float | int, like: Any) -> None:
        self.names.add("constant_like")

    def table_op(self, op: LoopOp, *args: Any) -> None:
        self.names.add(op.name)


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
