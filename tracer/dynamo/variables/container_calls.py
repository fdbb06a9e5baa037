"""Builtins and operators applied to containers that hold trackers, not values.

Folding a call on constants (`BuiltinVariable._fold`) runs it on *copies* of its arguments:
right for `len(shape)` or `sorted(names)`, wrong wherever the answer is, or holds, one of the
containers themselves. `b = a; b += [x]` must grow the list that `a` names too; `[[]] * 2`
holds one inner list twice; `lst[0].append(1)` changes the list inside `lst`. So a call whose
arguments hold a list, dict, set or dict view comes here first, and works on the trackers:

    list(xs), tuple(xs)      a new container of the same item trackers
    dict(...), set(...)      dicts.py's dict_from, sets.py's SetVariable
    a + b, n * a             a new list or tuple of the same item trackers
    a += b, a *= n           on a list: the list itself, grown (list.__iadd__ extends in place)
    d | e, d |= e            a new dict; the dict itself, updated
    s | t, s &= t, ...       sets.py
    x in c, len(c), c[i]     read from the trackers
    sorted(xs), reversed(xs) in the order CPython gives; the items themselves

Anything else returns None, and the caller folds it as before (its result holds no container
that could alias an argument: `_fold` checks).
"""

from __future__ import annotations

import collections
import operator
from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.dicts import ConstDictVariable, DictViewVariable, dict_from
from tracer.dynamo.variables.iterator_calls import ITERATOR_CALLS
from tracer.dynamo.variables.sets import SetVariable, set_operand, set_values
from tracer.dynamo.variables.tuples import ListVariable, TupleVariable, _sorted_order, same_item

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator

MUTABLE = (ListVariable, ConstDictVariable, SetVariable, DictViewVariable)

# `a op= b` on a set or dict: the method that does it in place
_SET_INPLACE = {
    operator.ior: "update",
    operator.iand: "intersection_update",
    operator.isub: "difference_update",
    operator.ixor: "symmetric_difference_update",
}
_SET_BINARY = {
    operator.or_: "union",
    operator.and_: "intersection",
    operator.sub: "difference",
    operator.xor: "symmetric_difference",
}


# Builtins that always come here: their answer is an iterator or a container of the trackers.
# operator's functions of containers, and its getters (`itemgetter(1)` is made while tracing and
# applied to the trackers: GETTERS)
OPERATOR_FUNCTIONS = frozenset(
    {
        operator.contains,
        operator.not_,
        operator.truth,
        operator.concat,
        operator.iconcat,
        operator.setitem,
        operator.delitem,
        operator.itemgetter,
        operator.attrgetter,
        operator.methodcaller,
    }
)
GETTERS = (operator.itemgetter, operator.attrgetter, operator.methodcaller)

CONTAINER_BUILTINS = frozenset(
    {
        *OPERATOR_FUNCTIONS,
        list,
        tuple,
        dict,
        set,
        sorted,
        reversed,
        iter,
        collections.OrderedDict,
        collections.defaultdict,
        *ITERATOR_CALLS,
    }
)


def shares_mutable(result: Any, arguments: list[Any]) -> bool:
    """Does a folded `result` hold (or is it) a list, dict or set of the `arguments` it was
    computed from? Then the fold's answer would not alias the traced containers as it must."""

    def mutable_ids(value: Any, found: set[int]) -> set[int]:
        if isinstance(value, (list, dict, set)):
            found.add(id(value))
        if isinstance(value, (list, tuple, set, frozenset)):
            for item in value:
                mutable_ids(item, found)
        elif isinstance(value, dict):
            for item in value.values():
                mutable_ids(item, found)
        return found

    return bool(mutable_ids(result, set()) & mutable_ids(arguments, set()) - {id(arguments)})


def holds_mutable(value: VariableTracker) -> bool:
    """Is `value` a list, dict, set or view, or a tuple holding one?"""
    if isinstance(value, MUTABLE):
        return True
    return isinstance(value, TupleVariable) and any(holds_mutable(v) for v in value.items)


