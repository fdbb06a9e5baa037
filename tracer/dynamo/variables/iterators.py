"""Loops, unrolled: `for m in self.layers` runs its body once per item, all into one graph.

    GET_ITER   the iterable must be known while tracing (a tuple, a list, a Sequential or
               ModuleList, a range); push a ListIteratorVariable over its items
    FOR_ITER   push the next item, or jump out of the loop when there is none
    END_FOR    3.12+: the loop's exit pops the iterator (and a placeholder FOR_ITER pushed)

The handlers are installed on InstructionTranslator by name, like opcodes.py's.
"""

from __future__ import annotations

import dis
from collections.abc import Iterator
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
    """`iter(seq)` of a sequence known while tracing (GET_ITER): FOR_ITER unrolls the loop.

    An iterator over a list made with `live=True` shares the list tracker's items, so an item
    appended during the loop is reached, as CPython's list iterator reaches it.
    """

    def __init__(self, items: list[VariableTracker], live: bool = False) -> None:
        super().__init__(None)
        self.items = items if live else list(items)
        self.index = 0

    def python_type(self) -> type:
        return type(iter([]))

    def next_item(self, tx: InstructionTranslator | None = None) -> VariableTracker | None:
        """The next item, or None when the loop is over."""
        if self.index >= len(self.items):
            return None
        self.index += 1
        return self.items[self.index - 1]

    def remaining(self, tx: InstructionTranslator) -> list[VariableTracker]:
        """Every item not read yet; the iterator is then used up."""
        items, self.index = self.items[self.index :], len(self.items)
        return items

    def describe(self) -> str:
        return f"an iterator over {len(self.items)} items"


class LazyIteratorVariable(ListIteratorVariable):
    """An iterator whose items are computed as they are read (map, filter, itertools): a
    Python generator over trackers, so a function it calls runs when CPython would call it."""

    def __init__(self, generator: Iterator[VariableTracker], what: str) -> None:
        super().__init__([])
        self.generator = generator
        self.what = what

    def python_type(self) -> type:
        return type(map(str, ()))

    def next_item(self, tx: InstructionTranslator | None = None) -> VariableTracker | None:
        return next(self.generator, None)

    def remaining(self, tx: InstructionTranslator) -> list[VariableTracker]:
        return list(self.generator)

    def describe(self) -> str:
        return f"a {self.what} iterator"


def get_iter(self: InstructionTranslator, inst: Instruction) -> None:
    """Over tuples, lists, module containers, constants such as ranges, and iterators (zip)."""
    self.push(iterate(self, self.pop()))


def iterate(tx: InstructionTranslator, iterable: VariableTracker) -> ListIteratorVariable:
    """`iter(iterable)`: itself for an iterator, a live iterator over a list."""
    from tracer.dynamo.variables.dicts import ConstDictVariable, DictViewVariable
    from tracer.dynamo.variables.sets import SetVariable
    from tracer.dynamo.variables.tuples import ListVariable

    if isinstance(iterable, ListIteratorVariable):
        return iterable  # iter() of an iterator is itself
    if isinstance(iterable, ListVariable):
        return ListIteratorVariable(iterable.items, live=True)
    if isinstance(iterable, (ConstDictVariable, DictViewVariable, SetVariable)):
        return SizedIteratorVariable(iterable, sequence_items(tx, iterable))
    return ListIteratorVariable(sequence_items(tx, iterable))


class SizedIteratorVariable(ListIteratorVariable):
    """An iterator over a dict, a dict view or a set: CPython raises RuntimeError when the
    container changes size while it is iterated, so tracing refuses to go on (and the frame
    runs eagerly, where the error is raised at the user's line)."""

    def __init__(self, container: VariableTracker, items: list[VariableTracker]) -> None:
        super().__init__(items)
        self.container = container

    def next_item(self, tx: InstructionTranslator | None = None) -> VariableTracker | None:
        """The item now at the iterator's position: `for k, v in d.items()` reads a value
        assigned during the loop, as CPython's iterator does."""
        now = self.container.unpack_sequence(tx)
        if len(now) != len(self.items):
            raise Unsupported(
                f"{self.container.describe()} changed size during iteration (a RuntimeError)"
            )
        self.items = now
        return super().next_item(tx)

    def remaining(self, tx: InstructionTranslator) -> list[VariableTracker]:
        self.items = self.container.unpack_sequence(tx)
        return super().remaining(tx)


def sequence_items(tx: InstructionTranslator, iterable: VariableTracker) -> list[VariableTracker]:
    """The items a loop over `iterable` would see, which must be known while tracing."""
    from tracer.dynamo.variables.dicts import DictViewVariable
    from tracer.dynamo.variables.sets import SetVariable
    from tracer.dynamo.variables.tensor import TensorVariable

    if isinstance(
        iterable, (TupleVariable, NNModuleVariable, DictViewVariable, SetVariable, TensorVariable)
    ):  # a tensor's rows: x[0], x[1], ...
        return iterable.unpack_sequence(tx)
    if isinstance(iterable, ListIteratorVariable):  # what is left of it, used up
        return iterable.remaining(tx)
    if iterable.is_python_constant() and isinstance(
        iterable.as_python_constant(), (range, tuple, str, frozenset)
    ):
        return [constant(v) for v in iterable.as_python_constant()]
    raise Unsupported(
        f"missing: GET_ITER (a for loop or other iteration) over {iterable.describe()}"
    )


def enumerate_or_zip(
    tx: InstructionTranslator,
    fn: type,
    args: list[VariableTracker],
    kwargs: dict[str, VariableTracker],
) -> ListIteratorVariable:
    """`enumerate(seq, start)` and `zip(a, b, ...)`: lazy iterators over tuples of trackers,
    reading their arguments as CPython does (zip: left to right, stopping at the first that
    is used up, so an iterator shared with later code keeps what zip did not read)."""
    from tracer.dynamo.variables.tuples import TupleVariable

    if fn is enumerate:
        start = kwargs.pop("start", args[1] if len(args) > 1 else constant(0))
        if kwargs or len(args) not in (1, 2) or not start.is_python_constant():
            raise Unsupported("enumerate() with arguments other than a sequence and a start")
        first = start.as_python_constant()
        it = iterate(tx, args[0])

        def numbered():
            count = first
            while (item := it.next_item(tx)) is not None:
                yield TupleVariable([constant(count), item])
                count += 1

        return LazyIteratorVariable(numbered(), "enumerate")
    strict = kwargs.pop("strict", constant(False))
    if kwargs or not strict.is_python_constant():
        raise Unsupported(f"zip() with keyword arguments {sorted(kwargs)}")
    iterators = [iterate(tx, a) for a in args]

    def rows():
        while iterators:
            row = []
            for k, it in enumerate(iterators):
                item = it.next_item(tx)
                if item is None:
                    if strict.as_python_constant() and (
                        k > 0 or any(other.next_item(tx) is not None for other in iterators[1:])
                    ):
                        raise Unsupported(
                            "zip(strict=True) of iterables of different lengths (a ValueError)"
                        )
                    return
                row.append(item)
            yield TupleVariable(row)

    return LazyIteratorVariable(rows(), "zip")


def for_iter(self: InstructionTranslator, inst: Instruction) -> None:
    """Push the next item; when done, jump out. 3.12+ jump to an END_FOR that pops the
    iterator and one value, so a placeholder is pushed for it; 3.11 pops the iterator."""
    item = self.stack[-1].next_item(self)
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
