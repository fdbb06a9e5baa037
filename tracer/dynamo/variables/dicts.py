"""`ConstDictVariable`: a dict with constant keys (`is_key`) whose values are trackers.

    {"a": x * 2, "b": 3}     BUILD_CONST_KEY_MAP    ConstDictVariable({'a': %mul, 'b': 3})
    d["a"], len(d), k in d   folded on the keys      a tracker, a constant, a constant
    for k, v in d.items()    unrolled                one (key, value) tuple per item
    d (an argument)          guarded on its type and keys, in order; L['d']['a'] per value

A dict is a TupleVariable of its *values* with the keys beside them: everything that walks a
container's items (a graph's outputs, the live values at a graph break) sees the tensors in
it, and codegen rebuilds `{'a': graph_out[0], 'b': 3}`. A dict may be mutated while tracing
(`d[k] = v`, MAP_ADD, `d.update`, `setdefault`, `pop`, `del d[k]`); one read from the frame is
then written back after the graph runs (side_effects.py).

[Note: dict views are live]
`d.keys()`, `d.values()` and `d.items()` are views: they hold the dict, not its items, so a
view taken before `d["a"] = y` sees `y` when it is iterated. `DictViewVariable` is that: it
keeps the dict's tracker and reads its entries each time it is used, and it is rebuilt as
`<the dict>.values()` after the graph, so a returned view stays a view of the dict returned
beside it (transformed_code.py rebuilds each container once).
"""

from __future__ import annotations

import collections
import math
from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.tuples import TupleVariable

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator


def is_key(key: Any) -> bool:
    """Can tracing hold `key` as a dict key? A constant whose repr is itself (the transformed
    code and the guards write keys as literals): str, int, bool, None, a finite float, or a
    tuple or frozenset of these. Keys are compared with ==, as dicts do (True == 1 is one key)."""
    if type(key) is float:
        return math.isfinite(key)
    if type(key) in (tuple, frozenset):
        return all(is_key(k) for k in key)
    return key is None or type(key) in (str, int, bool)


class ConstDictVariable(TupleVariable):
    """A dict whose keys are constants; `items` are its values, in the keys' order.

    Also a `collections.OrderedDict` or a `defaultdict` made in the frame (`dict_type`);
    a defaultdict's `default_factory` is a tracker, called when a missing key is read
    (container_calls.py)."""

    def __init__(
        self,
        entries: dict[Any, VariableTracker],
        source: Source | None = None,
        dict_type: type = dict,
        default_factory: VariableTracker | None = None,
    ) -> None:
        super().__init__(list(entries.values()), tuple_type=dict_type, source=source)
        self.keys = list(entries)
        self.default_factory = default_factory

    @property
    def entries(self) -> dict[Any, VariableTracker]:
        return dict(zip(self.keys, self.items))

    def as_python_constant(self) -> Any:
        if self.default_factory is not None:
            raise Unsupported(f"{self.describe()} is not a constant")
        return self.tuple_type({k: v.as_python_constant() for k, v in zip(self.keys, self.items)})

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
        if not is_key(key):
            raise Unsupported(
                f"a dict key of type {type(key).__name__} (only constant keys "
                "are traced: str, int, bool, None, float, tuples of them)"
            )
        if key in self.keys:
            self.items[self.keys.index(key)] = value
        else:
            self.keys.append(key)
            self.items.append(value)

    def delitem(self, key: Any) -> VariableTracker:
        """`del d[key]`, `d.pop(key)`: the value removed."""
        value = self.getitem(key)
        index = self.keys.index(key)
        del self.keys[index], self.items[index]
        return value

    def update(self, other: VariableTracker, tx: InstructionTranslator | None = None) -> None:
        """`{**a, **b}` (DICT_UPDATE) and `d.update(other)`: from a dict, or (given `tx`) from
        any iterable of (key, value) pairs, as dict.update takes them."""
        if isinstance(other, ConstDictVariable):
            pairs = list(zip(other.keys, other.items))
        elif tx is not None:
            pairs = [_pair(tx, item) for item in _items_of(tx, other)]
        else:
            raise Unsupported(f"updating a dict from {other.describe()}")
        for k, v in pairs:
            self.setitem(k, v)

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        if name in DictMethodVariable.METHODS:
            return DictMethodVariable(self, name)
        raise Unsupported(f"dict method .{name} is not traced")

    def describe(self) -> str:
        where = f" ({self.source.name()})" if self.source is not None else ""
        return f"a {self.tuple_type.__name__} of {len(self.keys)} items{where}"


class DictViewVariable(VariableTracker):
    """`d.keys()`, `d.values()`, `d.items()`: a live view of the dict's tracker."""

    def __init__(self, d: ConstDictVariable, kind: str) -> None:
        super().__init__(None)
        self.dict = d
        self.kind = kind  # 'keys', 'values' or 'items'

    def python_type(self) -> type:
        return type(getattr({}, self.kind)())

    def current(self) -> list[VariableTracker]:
        """What iterating the view gives now."""
        d = self.dict
        if self.kind == "keys":
            return [constant(k) for k in d.keys]
        if self.kind == "values":
            return list(d.items)
        return [TupleVariable([constant(k), v]) for k, v in zip(d.keys, d.items)]

    def unpack_sequence(self, tx: InstructionTranslator) -> list[VariableTracker]:
        return self.current()

    def as_python_constant(self) -> Any:
        return getattr(self.dict.as_python_constant(), self.kind)()

    def contains(self, tx: InstructionTranslator, item: VariableTracker) -> bool:
        """`k in d.keys()`; `(k, v) in d.items()` (the key looked up, then its value compared
        as CPython compares it: identity first); `v in d.values()`."""
        from tracer.dynamo.variables.tuples import same_item

        if self.kind == "keys":
            return self.dict.contains(item.as_python_constant())
        if self.kind == "values":
            return any(same_item(v, item) for v in self.dict.items)
        pair = item.unpack_sequence(tx) if isinstance(item, TupleVariable) else None
        if pair is None or len(pair) != 2:
            return False  # only a (key, value) pair can be an item
        key = pair[0].as_python_constant()
        return self.dict.contains(key) and same_item(self.dict.getitem(key), pair[1])

    def describe(self) -> str:
        return f"the view dict.{self.kind}() of {self.dict.describe()}"


