"""`ConstDictVariable`: a dict with constant keys (str or int) whose values are trackers.

    {"a": x * 2, "b": 3}     BUILD_CONST_KEY_MAP    ConstDictVariable({'a': %mul, 'b': 3})
    d["a"], len(d), k in d   folded on the keys      a tracker, a constant, a constant
    for k, v in d.items()    unrolled                one (key, value) tuple per item
    d (an argument)          guarded on its type and keys, in order; L['d']['a'] per value

A dict is a TupleVariable of its *values* with the keys beside them: everything that walks a
container's items (a graph's outputs, the live values at a graph break) sees the tensors in
it, and codegen rebuilds `{'a': graph_out[0], 'b': 3}`. A dict may be mutated while tracing
(`d[k] = v`, MAP_ADD, `d.update`); one read from the frame is then written back after the graph
runs (side_effects.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.tuples import TupleVariable

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator

KEY_TYPES = (str, int)  # keys tracing can hold exactly (bool is an int: True == 1, like eager)


class ConstDictVariable(TupleVariable):
    """A dict whose keys are constants; `items` are its values, in the keys' order."""

    def __init__(self, entries: dict[Any, VariableTracker],
                 source: Source | None = None) -> None:
        super().__init__(list(entries.values()), tuple_type=dict, source=source)
        self.keys = list(entries)

    @property
    def entries(self) -> dict[Any, VariableTracker]:
        return dict(zip(self.keys, self.items))

    def as_python_constant(self) -> Any:
        return {k: v.as_python_constant() for k, v in zip(self.keys, self.items)}

    def as_graph_arg(self) -> Any:
        return {k: v.as_graph_arg() for k, v in zip(self.keys, self.items)}

    def as_example(self) -> Any:
        return {k: v.as_example() for k, v in zip(self.keys, self.items)}

    def unpack_sequence(self, tx: InstructionTranslator) -> list[VariableTracker]:
        """Iterating a dict gives its keys."""
        return [constant(k) for k in self.keys]

    def getitem(self, key: Any) -> VariableTracker:
        """`d[key]` with a constant key."""
        if key not in self.keys:
            raise Unsupported(f"key {key!r} is not in {self.describe()} (a KeyError)")
        return self.items[self.keys.index(key)]

    def contains(self, key: Any) -> bool:
        return key in self.keys

    def setitem(self, key: Any, value: VariableTracker) -> None:
        """`d[key] = value` (STORE_SUBSCR, MAP_ADD); the caller of a dict with a source
        records it in side_effects.py first."""
        if not isinstance(key, KEY_TYPES):
            raise Unsupported(f"a dict key of type {type(key).__name__} (only str and int keys "
                              "are traced)")
        if key in self.keys:
            self.items[self.keys.index(key)] = value
        else:
            self.keys.append(key)
            self.items.append(value)

    def update(self, other: VariableTracker) -> None:
        """`{**a, **b}` (DICT_UPDATE) and `d.update(other)`."""
        if not isinstance(other, ConstDictVariable):
            raise Unsupported(f"updating a dict from {other.describe()}")
        for k, v in zip(other.keys, other.items):
            self.setitem(k, v)

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        if name in ("keys", "values", "items", "get", "update"):
            return DictMethodVariable(self, name)
        raise Unsupported(f"dict method .{name} is not traced")

    def describe(self) -> str:
        where = f" ({self.source.name()})" if self.source is not None else ""
        return f"a dict of {len(self.keys)} items{where}"


class DictMethodVariable(VariableTracker):
    """`d.items` & co, waiting for their call. Views come back as tuples (read, never kept)."""

    def __init__(self, d: ConstDictVariable, name: str) -> None:
        super().__init__(None)
        self.dict = d
        self.name = name

    def python_type(self) -> type:
        return type(getattr({}, self.name))

    def call_function(
        self, tx: InstructionTranslator, args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        d, name = self.dict, self.name
        if kwargs or len(args) > (2 if name == "get" else 1 if name == "update" else 0):
            raise Unsupported(f"dict.{name}() with these arguments")
        if name == "keys":
            return TupleVariable([constant(k) for k in d.keys])
        if name == "values":
            return TupleVariable(list(d.items))
        if name == "items":
            return TupleVariable([TupleVariable([constant(k), v]) for k, v in d.entries.items()])
        if name == "update" and len(args) == 1:
            tx.output.side_effects.mutate_container(d)  # a dict of the caller: replayed
            d.update(args[0])
            return constant(None)
        if name == "get" and args:
            key = args[0].as_python_constant()
            return d.getitem(key) if d.contains(key) else (args[1] if len(args) > 1
                                                            else constant(None))
        raise Unsupported(f"dict.{name}() with these arguments")

    def describe(self) -> str:
        return f"the method dict.{self.name}"
