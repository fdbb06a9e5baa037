"""`inline_call`: trace a call of a Python function by interpreting its bytecode in place.

A call of a user function (an nn layer's `forward`, a helper, a property like `Tensor.T`) is
not a graph op; TorchDynamo *inlines* it: a child translator runs the callee's bytecode on the
caller's trackers, recording into the same graph, and its return value is pushed on the
caller's stack. The graph only ever holds the ops underneath:

    def forward(self, x):              self.fc(x)           inline Linear.forward(fc, x)
        return self.fc(x).relu()         F.linear(x, w, b)    -> call_function[F.linear]

The callee's globals may belong to another module (minitorch.nn.linear reads `F`): those are
sourced as sys.modules['minitorch.nn.linear'].F (source.py) so their guards still hold.

[Note: what a function object holds]
A function object is mutable: `h.__code__ = other.__code__`, `h.__defaults__ = (3,)` and
`h.__kwdefaults__['k'] = 3` change what a call of the *same* object computes, so an identity
guard on `h` is not enough. Every function inlined through a source guards what its call used:

    G['h'] is ___function_h                      the object (where it was read: builder.py)
    G['h'].__code__ is ___code_h                 its body, the bytecode we traced
    type(G['h'].__defaults__) is tuple           the defaults line up with the last parameters
    len(G['h'].__defaults__) == 1
    G['h'].__defaults__[0] == 2                  each default the call took (its own guard)
    G['h'].__kwdefaults__['k'] == 2

[Note: closures are read through their cells]
A closure read from the frame (`self.act = lambda t: t * k`, a function an enclosing function
returned, a decorator's wrapper) carries its free variables in cells, `fn.__closure__[i]`.
Each is a source like any other, so a cell's value is wrapped (and guarded) when the body
first reads it, exactly as an argument is:

    G['scale'].__code__ is ___code__lambda_                  the body
    G['scale'].__closure__[0].cell_contents == 3.0           k, read by the body
    G['scale'].__closure__[1].cell_contents -> graph input   a tensor it closes over

A cell's value may change between calls (the enclosing function assigns it again): the guard
on it retraces then. Writing it (`nonlocal k; k = 1`) is refused (nested.py).

A method's source is its class attribute (`L['self'].__class__.forward`), guarded by identity
by whoever read it (nn_module.py, user_object.py), so `Model.forward = other` retraces too.
A function made in the frame (nested.py) needs none of this: its defaults are trackers of the
frame's own values. minitorch's Tensor properties (`x.T`) are inlined without a source: like
its functions, minitorch's classes are not patched at run time.
"""

from __future__ import annotations

import inspect
from types import CodeType, FunctionType
from typing import TYPE_CHECKING, Any

from minitorch.overrides import original
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import (
    AttrSource,
    GetItemSource,
    GlobalSource,
    ModuleGlobalSource,
    Source,
)
from tracer.dynamo.symbolic_convert import InstructionTranslator
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.dicts import ConstDictVariable
from tracer.dynamo.variables.tuples import TupleVariable

if TYPE_CHECKING:
    from tracer.dynamo.eval_frame import Frame
    from tracer.dynamo.instructions import Instruction

MAX_INLINE_DEPTH = 32  # recursion that deep is not a model's forward
_UNSUPPORTED_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def inline_call(
    tx: InstructionTranslator,
    fn: FunctionType,
    args: list[VariableTracker],
    kwargs: dict[str, VariableTracker],
    closure: dict[str, VariableTracker] | None = None,
    generator: bool = False,
    source: Source | None = None,
) -> VariableTracker:
    """The tracker of `fn(*args, **kwargs)`, its body recorded into `tx`'s graph. A function
    made in the frame (nested.py) passes its free variables' values as `closure`; a generator
    expression (`generator`) is run to its end at once, giving an iterator over its yields.

    `source` is where the function object is read from on later calls (`G['helper']`,
    `L['self'].__class__.forward`): its code and the defaults the call used are guarded
    there (see [Note: what a function object holds])."""
    from tracer.dynamo.eval_frame import Frame  # noqa: F811 - the runtime import

    if original(fn) is not fn:  # a public function: its body, under the hook's wrapper
        fn, source = original(fn), source and AttrSource(source, "__wrapped__")
    code = fn.__code__
    name = fn.__qualname__
    if code.co_flags & _UNSUPPORTED_FLAGS and not (
        generator and code.co_flags & inspect.CO_GENERATOR
    ):
        raise Unsupported(f"inlining {name}: generators and coroutines are not traced")
    cells = {}
    if code.co_freevars and closure is None:
        cells = _closure_cells(fn, source)
    if tx.depth >= MAX_INLINE_DEPTH:
        raise Unsupported(f"inlining {name}: calls nested deeper than {MAX_INLINE_DEPTH}")
    if source is not None:
        tx.output.add_guard(AttrSource(source, "__code__"), "ID_MATCH")
    signature = inspect.signature(fn, follow_wrapped=False)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:  # eager raises it again, at the user's line
        raise Unsupported(f"calling {name}: {e}") from e
    f_locals = dict(closure or {})
    # The code's own names: a 3.11 comprehension's `.0` is `implicit0` to inspect.
    local_names = dict(zip(signature.parameters, _parameter_names(code)))
    for param, parameter in signature.parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:  # a new dict on every call
            value = ConstDictVariable(dict(bound.arguments.get(param, {})))
        elif parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            value = TupleVariable(list(bound.arguments.get(param, ())))
        elif param in bound.arguments:
            value = bound.arguments[param]
        else:
            value = _default(tx, fn, source, parameter)
        f_locals[local_names[param]] = value
    builtins_ = fn.__globals__.get("__builtins__", __builtins__)
    builtins_ = builtins_ if isinstance(builtins_, dict) else vars(builtins_)
    frame = Frame(code, {}, fn.__globals__, builtins_)
    child = (GeneratorTranslator if generator else InliningTranslator)(frame, tx, f_locals)
    child.add_cells(cells)
    child.run()
    return child.result


