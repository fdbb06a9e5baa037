"""`inline_call`: trace a call of a Python function by interpreting its bytecode in place.

A call of a user function (an nn layer's `forward`, a helper, a property like `Tensor.T`) is
not a graph op; TorchDynamo *inlines* it: a child translator runs the callee's bytecode on the
caller's trackers, recording into the same graph, and its return value is pushed on the
caller's stack. The graph only ever holds the ops underneath:

    def forward(self, x):              self.fc(x)           inline Linear.forward(fc, x)
        return self.fc(x).relu()         F.linear(x, w, b)    -> call_function[F.linear]

The callee's globals may belong to another module (minitorch.nn.linear reads `F`): those are
sourced as sys.modules['minitorch.nn.linear'].F (source.py) so their guards still hold.
"""

from __future__ import annotations

import inspect
from types import FunctionType
from typing import TYPE_CHECKING

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import GlobalSource, ModuleGlobalSource, Source
from tracer.dynamo.symbolic_convert import InstructionTranslator
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.tuples import TupleVariable

if TYPE_CHECKING:
    from tracer.dynamo.eval_frame import Frame
    from tracer.dynamo.instructions import Instruction

MAX_INLINE_DEPTH = 32  # recursion that deep is not a model's forward
_UNSUPPORTED_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def inline_call(tx: InstructionTranslator, fn: FunctionType, args: list[VariableTracker],
                kwargs: dict[str, VariableTracker],
                closure: dict[str, VariableTracker] | None = None,
                generator: bool = False) -> VariableTracker:
    """The tracker of `fn(*args, **kwargs)`, its body recorded into `tx`'s graph. A function
    made in the frame (nested.py) passes its free variables' values as `closure`; a generator
    expression (`generator`) is run to its end at once, giving an iterator over its yields."""
    from tracer.dynamo.eval_frame import Frame  # noqa: F811 - the runtime import

    code = fn.__code__
    name = fn.__qualname__
    if code.co_flags & _UNSUPPORTED_FLAGS and not (generator and code.co_flags
                                                   & inspect.CO_GENERATOR):
        raise Unsupported(f"inlining {name}: generators and coroutines are not traced")
    if code.co_freevars and closure is None:
        raise Unsupported(f"inlining {name}: a closure (free variables "
                          f"{', '.join(code.co_freevars)}) cannot be reloaded from a source yet")
    if tx.depth >= MAX_INLINE_DEPTH:
        raise Unsupported(f"inlining {name}: calls nested deeper than {MAX_INLINE_DEPTH}")
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:  # eager raises it again, at the user's line
        raise Unsupported(f"calling {name}: {e}") from e
    bound.apply_defaults()
    f_locals = dict(closure or {})
    # The code's own names: a 3.11 comprehension's `.0` is `implicit0` to inspect.
    local_names = dict(zip(inspect.signature(fn).parameters, code.co_varnames))
    for param, value in bound.arguments.items():
        kind = inspect.signature(fn).parameters[param].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            raise Unsupported(f"inlining {name}: **{param} is not traced yet")
        if kind is inspect.Parameter.VAR_POSITIONAL:
            value = TupleVariable(list(value))
        elif not isinstance(value, VariableTracker):
            value = constant(value)  # a default: evaluated once, at def time, like eager
        f_locals[local_names[param]] = value
    builtins_ = fn.__globals__.get("__builtins__", __builtins__)
    builtins_ = builtins_ if isinstance(builtins_, dict) else vars(builtins_)
    frame = Frame(code, {}, fn.__globals__, builtins_)
    child = (GeneratorTranslator if generator else InliningTranslator)(frame, tx, f_locals)
    child.run()
    return child.result


def global_source(tx: InstructionTranslator, name: str) -> Source:
    """Where a global `name` of `tx`'s function is reloaded from on later calls."""
    if tx.frame.f_globals is tx.root_globals:
        return GlobalSource(name)
    module = tx.frame.f_globals.get("__name__")
    import sys

    if module is None or getattr(sys.modules.get(module), "__dict__", None) is not \
            tx.frame.f_globals:
        raise Unsupported(f"a global {name!r} of a function whose globals are not a module's")
    return ModuleGlobalSource(module, name)


class InliningTranslator(InstructionTranslator):
    """Runs an inlined function's bytecode into its caller's graph (see variables/inline.py)."""

    def __init__(self, frame: Frame, parent: InstructionTranslator,
                 arguments: dict[str, VariableTracker]) -> None:
        super().__init__(frame, parent.output)
        self.depth = parent.depth + 1
        self.root_globals = parent.root_globals
        self.unread_arguments = {}
        self.symbolic_locals = dict(arguments)  # already trackers
        self.result: VariableTracker | None = None

    def _return(self, value: VariableTracker) -> None:
        self.result = value
        self.done = True


class GeneratorTranslator(InliningTranslator):
    """Runs a generator expression's bytecode to the end: its yields become the items of an
    iterator (a genexpr's body is one expression, so running it early changes nothing)."""

    def __init__(self, frame: Frame, parent: InstructionTranslator,
                 arguments: dict[str, VariableTracker]) -> None:
        super().__init__(frame, parent, arguments)
        self.yielded: list[VariableTracker] = []

    def RETURN_GENERATOR(self, inst: Instruction) -> None:
        self.push(constant(None))  # popped at once: the generator object is never used here

    def YIELD_VALUE(self, inst: Instruction) -> None:
        self.yielded.append(self.pop())
        self.push(constant(None))  # what next() sends back in

    def _return(self, value: VariableTracker) -> None:
        from tracer.dynamo.variables.iterators import ListIteratorVariable

        self.result = ListIteratorVariable(self.yielded)
        self.done = True