def container_call(
    tx: InstructionTranslator,
    fn: Any,
    args: list[VariableTracker],
    kwargs: dict[str, VariableTracker],
) -> VariableTracker | None:
    """`fn(*args, **kwargs)` on containers, as CPython would run it; None if not handled."""
    from tracer.dynamo.variables.iterators import ListIteratorVariable, iterate, sequence_items

    if fn in (list, tuple) and len(args) == 1 and not kwargs:
        items = sequence_items(tx, args[0])
        return ListVariable(items) if fn is list else TupleVariable(items)
    if fn in (dict, collections.OrderedDict, collections.defaultdict):
        return dict_from(tx, args, kwargs, dict_type=fn)
    if fn in (set, frozenset) and len(args) == 1 and not kwargs:
        values = set_operand(tx, args[0])  # (filled as CPython fills it: sets.py)
        return SetVariable(set(values)) if fn is set else constant(frozenset(values))
    if fn is sorted and len(args) == 1:
        items = sequence_items(tx, args[0])
        return ListVariable([items[i] for i in _sorted_order(tx, items, kwargs)])
    if fn is reversed and len(args) == 1 and not kwargs:
        if isinstance(args[0], SetVariable):
            raise Unsupported("reversed() of a set (a TypeError)")
        return ListIteratorVariable(list(reversed(sequence_items(tx, args[0]))))
    if fn is iter and len(args) == 1 and not kwargs:
        return iterate(tx, args[0])
    if fn in OPERATOR_FUNCTIONS or isinstance(fn, GETTERS):
        return _operator_function(tx, fn, args, kwargs)
    if fn in ITERATOR_CALLS:
        return ITERATOR_CALLS[fn](tx, *args, **kwargs)
    if kwargs:
        return None
    if (
        fn is isinstance
        and len(args) == 2
        and isinstance(args[0], (*MUTABLE, TupleVariable))
        and args[1].is_python_constant()
    ):  # its type is known: made here, or guarded
        return constant(
            isinstance(args[0].python_type(), type)
            and issubclass(args[0].python_type(), args[1].as_python_constant())
        )
    if fn is len and len(args) == 1:
        return constant(container_len(args[0]))
    if fn is operator.contains and len(args) == 2:
        return constant(contains(tx, args[0], args[1]))
    if fn is operator.getitem and len(args) == 2 and isinstance(args[0], TupleVariable):
        return _getitem(tx, args[0], args[1].as_python_constant())
    if len(args) == 2:
        return _binary(tx, fn, args[0], args[1])
    return None


def _operator_function(
    tx: InstructionTranslator,
    fn: Any,
    args: list[VariableTracker],
    kwargs: dict[str, VariableTracker],
) -> VariableTracker | None:
    """operator.setitem(lst, i, v) & co as the statements they stand for; a getter made with
    constants (`itemgetter(0, 2)`) is held as the real getter and applied to trackers."""
    from tracer.dynamo.variables.functions import BuiltinVariable

    if fn in GETTERS:  # the getter itself: its arguments must be known
        if not all(v.is_python_constant() for v in [*args, *kwargs.values()]):
            raise Unsupported(f"operator.{fn.__name__}() of values not known while tracing")
        return BuiltinVariable(
            fn(
                *[a.as_python_constant() for a in args],
                **{k: v.as_python_constant() for k, v in kwargs.items()},
            )
        )
    if isinstance(fn, GETTERS):
        return _apply_getter(tx, fn, args, kwargs)
    if kwargs:
        return None
    if fn in (operator.not_, operator.truth) and len(args) == 1:
        return constant(tx.truth(args[0]) is (fn is operator.truth))
    if fn in (operator.setitem, operator.delitem) and len(args) == (
        3 if fn is operator.setitem else 2
    ):
        tx.push(*reversed(args[2:]), args[0], args[1])  # as STORE_SUBSCR finds them
        (tx.STORE_SUBSCR if fn is operator.setitem else tx.DELETE_SUBSCR)(None)
        return constant(None)
    if fn in (operator.concat, operator.iconcat) and len(args) == 2:
        if not all(_is_sequence(a) for a in args):
            raise Unsupported(f"operator.{fn.__name__}() of a non-sequence (a TypeError)")
        return _binary(tx, operator.add if fn is operator.concat else operator.iadd, *args)
    if fn is operator.contains and len(args) == 2:
        return constant(contains(tx, args[0], args[1]))
    return None


def _apply_getter(
    tx: InstructionTranslator,
    getter: Any,
    args: list[VariableTracker],
    kwargs: dict[str, VariableTracker],
) -> VariableTracker:
    """`itemgetter(1)(xs)`, `attrgetter("a.b")(obj)`, `methodcaller("m", 1)(obj)`, on the
    trackers (the getter's arguments, as its __reduce__ gives them)."""
    if len(args) != 1 or kwargs:
        raise Unsupported(f"calling {getter!r} with these arguments")
    target, parts = args[0], getter.__reduce__()[1]
    if isinstance(getter, operator.methodcaller):
        if not isinstance(parts, tuple) or not parts:  # keywords: a partial in __reduce__
            raise Unsupported(f"{getter!r} with keyword arguments")
        return target.var_getattr(tx, parts[0]).call_function(
            tx, [constant(a) for a in parts[1:]], {}
        )
    if isinstance(getter, operator.itemgetter):
        found = [
            _getitem(tx, target, key)
            if isinstance(target, TupleVariable)
            else tx.call(_builtin(operator.getitem), [target, constant(key)])
            for key in parts
        ]
    else:
        found = []
        for dotted in parts:
            value = target
            for name in dotted.split("."):
                value = value.var_getattr(tx, name)
            found.append(value)
    return found[0] if len(found) == 1 else TupleVariable(found)