def _parameter_names(code: CodeType) -> list[str]:
    """The code's parameter names in the signature's order: positional, *args, keyword-only,
    **kwargs (co_varnames puts *args after the keyword-only ones)."""
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    names = list(code.co_varnames[:positional])
    extra = positional + keyword_only
    if code.co_flags & inspect.CO_VARARGS:
        names.append(code.co_varnames[extra])
        extra += 1
    names += code.co_varnames[positional : positional + keyword_only]
    if code.co_flags & inspect.CO_VARKEYWORDS:
        names.append(code.co_varnames[extra])
    return names


def _closure_cells(fn: FunctionType, source: Source | None) -> dict[str, tuple[Any, Source]]:
    """The free variables of a closure read from the frame, each with the source of its cell
    (see [Note: closures are read through their cells])."""
    if source is None:
        raise Unsupported(
            f"inlining {fn.__qualname__}: a closure (free variables "
            f"{', '.join(fn.__code__.co_freevars)}) that the frame cannot reload"
        )
    cells = {}
    closure = AttrSource(source, "__closure__")
    for i, (name, cell) in enumerate(zip(fn.__code__.co_freevars, fn.__closure__)):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell: reading it raises NameError, eagerly too
            continue
        cells[name] = value, AttrSource(GetItemSource(closure, i), "cell_contents")
    return cells


def _default(
    tx: InstructionTranslator, fn: FunctionType, source: Source | None, parameter: inspect.Parameter
) -> VariableTracker:
    """The value of a parameter the call left out: its default, evaluated when the def ran.

    Read through the function's source, it is wrapped like any value of the frame, so it
    gets the guard of its kind (`G['h'].__defaults__[0] == 2`, a tensor default becomes a
    graph input); `__defaults__` is also guarded by length, since its items line up with the
    *last* positional parameters.
    """
    from tracer.dynamo.variables.builder import wrap

    default = parameter.default
    if isinstance(default, VariableTracker):  # a function made in the frame (nested.py)
        return default
    if source is None:
        return constant(default)
    if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
        where = GetItemSource(AttrSource(source, "__kwdefaults__"), parameter.name)
        return wrap(tx, default, where)
    defaults = AttrSource(source, "__defaults__")
    tx.output.add_guard(defaults, "TUPLE_LENGTH")
    positional = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    index = positional.index(parameter.name) - (len(positional) - len(fn.__defaults__))
    return wrap(tx, default, GetItemSource(defaults, index))


def global_source(tx: InstructionTranslator, name: str) -> Source:
    """Where a global `name` of `tx`'s function is reloaded from on later calls."""
    if tx.frame.f_globals is tx.root_globals:
        return GlobalSource(name)
    module = tx.frame.f_globals.get("__name__")
    import sys

    if (
        module is None
        or getattr(sys.modules.get(module), "__dict__", None) is not tx.frame.f_globals
    ):
        raise Unsupported(f"a global {name!r} of a function whose globals are not a module's")
    return ModuleGlobalSource(module, name)


class InliningTranslator(InstructionTranslator):
    """Runs an inlined function's bytecode into its caller's graph (see variables/inline.py)."""

    def __init__(
        self, frame: Frame, parent: InstructionTranslator, arguments: dict[str, VariableTracker]
    ) -> None:
        super().__init__(frame, parent.output)
        self.depth = parent.depth + 1
        self.parent = parent  # its instruction is the call: a node's outer line
        self.root_globals = parent.root_globals
        self.unread_arguments = {}
        self.symbolic_locals = dict(arguments)  # already trackers
        self.result: VariableTracker | None = None
        self.cell_sources: dict[str, Source] = {}  # a closure's free variables, not read yet

    def add_cells(self, cells: dict[str, tuple[Any, Source]]) -> None:
        """A closure's free variables: wrapped (and guarded) when the body first reads them."""
        for name, (value, source) in cells.items():
            self.unread_arguments[name] = value
            self.cell_sources[name] = source

    def local_source(self, name: str) -> Source:
        return self.cell_sources[name]

    def _return(self, value: VariableTracker) -> None:
        self.result = value
        self.done = True


class GeneratorTranslator(InliningTranslator):
    """Runs a generator expression's bytecode to the end: its yields become the items of an
    iterator (a genexpr's body is one expression, so running it early changes nothing)."""

    def __init__(
        self, frame: Frame, parent: InstructionTranslator, arguments: dict[str, VariableTracker]
    ) -> None:
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
