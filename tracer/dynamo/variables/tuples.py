"""`TupleVariable` and `ListVariable`: sequences whose items are trackers.

A tuple may mix tensors and constants (`return (x.sin(), 3)`); a shape is a tuple of constants
whose items keep their sources (`L['x'].shape[0]`), which a later issue needs to make a size
dynamic instead of guarding it. A named tuple (`x.max(-1)` returns
`minitorch.return_types.max(values, indices)`) is a TupleVariable of its type: `[0]`,
`.values` and `v, i = ...` read its items, and returning it rebuilds the same type.

Lists are mutable, so only lists *built in the frame* are tracked (BUILD_LIST,
`a, *rest = ...`), and none of their methods run yet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import Source
from tracer.dynamo.variables.base import VariableTracker

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator


class TupleVariable(VariableTracker):
    """A tuple (or a tuple subclass such as minitorch.Size) of trackers."""

    def __init__(
        self, items: list[VariableTracker], tuple_type: type = tuple, source: Source | None = None,
    ) -> None:
        super().__init__(source)
        self.items = list(items)
        self.tuple_type = tuple_type  # tuple, minitorch.Size or a named tuple's class

    def python_type(self) -> type:
        return self.tuple_type

    def is_named(self) -> bool:
        """A named tuple (return_types.max & co): built from its items, read by field name."""
        return hasattr(self.tuple_type, "_fields")

    def _build(self, values: list[Any]) -> Any:
        return self.tuple_type(*values) if self.is_named() else self.tuple_type(values)

    def as_python_constant(self) -> Any:
        return self._build([item.as_python_constant() for item in self.items])

    def as_graph_arg(self) -> Any:
        return tuple(item.as_graph_arg() for item in self.items)  # a Size prints as a tuple

    def as_example(self) -> Any:
        return self._build([item.as_example() for item in self.items])

    def unpack_sequence(self, tx: InstructionTranslator) -> list[VariableTracker]:
        return list(self.items)

    def getitem(self, index: Any) -> VariableTracker:
        """`t[i]` or `t[a:b]` with a constant index."""
        if isinstance(index, slice):
            return self._same_kind(self.items[index])
        if not isinstance(index, int):
            raise Unsupported(f"indexing {self.describe()} with {type(index).__name__}")
        try:
            return self.items[index]
        except IndexError as e:
            raise Unsupported(f"index {index} out of range for {self.describe()}") from e

    def _same_kind(self, items: list[VariableTracker]) -> TupleVariable:
        return TupleVariable(items)  # a slice of a tuple subclass (a Size) is a plain tuple

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        """A named tuple's field (`x.max(-1).values`); methods of a tuple of constants fold:
        `x.shape.numel()`, `shape.index(3)`."""
        from tracer.dynamo.variables.constant import ConstantVariable

        if self.is_named() and name in self.tuple_type._fields:
            return self.items[self.tuple_type._fields.index(name)]
        if not self.is_python_constant():
            raise Unsupported(f"attribute .{name} of a tuple holding tensors")
        return ConstantVariable(self.as_python_constant()).var_getattr(tx, name)

    def describe(self) -> str:
        return f"a {self.tuple_type.__name__} of {len(self.items)} items"


class ListVariable(TupleVariable):
    """A list: built in the frame, or read from it (then its mutations are replayed after the
    graph, side_effects.py); `append`, `extend`, `insert`, `pop` and `clear` are traced."""

    def __init__(self, items: list[VariableTracker], source: Source | None = None) -> None:
        super().__init__(items, tuple_type=list, source=source)

    def as_graph_arg(self) -> Any:
        return [item.as_graph_arg() for item in self.items]

    def _same_kind(self, items: list[VariableTracker]) -> ListVariable:
        return ListVariable(items)

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        if name in ListMethodVariable.METHODS:
            return ListMethodVariable(self, name)
        raise Unsupported(f"list method .{name} is not traced")


class ListMethodVariable(VariableTracker):
    """`lst.append` & co, waiting for their call: they change the tracker's items."""

    METHODS = ("append", "extend", "insert", "pop", "clear")

    def __init__(self, lst: ListVariable, name: str) -> None:
        super().__init__(None)
        self.list = lst
        self.name = name

    def python_type(self) -> type:
        return type([].append)

    def call_function(
        self, tx: InstructionTranslator, args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        from tracer.dynamo.variables.constant import constant
        from tracer.dynamo.variables.iterators import sequence_items

        items, name, n = self.list.items, self.name, len(args)
        if kwargs or n != {"append": 1, "extend": 1, "insert": 2, "clear": 0}.get(name, n) \
                or (name == "pop" and n > 1):
            raise Unsupported(f"list.{name}() with these arguments")
        indices = [a.as_python_constant() for a in args[:1]] if name in ("insert", "pop") else []
        if indices and not isinstance(indices[0], int):
            raise Unsupported(f"list.{name}() at a non-int index")
        if name == "pop" and not (items and (not indices or -len(items) <= indices[0]
                                             < len(items))):
            raise Unsupported("list.pop() from an empty list or out of range (an IndexError)")
        new = sequence_items(tx, args[0]) if name == "extend" else None
        tx.output.side_effects.mutate_container(self.list)
        if name == "append":
            items.append(args[0])
        elif name == "extend":
            items.extend(new)
        elif name == "insert":
            items.insert(indices[0], args[1])
        elif name == "clear":
            items.clear()
        else:
            return items.pop(*indices)
        return constant(None)

    def describe(self) -> str:
        return f"the method list.{self.name}"

