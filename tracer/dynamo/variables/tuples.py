"""`TupleVariable` and `ListVariable`: sequences whose items are trackers.

A tuple may mix tensors and constants (`return (x.sin(), 3)`); a shape is a tuple of constants
whose items keep their sources (`L['x'].shape[0]`), which a later issue needs to make a size
dynamic instead of guarding it. Lists are mutable, so only lists *built in the frame* are
tracked (BUILD_LIST, `a, *rest = ...`), and none of their methods run yet.
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
        self.tuple_type = tuple_type  # tuple or minitorch.Size

    def python_type(self) -> type:
        return self.tuple_type

    def as_python_constant(self) -> Any:
        return self.tuple_type(item.as_python_constant() for item in self.items)

    def as_graph_arg(self) -> Any:
        return tuple(item.as_graph_arg() for item in self.items)  # a Size prints as a tuple

    def as_example(self) -> Any:
        return self.tuple_type(item.as_example() for item in self.items)

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
        """Methods of a tuple of constants fold: `x.shape.numel()`, `shape.index(3)`."""
        from tracer.dynamo.variables.constant import ConstantVariable

        if not self.is_python_constant():
            raise Unsupported(f"attribute .{name} of a tuple holding tensors")
        return ConstantVariable(self.as_python_constant()).var_getattr(tx, name)

    def describe(self) -> str:
        return f"a {self.tuple_type.__name__} of {len(self.items)} items"


class ListVariable(TupleVariable):
    """A list created in the frame; its methods (which mutate) are not traced yet."""

    def __init__(self, items: list[VariableTracker], source: Source | None = None) -> None:
        super().__init__(items, tuple_type=list, source=source)

    def as_graph_arg(self) -> Any:
        return [item.as_graph_arg() for item in self.items]

    def _same_kind(self, items: list[VariableTracker]) -> ListVariable:
        return ListVariable(items)

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        raise Unsupported(f"list method .{name} (lists are only built, not mutated, for now)")