def _builtin(fn: Any) -> VariableTracker:
    from tracer.dynamo.variables.functions import BuiltinVariable

    return BuiltinVariable(fn)


def _getitem(tx: InstructionTranslator, container: TupleVariable, key: Any) -> VariableTracker:
    """`c[key]`; a defaultdict's missing key is added, made by its factory."""
    if (
        isinstance(container, ConstDictVariable)
        and container.default_factory is not None
        and not container.contains(key)
    ):
        value = container.default_factory.call_function(tx, [], {})
        tx.output.side_effects.mutate_container(container)
        container.setitem(key, value)
    return container.getitem(key)


def contains(tx: InstructionTranslator, container: VariableTracker, item: VariableTracker) -> bool:
    """`item in container`, decided on the trackers."""
    if isinstance(container, ConstDictVariable):
        return container.contains(item.as_python_constant())
    if isinstance(container, DictViewVariable):
        return container.contains(tx, item)
    if isinstance(container, SetVariable):
        return set_values([item])[0] in container.values
    from tracer.dynamo.variables.iterators import sequence_items

    return any(same_item(v, item) for v in sequence_items(tx, container))


def container_len(value: VariableTracker) -> int:
    if isinstance(value, SetVariable):
        return len(value.values)
    if isinstance(value, DictViewVariable):
        return len(value.current())
    if isinstance(value, TupleVariable):
        return len(value.items)
    raise Unsupported(f"len() of {value.describe()}")


def _binary(
    tx: InstructionTranslator, fn: Any, a: VariableTracker, b: VariableTracker
) -> VariableTracker | None:
    """The operators of sequences, dicts and sets; None for the others (==, <, ...)."""
    if isinstance(a, SetVariable) or isinstance(b, SetVariable):
        return _set_operator(tx, fn, a, b)
    if isinstance(a, ConstDictVariable) and fn in (operator.or_, operator.ior):
        if not isinstance(b, ConstDictVariable) and fn is operator.or_:
            raise Unsupported(f"dict | {b.describe()} (a TypeError)")
        target = a if fn is operator.ior else ConstDictVariable(a.entries)
        if fn is operator.ior:
            tx.output.side_effects.mutate_container(a)
        target.update(b, tx)
        return target
    if fn is operator.iadd and isinstance(a, ListVariable):  # list.__iadd__: extend in place
        from tracer.dynamo.variables.iterators import sequence_items

        items = sequence_items(tx, b)
        tx.output.side_effects.mutate_container(a)
        a.items.extend(items)
        return a
    if fn is operator.imul and isinstance(a, ListVariable):
        times = _repeat_count(b)
        tx.output.side_effects.mutate_container(a)
        a.items[:] = a.items * times
        return a
    fn = {operator.iadd: operator.add, operator.imul: operator.mul}.get(fn, fn)  # tuples
    if fn is operator.add and _is_sequence(a) and _is_sequence(b):
        if (a.python_type() is list) != (b.python_type() is list):
            raise Unsupported(f"{a.describe()} + {b.describe()} (a TypeError)")
        kind = ListVariable if a.python_type() is list else TupleVariable
        return kind(a.items + b.items)
    if fn is operator.mul and (_is_sequence(a) or _is_sequence(b)):
        seq, times = (a, b) if _is_sequence(a) else (b, a)
        kind = ListVariable if seq.python_type() is list else TupleVariable
        return kind(seq.items * _repeat_count(times))
    return None


def _set_operator(
    tx: InstructionTranslator, fn: Any, a: VariableTracker, b: VariableTracker
) -> VariableTracker | None:
    other = b.as_python_constant() if b.is_python_constant() else None
    if not isinstance(a, SetVariable) or not isinstance(other, (set, frozenset)):
        return None  # `s == t`, `s <= t`: folded by the caller; `s | [1]` raises there
    if fn in _SET_INPLACE:
        tx.output.side_effects.mutate_container(a)
        getattr(a.values, _SET_INPLACE[fn])(other)
        return a
    if fn in _SET_BINARY:
        return SetVariable(getattr(a.values, _SET_BINARY[fn])(other))
    return None


def _is_sequence(value: VariableTracker) -> bool:
    return isinstance(value, TupleVariable) and not isinstance(value, ConstDictVariable)


def _repeat_count(value: VariableTracker) -> int:
    times = value.as_python_constant()
    if not isinstance(times, int):
        raise Unsupported(f"repeating a sequence {type(times).__name__} times (a TypeError)")
    return times
