"""Functions made in the traced frame (`def inner`, lambdas, 3.11 comprehensions), inlined.

    def f(x):                         MAKE_CELL s; LOAD_CONST 2; STORE_DEREF s
        s = 2                         LOAD_CLOSURE s; BUILD_TUPLE 1      (3.13: LOAD_FAST s)
        def inner(y):                 LOAD_CONST <code inner>; MAKE_FUNCTION (closure)
            return y * s              -> NestedUserFunctionVariable(inner, closure={'s'})
        return inner(x)               CALL 1 -> inline inner's bytecode, s read from f's locals

A cell shared by `f` and `inner` is, while tracing, just f's local `s`: the inner function
reads it (LOAD_DEREF in inner) from the translator that made it, at the time of the call, so
`s = 3` between the def and the call is seen, as a cell would show it. 3.11 compiles a
comprehension the same way (a nested code object, called once with the iterator as `.0`);
3.12+ inline comprehensions into the frame, so no function is made there. A generator
expression is a nested code object on every version: it is run to its end when called
(inline.py, GeneratorTranslator), and its consumer (`sum`, a loop) iterates its yields.

A nested function that escapes (returned, kept past a graph break) cannot be rebuilt by the
transformed code, so such a frame runs eagerly; writing a free variable (`nonlocal k; k = 1`)
is refused too.
"""

from __future__ import annotations

import inspect
import types
from typing import TYPE_CHECKING

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.variables.base import VariableTracker

if TYPE_CHECKING:
    from tracer.dynamo.instructions import Instruction
    from tracer.dynamo.symbolic_convert import InstructionTranslator

# MAKE_FUNCTION's flags (3.11/3.12) and SET_FUNCTION_ATTRIBUTE's argument (3.13).
_DEFAULTS, _KWDEFAULTS, _ANNOTATIONS, _CLOSURE = 0x01, 0x02, 0x04, 0x08


class NestedUserFunctionVariable(VariableTracker):
    """A function object made by MAKE_FUNCTION in a traced frame: inlined when called."""

    def __init__(self, code: types.CodeType, maker: InstructionTranslator) -> None:
        super().__init__(None)
        self.code = code
        self.maker = maker  # the translator whose locals hold the closure's cells
        self.defaults: VariableTracker | None = None  # a TupleVariable
        self.kwdefaults: VariableTracker | None = None  # a ConstDictVariable
        self.has_closure = False

    def python_type(self) -> type:
        return types.FunctionType

    def set_attribute(self, flag: int, value: VariableTracker) -> None:
        if flag == _DEFAULTS:
            self.defaults = value
        elif flag == _KWDEFAULTS:
            self.kwdefaults = value
        elif flag == _CLOSURE:
            self.has_closure = True  # the cells are the maker's locals of the same names
        # annotations are not needed to run the function

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        from tracer.dynamo.variables.inline import inline_call

        closure = {name: self.maker.read_cell(name) for name in self.code.co_freevars}
        generator = self.code.co_name == "<genexpr>"
        return inline_call(tx, self._function(), args, kwargs, closure, generator)

    def _function(self) -> types.FunctionType:
        """A real function around the code, for binding arguments: its defaults are trackers
        (`inspect.signature` only carries them along) and its cells are empty."""
        cells = tuple(types.CellType() for _ in self.code.co_freevars)
        defaults = tuple(self.defaults.items) if self.defaults is not None else None
        fn = types.FunctionType(
            self.code, self.maker.frame.f_globals, self.code.co_name, defaults, cells
        )
        if self.kwdefaults is not None:
            fn.__kwdefaults__ = self.kwdefaults.entries
        return fn

    def describe(self) -> str:
        return f"the nested function {self.code.co_qualname}"


# ---- opcodes: installed on InstructionTranslator by name --------------------------------------


def make_function(self: InstructionTranslator, inst: Instruction) -> None:
    """3.11/3.12: the flags say which of defaults, kwdefaults, annotations, closure lie under
    the code object; 3.13: just the code (SET_FUNCTION_ATTRIBUTE adds the rest)."""
    code = self.pop()
    fn = NestedUserFunctionVariable(_code_of(code), self)
    for flag in (_CLOSURE, _ANNOTATIONS, _KWDEFAULTS, _DEFAULTS):  # popped last-pushed first
        if (inst.arg or 0) & flag:
            fn.set_attribute(flag, self.pop())
    self.push(fn)


def set_function_attribute(self: InstructionTranslator, inst: Instruction) -> None:  # 3.13
    fn = self.pop()
    value = self.pop()
    fn.set_attribute(inst.arg, value)
    self.push(fn)


def load_deref(self: InstructionTranslator, inst: Instruction) -> None:
    """A free variable (the frame view holds its cell's value in L), or a cell variable
    shared with a function made in this frame: tracked as a plain local."""
    self.push(self.read_cell(inst.argval))


def store_deref(self: InstructionTranslator, inst: Instruction) -> None:
    if inst.argval in self.frame.code.co_freevars:
        raise Unsupported(
            f"assigning the nonlocal variable {inst.argval!r} (the enclosing "
            "function's cell would not see it)"
        )
    self._store_local(inst.argval, self.pop())


def load_fast_and_clear(self: InstructionTranslator, inst: Instruction) -> None:
    """3.12+: an inlined comprehension saves its loop variable's outer value (NULL if
    unbound); STORE_FAST puts it back after the loop."""
    from tracer.dynamo.variables.base import NULL

    name = inst.argval
    bound = name in self.unread_arguments or name in self.symbolic_locals
    self.push(self._load_local(name) if bound else NULL)
    self.DELETE_FAST(inst)


def load_closure(self: InstructionTranslator, inst: Instruction) -> None:
    """3.11/3.12: push a cell for MAKE_FUNCTION's closure tuple; which cell is known by name."""
    from tracer.dynamo.variables.constant import ConstantVariable

    self.push(ConstantVariable(None))


def _code_of(value: VariableTracker) -> types.CodeType:
    code = getattr(value, "value", None)
    if not isinstance(code, types.CodeType):
        raise Unsupported(f"MAKE_FUNCTION of {value.describe()}")
    flags = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
    if code.co_flags & flags and code.co_name != "<genexpr>":
        raise Unsupported(
            f"a generator or coroutine {code.co_qualname} made in the frame "
            "(only generator expressions are traced)"
        )
    return code
