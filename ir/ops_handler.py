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
current handler is one module-level variable, changed only by the context manager
`set_ops_handler`, so `grep set_ops_handler` finds every place that gives `ops` a meaning.

    with set_ops_handler(PrintingHandler()):
        inner_fn((Var("i0"),))
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ir.indexing import Expr
    from minitorch.dtype import DType


class OpsHandler:
    """The operations a loop body may use; a handler subclasses this and overrides them all.

    Values (`a`, `b` below) are whatever the handler makes them: arrays, names, LLVM values.
    Every op is elementwise; the body computes one element at the index it was given.
    """

    def load(self, name: str, index: Expr) -> Any:
        """Element `index` (a flat offset in elements from the buffer's start) of buffer `name`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.load")

    def constant(self, value: float | int, dtype: DType) -> Any:
        """A literal of the given dtype."""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.constant")

    def to_dtype(self, a: Any, dtype: DType) -> Any:
        """`a` converted to `dtype` (float32 <-> float64 <-> bool), for ops whose inputs' dtypes
        differ; a float becomes True where it is not 0 (NaN included), as numpy's astype does."""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.to_dtype")

    def add(self, a: Any, b: Any) -> Any:
        """a + b"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.add")

    def sub(self, a: Any, b: Any) -> Any:
        """a - b"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.sub")

    def mul(self, a: Any, b: Any) -> Any:
        """a * b"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.mul")

    def div(self, a: Any, b: Any) -> Any:
        """a / b (true division)"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.div")

    def neg(self, a: Any) -> Any:
        """-a"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.neg")

    def pow(self, a: Any, exponent: float | int) -> Any:
        """a ** exponent, where the exponent is a Python number fixed when the graph was traced."""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.pow")

    def sin(self, a: Any) -> Any:
        """sin(a)"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.sin")

    def cos(self, a: Any) -> Any:
        """cos(a)"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.cos")

    def exp(self, a: Any) -> Any:
        """e ** a"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.exp")

    def log(self, a: Any) -> Any:
        """the natural logarithm of a"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.log")

    def abs(self, a: Any) -> Any:
        """|a|"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.abs")

    def tanh(self, a: Any) -> Any:
        """tanh(a)"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.tanh")

    def sigmoid(self, a: Any) -> Any:
        """1 / (1 + e ** -a)"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.sigmoid")

    def erf(self, a: Any) -> Any:
        """the error function of a"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.erf")

    def maximum(self, a: Any, b: Any) -> Any:
        """the larger of a and b; NaN if either is NaN"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.maximum")

    def minimum(self, a: Any, b: Any) -> Any:
        """the smaller of a and b; NaN if either is NaN"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.minimum")

    # Comparisons take two values of one dtype and give a bool.
    def eq(self, a: Any, b: Any) -> Any:
        """a == b (False for NaN)"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.eq")

    def ne(self, a: Any, b: Any) -> Any:
        """a != b (True for NaN)"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.ne")

    def lt(self, a: Any, b: Any) -> Any:
        """a < b (False for NaN)"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.lt")

    def le(self, a: Any, b: Any) -> Any:
        """a <= b (False for NaN)"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.le")

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        """a if the bool `condition` is True, else b (a and b of one dtype)"""
        raise NotImplementedError(f"{type(self).__name__} does not implement ops.where")


# None outside every `set_ops_handler` block, so that a stray `ops.sin(x)` fails loudly.
_current_handler: OpsHandler | None = None


@contextmanager
def set_ops_handler(handler: OpsHandler) -> Iterator[OpsHandler]:
    """Make `handler` the meaning of `ops` inside the block; the previous one comes back after.

    Blocks nest: the printer may run a body while the scheduler's recorder is current.
    """
    global _current_handler
    previous, _current_handler = _current_handler, handler
    try:
        yield handler
    finally:
        _current_handler = previous


def current_ops_handler() -> OpsHandler:
    """The handler `ops` forwards to right now."""
    if _current_handler is None:
        raise RuntimeError(
            "ops called with no ops handler set: a loop body only runs inside "
            "`with set_ops_handler(handler):`"
        )
    return _current_handler


class _Ops(OpsHandler):
    """The type of `ops`: each method forwards the call to the current handler."""

    def load(self, name: str, index: Expr) -> Any:
        return current_ops_handler().load(name, index)

    def constant(self, value: float | int, dtype: DType) -> Any:
        return current_ops_handler().constant(value, dtype)

    def to_dtype(self, a: Any, dtype: DType) -> Any:
        return current_ops_handler().to_dtype(a, dtype)

    def add(self, a: Any, b: Any) -> Any:
        return current_ops_handler().add(a, b)

    def sub(self, a: Any, b: Any) -> Any:
        return current_ops_handler().sub(a, b)

    def mul(self, a: Any, b: Any) -> Any:
        return current_ops_handler().mul(a, b)

    def div(self, a: Any, b: Any) -> Any:
        return current_ops_handler().div(a, b)

    def neg(self, a: Any) -> Any:
        return current_ops_handler().neg(a)

    def pow(self, a: Any, exponent: float | int) -> Any:
        return current_ops_handler().pow(a, exponent)

    def sin(self, a: Any) -> Any:
        return current_ops_handler().sin(a)

    def cos(self, a: Any) -> Any:
        return current_ops_handler().cos(a)

    def exp(self, a: Any) -> Any:
        return current_ops_handler().exp(a)

    def log(self, a: Any) -> Any:
        return current_ops_handler().log(a)

    def abs(self, a: Any) -> Any:
        return current_ops_handler().abs(a)

    def tanh(self, a: Any) -> Any:
        return current_ops_handler().tanh(a)

    def sigmoid(self, a: Any) -> Any:
        return current_ops_handler().sigmoid(a)

    def erf(self, a: Any) -> Any:
        return current_ops_handler().erf(a)

    def maximum(self, a: Any, b: Any) -> Any:
        return current_ops_handler().maximum(a, b)

    def minimum(self, a: Any, b: Any) -> Any:
        return current_ops_handler().minimum(a, b)

    def eq(self, a: Any, b: Any) -> Any:
        return current_ops_handler().eq(a, b)

    def ne(self, a: Any, b: Any) -> Any:
        return current_ops_handler().ne(a, b)

    def lt(self, a: Any, b: Any) -> Any:
        return current_ops_handler().lt(a, b)

    def le(self, a: Any, b: Any) -> Any:
        return current_ops_handler().le(a, b)

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        return current_ops_handler().where(condition, a, b)


ops = _Ops()
