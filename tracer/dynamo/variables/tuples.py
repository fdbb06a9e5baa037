"""`TupleVariable` and `ListVariable`: sequences whose items are trackers.

A tuple may mix tensors and constants (`return (x.sin(), 3)`); a shape is a tuple of constants
whose items keep their sources (`L['x'].shape[0]`), which a later issue needs to make a size
dynamic instead of guarding it. A named tuple (`x.max(-1)` returns
`minitorch.return_types.max(values, indices)`) is a TupleVariable of its type: `[0]`,
`.values` and `v, i = ...` read its items, and returning it rebuilds the same type.

Lists are mutable: a `ListVariable` is one tracker per list, shared by every name that holds
it, so a mutation through one alias (`b = a; b += [x]`, `a.append(x)`) is seen through all.
One read from the frame is written back after the graph (side_effects.py); operators on
lists (`+`, `+=`, `*`, `in`) are in container_calls.py.
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
        self,
        items: list[VariableTracker],
        tuple_type: type = tuple,
        source: Source | None = None,
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
        if self.is_named() and name in ("_replace", "_asdict"):
            return NamedTupleMethodVariable(self, name)
        if self.is_named() and name == "_fields":
            return ConstantVariable(self.tuple_type._fields)
        if not self.is_python_constant():
            raise Unsupported(f"attribute .{name} of a tuple holding tensors")
        return ConstantVariable(self.as_python_constant()).var_getattr(tx, name)

    def describe(self) -> str:
        return f"a {self.tuple_type.__name__} of {len(self.items)} items"


class NamedTupleMethodVariable(VariableTracker):
    """`p._replace(y=v)` (a new named tuple of the same items but those given) and
    `p._asdict()` (a dict of the fields), on the trackers."""

    def __init__(self, tup: TupleVariable, name: str) -> None:
        super().__init__(None)
        self.tuple = tup
        self.name = name

    def python_type(self) -> type:
        return type(print)

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        from tracer.dynamo.variables.dicts import ConstDictVariable

        fields = self.tuple.tuple_type._fields
        if args or (self.name == "_asdict" and kwargs) or set(kwargs) - set(fields):
            raise Unsupported(f"{self.name}() with these arguments (a TypeError or ValueError)")
        if self.name == "_asdict":
            return ConstDictVariable(dict(zip(fields, self.tuple.items)))
        items = [kwargs.get(f, item) for f, item in zip(fields, self.tuple.items)]
        return TupleVariable(items, tuple_type=self.tuple.tuple_type)

    def describe(self) -> str:
        return f"the method {self.tuple.tuple_type.__name__}.{self.name}"


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
    """`lst.append` & co, waiting for their call: the mutators change the tracker's items (and
    the caller's list, if it has a source, is written back: side_effects.py)."""

    MUTATORS = ("append", "extend", "insert", "pop", "clear", "remove", "reverse", "sort")
    METHODS = (*MUTATORS, "index", "count", "copy")
    # (least, most) positional arguments of each method
    ARITY = {
        "append": (1, 1),
        "extend": (1, 1),
        "insert": (2, 2),
        "pop": (0, 1),
        "remove": (1, 1),
        "index": (1, 3),
        "count": (1, 1),
    }

    def __init__(self, lst: ListVariable, name: str) -> None:
        super().__init__(None)
        self.list = lst
        self.name = name

    def python_type(self) -> type:
        return type([].append)

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        from tracer.dynamo.variables.constant import constant
        from tracer.dynamo.variables.iterators import sequence_items

        items, name = self.list.items, self.name
        least, most = self.ARITY.get(name, (0, 0))
        if not least <= len(args) <= most or (kwargs and name != "sort"):
            raise Unsupported(f"list.{name}() with these arguments")
        if name in ("index", "count", "remove"):
            if name == "count":
                return constant(sum(same_item(item, args[0]) for item in items))
            bounds = slice(*[a.as_python_constant() for a in args[1:]] or [None])
            found = next(
                (i for i in range(len(items))[bounds] if same_item(items[i], args[0])), None
            )  # the first, as CPython
            if found is None:
                raise Unsupported(f"list.{name}() of an item not in the list (a ValueError)")
            if name == "index":
                return constant(found)
        if name == "copy":
            return ListVariable(list(items))
        position = args[0].as_python_constant() if name in ("insert", "pop") and args else -1
        if name in ("insert", "pop") and not isinstance(position, int):
            raise Unsupported(f"list.{name}() at a non-int index")
        if name == "pop" and not -len(items) <= position < len(items):
            raise Unsupported("list.pop() from an empty list or out of range (an IndexError)")
        new = sequence_items(tx, args[0]) if name == "extend" else None
        order = _sorted_order(tx, items, kwargs) if name == "sort" else None
        tx.output.side_effects.mutate_container(self.list)
        if name == "append":
            items.append(args[0])
        elif name == "extend":
            items.extend(new)
        elif name == "insert":
            items.insert(position, args[1])
        elif name == "clear":
            items.clear()
        elif name == "remove":
            del items[found]
        elif name == "reverse":
            items.reverse()
        elif name == "sort":
            items[:] = [items[i] for i in order]
        else:
            return items.pop(position)
        return constant(None)

    def describe(self) -> str:
        return f"the method list.{self.name}"


def same_item(item: VariableTracker, value: VariableTracker) -> bool:
    """`item == value` as list.index and `in` decide it (identity first, then ==), when tracing
    knows the answer: the same tracker, or two constants."""
    if item is value:
        return True
    if item.is_python_constant() and value.is_python_constant():
        return bool(item.as_python_constant() == value.as_python_constant())
    raise Unsupported(
        f"comparing {item.describe()} with {value.describe()} (== on a tensor depends on its data)"
    )


def _sorted_order(
    tx: InstructionTranslator, items: list[VariableTracker], kwargs: dict[str, VariableTracker]
) -> list[int]:
    """The order list.sort(key=, reverse=) puts `items` in (stable, as CPython's); each key
    must be known while tracing."""
    if set(kwargs) - {"key", "reverse"}:
        raise Unsupported(f"list.sort() with keyword arguments {sorted(kwargs)}")
    key = kwargs.get("key")
    if key is not None and key.is_python_constant() and key.as_python_constant() is None:
        key = None
    reverse = kwargs["reverse"].as_python_constant() if "reverse" in kwargs else False
    keys = [item if key is None else key.call_function(tx, [item], {}) for item in items]
    values = [_SortKey(k) for k in keys]
    try:
        return sorted(range(len(items)), key=values.__getitem__, reverse=bool(reverse))
    except TypeError as e:
        raise Unsupported(f"sorting a list raised TypeError: {e}") from e


class _SortKey:
    """A sort key that compares trackers as CPython compares the values: constants by value,
    tuples item by item up to the first pair that differs (`("a", x) < ("b", y)` is decided
    by the strings, the tensors never compared); anything else is not known while tracing."""

    def __init__(self, tracker: VariableTracker) -> None:
        self.tracker = tracker

    def __lt__(self, other: _SortKey) -> bool:
        return _less(self.tracker, other.tracker)


def _less(a: VariableTracker, b: VariableTracker) -> bool:
    if a.is_python_constant() and b.is_python_constant():
        return a.as_python_constant() < b.as_python_constant()
    if type(a) is TupleVariable and type(b) is TupleVariable:
        for x, y in zip(a.items, b.items):
            if not same_item(x, y):  # the first pair that differs decides
                return _less(x, y)
        return len(a.items) < len(b.items)
    raise Unsupported(f"comparing {a.describe()} with {b.describe()} while sorting")
