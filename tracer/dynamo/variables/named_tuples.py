"""Named tuple classes: calling one builds a TupleVariable of that type, read by field name.

    P = namedtuple("P", "a b")     NamedTupleClassVariable    G['P'] is ___type_P   ID_MATCH
    p = P(x, b=x + 1)              TupleVariable(P)           items [%x, %add]
    p.a + p.b                      its items                  one graph, no object made
    Q = namedtuple("Q", ["a"])     made while tracing: the class is created once, for real

A named tuple is a tuple: its items are trackers like any tuple's, so a returned one is
rebuilt from the graph's outputs as `P(graph_out[0], graph_out[1])` (transformed_code.py).

NOTE: a class made in the frame (`namedtuple(...)` inside the function) is made once, while
tracing, and every call of the compiled code uses that one class, where eager makes a new
class on each call. Values, field names, the class's name and module are the same; only
`type(p) is type(p_from_another_call)` tells them apart (True compiled, False eager).
"""

from __future__ import annotations

import collections
import inspect
from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.tuples import TupleVariable

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator


def is_named_tuple_class(value: Any) -> bool:
    """A class made by collections.namedtuple or typing.NamedTuple (or a subclass of one that
    keeps its __new__ and adds no __init__): calling it only stores its arguments."""
    if not (isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields")):
        return False
    owner = next((k for k in value.__mro__ if "_fields" in vars(k)), None)
    return (
        owner is not None  # NOTE: a class stores its __new__ as a staticmethod
        and vars(owner).get("__new__") is inspect.getattr_static(value, "__new__")
        and value.__init__ is object.__init__
    )


class NamedTupleClassVariable(VariableTracker):
    """A named tuple's class (see the module docstring)."""

    def __init__(self, cls: type, source: Source | None = None) -> None:
        super().__init__(source)
        self.value = cls  # the class

    def python_type(self) -> type:
        return type(self.value)

    def as_python_constant(self) -> Any:
        return self.value  # `isinstance(p, P)`, `type(p) is P` fold

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        try:
            bound = inspect.signature(self.value).bind(*args, **kwargs)
        except TypeError as e:  # eager raises it again, at the user's line
            raise Unsupported(f"calling {self.describe()}: {e}") from e
        bound.apply_defaults()  # a default is the constant the class was made with
        items = [
            value if isinstance(value, VariableTracker) else constant(value)
            for value in bound.arguments.values()
        ]
        return TupleVariable(items, tuple_type=self.value)

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        if name in ("_fields", "__name__", "__qualname__", "__module__"):
            return constant(getattr(self.value, name))
        return super().var_getattr(tx, name)

    def describe(self) -> str:
        where = f" ({self.source.name()})" if self.source is not None else ""
        return f"the named tuple class {self.value.__name__}{where}"


class NamedTupleFactoryVariable(VariableTracker):
    """`collections.namedtuple` itself: called with constants, it makes the class for real,
    named after the frame's module as eager's would be (see the NOTE above)."""

    def __init__(self, source: Source | None = None) -> None:
        super().__init__(source)

    def python_type(self) -> type:
        return type(collections.namedtuple)

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        try:
            values = [a.as_python_constant() for a in args]
            keywords = {k: v.as_python_constant() for k, v in kwargs.items()}
        except Unsupported as e:
            raise Unsupported(f"namedtuple() with arguments that are not constants: {e}") from e
        keywords.setdefault("module", tx.frame.f_globals.get("__name__"))
        try:
            cls = collections.namedtuple(*values, **keywords)
        except (TypeError, ValueError) as e:  # eager raises it again, at the user's line
            raise Unsupported(f"namedtuple() raised {type(e).__name__}: {e}") from e
        return NamedTupleClassVariable(cls)

    def describe(self) -> str:
        return "the function collections.namedtuple"
