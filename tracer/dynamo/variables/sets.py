"""`SetVariable`: a set built in the frame, of constants (`{1, 2}`, `set(names)`, `{k for ...}`).

A set is mutable, so it is one tracker shared by every name that holds it, and its methods
(`add`, `discard`, `update`, ...) change that tracker. Its items must be constants: a set of
tensors would order them by their hashes (their ids), which tracing cannot know. The tracker
keeps a real Python `set` of the values and replays each operation on it, so iterating it gives
the order CPython's set would (the same values, inserted and removed in the same order).
Operators (`|`, `&`, `-`, `^`, their in-place forms, `in`, `len`) are in container_calls.py;
a set read from the frame is not tracked (it stays opaque).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator


class SetVariable(VariableTracker):
    """A set of constants, built in the frame."""

    def __init__(self, values: set[Any]) -> None:
        super().__init__(None)
        self.values = values

    @classmethod
    def of(cls, tx: InstructionTranslator, items: list[VariableTracker]) -> SetVariable:
        return cls(set(set_values(items)))

    def python_type(self) -> type:
        return set

    def as_python_constant(self) -> Any:
        return set(self.values)

    def unpack_sequence(self, tx: InstructionTranslator) -> list[VariableTracker]:
        from tracer.dynamo.variables.constant import constant

        return [constant(v) for v in self.values]

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        if name in SetMethodVariable.MUTATORS or hasattr(frozenset, name):
            return SetMethodVariable(self, name)
        raise Unsupported(f"set method .{name} is not traced")

    def describe(self) -> str:
        return f"a set of {len(self.values)} items"


class SetMethodVariable(VariableTracker):
    """`s.add` & co, waiting for their call: run on the tracker's real set of values."""

    MUTATORS = (
        "add",
        "discard",
        "remove",
        "pop",
        "clear",
        "update",
        "intersection_update",
        "difference_update",
        "symmetric_difference_update",
    )

    def __init__(self, s: SetVariable, name: str) -> None:
        super().__init__(None)
        self.set = s
        self.name = name

    def python_type(self) -> type:
        return type(set().add)

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        from tracer.dynamo.variables.constant import constant

        if kwargs:
            raise Unsupported(f"set.{self.name}() with keyword arguments")
        if self.name in ("add", "discard", "remove"):  # an item
            values = set_values(args)
        else:  # iterables: s.update(names), s.union(t, u)
            values = [set_operand(tx, v) for v in args]
        target = self.set.values if self.name in self.MUTATORS else frozenset(self.set.values)
        try:
            result = getattr(target, self.name)(*values)
        except (KeyError, TypeError) as e:  # remove() of a missing item, pop() of an empty set
            raise Unsupported(f"set.{self.name}() raised {type(e).__name__}: {e}") from e
        if isinstance(result, frozenset):  # s.union(t) & co: a new set
            return SetVariable(set(result))
        return constant(result)

    def describe(self) -> str:
        return f"the method set.{self.name}"


def set_operand(tx: InstructionTranslator, iterable: VariableTracker) -> Any:
    """What to hand a real set's update(), union() & co for `iterable`: an object of the same
    kind as CPython would be handed, since a set's iteration order depends on its table, and
    CPython fills the table differently from a set or frozenset (copied, `{"a", "b", "c"}` is
    SET_UPDATE of a frozenset constant), from a dict (sized first) and from anything else (one
    item at a time)."""
    from tracer.dynamo.variables.dicts import ConstDictVariable
    from tracer.dynamo.variables.iterators import sequence_items

    if isinstance(iterable, SetVariable):
        return iterable.values
    if isinstance(iterable, ConstDictVariable) and iterable.python_type() is dict:
        return dict.fromkeys(set_values([constant(k) for k in iterable.keys]))
    if iterable.is_python_constant() and type(iterable.as_python_constant()) in (set, frozenset):
        return iterable.as_python_constant()
    return set_values(sequence_items(tx, iterable))


def set_values(items: list[VariableTracker]) -> list[Any]:
    """The values of `items`, which must be hashable constants to go into a traced set."""
    values = []
    for item in items:
        if not item.is_python_constant():
            raise Unsupported(
                f"a set holding {item.describe()} (only constants are traced in "
                "sets: a set of tensors is ordered by their ids)"
            )
        values.append(item.as_python_constant())
    try:
        for value in values:
            hash(value)
    except TypeError as e:
        raise Unsupported(f"an unhashable set item (a TypeError: {e})") from e
    return values
