"""Tables and small factories for the opcode families of the translator.

`InstructionTranslator` has one method per opname; opnames that differ only in a detail share
one of the factories below, and the tables map an instruction's argument to what it means:

    UNARY_NEGATIVE = unary(operator.neg)
    POP_JUMP_IF_FALSE = pop_jump_if(False)
    BINARY_OPERATORS["**="] is operator.ipow
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING

from tracer.dynamo.instructions import Instruction
from tracer.dynamo.variables import BuiltinVariable, ConstantVariable

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator

# BINARY_OP's argument, by the symbol `dis` gives it (instructions.py puts it in argval).
BINARY_OPERATORS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "@": operator.matmul,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "@=": operator.imatmul,
    "&=": operator.iand,
    "|=": operator.ior,
    "^=": operator.ixor,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
}
COMPARE_OPERATORS = {
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    ">=": operator.ge,
}

# Words for the opnames a user is most likely to meet first.
MISSING_REASONS = {
    "GET_ITER": "a for loop or other iteration",
    "FOR_ITER": "a for loop",
    "STORE_GLOBAL": "assigning a global",
    "RAISE_VARARGS": "raise",
    "BEFORE_WITH": "a with block",
}


def nop(self: InstructionTranslator, inst: Instruction) -> None:
    """Bookkeeping the interpreter has no use for."""


def unary(fn: Callable) -> Callable:
    """UNARY_NEGATIVE & co: apply `fn` to the top of the stack."""

    def handler(self: InstructionTranslator, inst: Instruction) -> None:
        self.push(self.call(BuiltinVariable(fn), [self.pop()]))

    return handler


def pop_jump_if(truth: bool) -> Callable:
    """POP_JUMP_IF_TRUE/FALSE (and 3.11's FORWARD/BACKWARD forms): branch on a constant."""

    def handler(self: InstructionTranslator, inst: Instruction) -> None:
        if self.truth(self.pop()) is truth:
            self.jump(inst)

    return handler


def pop_jump_if_none(is_none: bool) -> Callable:
    """POP_JUMP_IF_NONE/NOT_NONE: only a ConstantVariable can hold None."""

    def handler(self: InstructionTranslator, inst: Instruction) -> None:
        value = self.pop()
        if (isinstance(value, ConstantVariable) and value.value is None) is is_none:
            self.jump(inst)

    return handler


def jump_or_pop(truth: bool) -> Callable:
    """3.11's JUMP_IF_TRUE_OR_POP/JUMP_IF_FALSE_OR_POP (`a or b`, `a and b`)."""

    def handler(self: InstructionTranslator, inst: Instruction) -> None:
        if self.truth(self.stack[-1]) is truth:
            self.jump(inst)
        else:
            self.pop()

    return handler
