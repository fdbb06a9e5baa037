"""Loops, unrolled: `for m in self.layers` runs its body once per item, all into one graph.

    GET_ITER   the iterable must be known while tracing (a tuple, a list, a Sequential or
               ModuleList, a range); push a ListIteratorVariable over its items
    FOR_ITER   push the next item, or jump out of the loop when there is none
    END_FOR    3.12+: the loop's exit pops the iterator (and a placeholder FOR_ITER pushed)

The handlers are installed on InstructionTranslator by name, like opcodes.py's.
"""

from __future__ import annotations

import dis
from typing import TYPE_CHECKING

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.variables.base import NULL, VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.nn_module import NNModuleVariable
from tracer.dynamo.variables.tuples import TupleVariable

if TYPE_CHECKING:
    from tracer.dynamo.instructions import Instruction
    from tracer.dynamo.symbolic_convert import InstructionTranslator


class ListIteratorVariable(VariableTracker):
    """`iter(seq)` of a sequence known while tracing (GET_ITER): FOR_ITER unrolls the loop."""

    def __init__(self, items: list[VariableTracker]) -> None:
        super().__init__(None)
        self.items = list(items)
        self.index = 0

    def python_type(self) -> type:
        return type(iter([]))

    def next_item(self) -> VariableTracker | None:
        """The next item, or None when the loop is over."""
        if self.index == len(self.items):
            return None
        self.index += 1
        return self.items[self.index - 1]

    def describe(self) -> str:
        return f"an iterator over {len(self.items)} items"


def get_iter(self: InstructionTranslator, inst: Instruction) -> None:
    """Over tuples, lists, module containers, constants such as ranges, and iterators (zip)."""
    iterable = self.pop()
    if isinstance(iterable, ListIteratorVariable):
        self.push(iterable)  # iter() of an iterator is itself
        return
    self.push(ListIteratorVariable(sequence_items(self, iterable)))


def sequence_items(tx: InstructionTranslator, iterable: VariableTracker) -> list[VariableTracker]:
    """The items a loop over `iterable` would see, which must be known while tracing."""
    from tracer.dynamo.variables.dicts import DictViewVariable
    from tracer.dynamo.variables.sets import SetVariable

    if isinstance(iterable, (TupleVariable, NNModuleVariable, DictViewVariable, SetVariable)):
        return iterable.unpack_sequence(tx)
    if isinstance(iterable, ListIteratorVariable):  # what is left of it, used up
        items, iterable.index = iterable.items[iterable.index:], len(iterable.items)
        return items
    if iterable.is_python_constant() and isinstance(iterable.as_python_constant(),
                                                    (range, tuple, str)):
        return [constant(v) for v in iterable.as_python_constant()]
    raise Unsupported("missing: GET_ITER (a for loop or other iteration) over "
                      f"{iterable.describe()}")


def enumerate_or_zip(tx: InstructionTranslator, fn: type, args: list[VariableTracker],
                     kwargs: dict[str, VariableTracker]) -> ListIteratorVariable:
    """`enumerate(seq, start)` and `zip(a, b, ...)`: an iterator over tuples of trackers."""
    from tracer.dynamo.variables.tuples import TupleVariable

    if fn is enumerate:
        start = kwargs.pop("start", args[1] if len(args) > 1 else constant(0))
        if kwargs or len(args) not in (1, 2) or not start.is_python_constant():
            raise Unsupported("enumerate() with arguments other than a sequence and a start")
        first = start.as_python_constant()
        items = sequence_items(tx, args[0])
        return ListIteratorVariable([TupleVariable([constant(first + i), v])
                                     for i, v in enumerate(items)])
    if kwargs:
        raise Unsupported(f"zip() with keyword arguments {sorted(kwargs)}")
    columns = [sequence_items(tx, a) for a in args]
    return ListIteratorVariable([TupleVariable(list(row)) for row in zip(*columns)])


def for_iter(self: InstructionTranslator, inst: Instruction) -> None:
    """Push the next item; when done, jump out. 3.12+ jump to an END_FOR that pops the
    iterator and one value, so a placeholder is pushed for it; 3.11 pops the iterator."""
    item = self.stack[-1].next_item()
    if item is not None:
        self.push(item)
    elif self.instructions[inst.target].opname == "END_FOR":
        self.push(NULL)
        self.jump(inst)
    else:
        self.pop()
        self.jump(inst)


def end_for(self: InstructionTranslator, inst: Instruction) -> None:
    """3.12: pops the iterator and the value; 3.13: pops one (a POP_TOP follows)."""
    self.popn(-dis.stack_effect(dis.opmap["END_FOR"]))
