"""`ConstantVariable`: a Python value tracing knows exactly, folded wherever it is used.

Constants come from LOAD_CONST, from guarded arguments and globals (`L['n'] == 3`), and from
everything computed out of them: `x.shape[0]`, `math.sqrt(d)`, `x.dtype`. They never reach the
graph as inputs: `x * scale` with `scale == 2.0` records `operator.mul(x, 2.0)`.

    >>> constant((3, 4))                # tuples become TupleVariables of constants
    TupleVariable(a value of type tuple)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from minitorch.device import device
from minitorch.dtype import DType
from minitorch.memory_format import memory_format
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import Source
from tracer.dynamo.variables.base import VariableTracker

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator

# Immutable values: calling their methods cannot change them, so folding is safe.
CONSTANT_TYPES = (
    type(None),
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    slice,
    range,
    frozenset,
    type(...),
    DType,
    device,
    memory_format,
)


def constant(value: Any, source: Source | None = None) -> VariableTracker:
    """The tracker of a known value: tuples and lists hold one tracker per item."""
    from tracer.dynamo.source import GetItemSource
    from tracer.dynamo.variables.tuples import ListVariable, TupleVariable

    if isinstance(value, (tuple, list)):
        items = [
            constant(v, None if source is None else GetItemSource(source, i))
            for i, v in enumerate(value)
        ]
        if isinstance(value, list):
            return ListVariable(items, source=source)
        return TupleVariable(items, tuple_type=type(value), source=source)
    if type(value) is set and source is None:  # a set computed while tracing: s | t
        from tracer.dynamo.variables.sets import SetVariable

        return SetVariable(value)
    from tracer.dynamo.variables.dicts import ConstDictVariable, is_key

    if type(value) is dict and source is None and all(is_key(k) for k in value):
        return ConstDictVariable({k: constant(v) for k, v in value.items()})
    if not isinstance(value, CONSTANT_TYPES):
        raise Unsupported(f"a value of type {type(value).__name__} where a constant was expected")
    return ConstantVariable(value, source=source)


class ConstantVariable(VariableTracker):
    """A known immutable Python value."""

    def __init__(self, value: Any, source: Source | None = None) -> None:
        super().__init__(source)
        self.value = value

    def python_type(self) -> type:
        return type(self.value)

    def as_python_constant(self) -> Any:
        return self.value

    def as_graph_arg(self) -> Any:
        return self.value

    def as_example(self) -> Any:
        return self.value

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        """`x.dtype.is_floating_point`, `(3).bit_length`: read on the real, immutable value."""
        from tracer.dynamo.variables.functions import BuiltinVariable

        try:
            attr = getattr(self.value, name)
        except AttributeError as e:
            raise Unsupported(f"{self.describe()} has no attribute {name!r}") from e
        return BuiltinVariable(attr) if callable(attr) else constant(attr)

    def unpack_sequence(self, tx: InstructionTranslator) -> list[VariableTracker]:
        """`(0, *range(2, n))`, `a, b = "ab"`: the items of a range or a string."""
        if not isinstance(self.value, (range, str)):
            raise Unsupported(f"unpacking {self.describe()}")
        return [constant(v) for v in self.value]

    def describe(self) -> str:
        return f"the constant {self.value!r}"