class DictMethodVariable(VariableTracker):
    """`d.items` & co, waiting for their call."""

    METHODS = (
        "keys",
        "values",
        "items",
        "get",
        "update",
        "setdefault",
        "pop",
        "popitem",
        "copy",
        "clear",
        "move_to_end",
    )
    ARITY = {
        "get": (1, 2),
        "update": (0, 1),
        "setdefault": (1, 2),
        "pop": (1, 2),
        "move_to_end": (1, 2),
        "popitem": (0, 1),
    }

    def __init__(self, d: ConstDictVariable, name: str) -> None:
        super().__init__(None)
        self.dict = d
        self.name = name

    def python_type(self) -> type:
        return type(getattr({}, self.name))

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        d, name = self.dict, self.name
        if name in ("popitem", "move_to_end") and set(kwargs) == {"last"}:
            args, kwargs = [*args, kwargs["last"]], {}  # OrderedDict's keyword
        least, most = self.ARITY.get(name, (0, 0))
        if not least <= len(args) <= most or (kwargs and name != "update"):
            raise Unsupported(f"dict.{name}() with these arguments")
        if name in ("keys", "values", "items"):
            return DictViewVariable(d, name)
        if name == "copy":
            return ConstDictVariable(
                d.entries, dict_type=d.tuple_type, default_factory=d.default_factory
            )
        key = _dict_key(args[0]) if args and name != "update" else None
        if name == "get":
            return (
                d.getitem(key)
                if d.contains(key)
                else (args[1] if len(args) > 1 else constant(None))
            )
        if name == "pop" and not d.contains(key):
            if len(args) == 1:
                raise Unsupported(f"dict.pop({key!r}) of a missing key (a KeyError)")
            return args[1]
        if name == "setdefault" and d.contains(key):
            return d.getitem(key)
        if name == "popitem" and not d.keys:
            raise Unsupported("dict.popitem() of an empty dict (a KeyError)")
        if name in ("move_to_end", "popitem") and args and d.tuple_type is dict:
            raise Unsupported(f"dict.{name}() with these arguments")
        if name == "move_to_end" and (
            d.tuple_type is not collections.OrderedDict or not d.contains(key)
        ):
            raise Unsupported(f"move_to_end() on {d.describe()} (an AttributeError or KeyError)")
        tx.output.side_effects.mutate_container(d)  # one of the caller: replayed
        if name == "update":
            for other in args:
                d.update(other, tx)
            for k, v in kwargs.items():
                d.setitem(k, v)
            return constant(None)
        if name == "setdefault":
            d.setitem(key, args[1] if len(args) > 1 else constant(None))
            return d.getitem(key)
        if name == "pop":
            return d.delitem(key)
        # popitem(last=True), move_to_end(key, last=True): OrderedDict's
        positional_last = args[1:] if name == "move_to_end" else args
        last = positional_last[0].as_python_constant() if positional_last else True
        if name == "popitem":
            k = d.keys[-1 if last else 0]
            return TupleVariable([constant(k), d.delitem(k)])
        if name == "move_to_end":
            value = d.delitem(key)
            d.keys.insert(len(d.keys) if last else 0, key)
            d.items.insert(len(d.items) if last else 0, value)
            return constant(None)
        d.keys.clear()  # clear
        d.items.clear()
        return constant(None)

    def describe(self) -> str:
        return f"the method dict.{self.name}"


def _dict_key(key: VariableTracker) -> Any:
    if not key.is_python_constant() or not is_key(key.as_python_constant()):
        raise Unsupported(
            f"a dict key that is {key.describe()} (only constant keys are "
            "traced: str, int, bool, None, float, tuples of them)"
        )
    return key.as_python_constant()


def _items_of(tx: InstructionTranslator, iterable: VariableTracker) -> list[VariableTracker]:
    from tracer.dynamo.variables.iterators import sequence_items

    return sequence_items(tx, iterable)


def _pair(tx: InstructionTranslator, item: VariableTracker) -> tuple[Any, VariableTracker]:
    """One (key, value) item of what dict() and dict.update take besides a dict."""
    parts = item.unpack_sequence(tx)
    if len(parts) != 2:
        raise Unsupported(f"a dict update item of {len(parts)} values (a ValueError)")
    return _dict_key(parts[0]), parts[1]


def dict_from(
    tx: InstructionTranslator,
    args: list[VariableTracker],
    kwargs: dict[str, VariableTracker],
    dict_type: type = dict,
) -> ConstDictVariable:
    """`dict()`, `dict(other)`, `dict(pairs)`, `dict(a=1)`: a new dict of the same values;
    `OrderedDict(...)` alike, and `defaultdict(factory, ...)`."""
    factory = None
    if dict_type is collections.defaultdict:
        factory, *args = args or [constant(None)]
        if factory.is_python_constant() and factory.as_python_constant() is None:
            raise Unsupported("a defaultdict without a default_factory")
    if len(args) > 1:
        raise Unsupported(f"dict() with {len(args)} positional arguments (a TypeError)")
    d = ConstDictVariable({}, dict_type=dict_type, default_factory=factory)
    for other in args:
        d.update(other, tx)
    for k, v in kwargs.items():
        d.setitem(k, v)
    return d
