"""`map`, `filter`, `any`, `all`, `max`, `next`, `functools.reduce`, `itertools`, on trackers.

Each function here takes the trackers of a call's arguments and gives what CPython's would,
without folding: the items stay trackers (tensors among them), and a function the iterator
calls (`map(lambda t: t + 1, xs)`) is traced when the item is read, so a lazy iterator is
lazy here too. The ones that combine whole sequences (`product`, `combinations`, ...) run
CPython's own itertools on the *positions* of the items and pick the trackers by position:
the order is CPython's by construction.

    map(f, xs)               f called on each item as it is read        lazy
    itertools.chain(a, b)    the items of a, then b                     lazy
    itertools.product(a, b)  tuples of trackers, in CPython's order     computed at once
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator


def _items(tx: InstructionTranslator, iterable: VariableTracker) -> list[VariableTracker]:
    from tracer.dynamo.variables.iterators import sequence_items

    return sequence_items(tx, iterable)


def _iterator(tx: InstructionTranslator, iterable: VariableTracker):
    from tracer.dynamo.variables.iterators import iterate

    return iterate(tx, iterable)


def _lazy(what: str, generator: Iterator[VariableTracker]) -> VariableTracker:
    from tracer.dynamo.variables.iterators import LazyIteratorVariable

    return LazyIteratorVariable(generator, what)


def _eager(items: list[VariableTracker]) -> VariableTracker:
    from tracer.dynamo.variables.iterators import ListIteratorVariable

    return ListIteratorVariable(items)


def _tuple(items: Any) -> VariableTracker:
    from tracer.dynamo.variables.tuples import TupleVariable

    return TupleVariable(list(items))


def _int(value: VariableTracker | None, default: int | None = None) -> int | None:
    if value is None:
        return default
    number = value.as_python_constant()
    if number is not None and not isinstance(number, int):
        raise Unsupported(f"an itertools count of type {type(number).__name__} (a TypeError)")
    return number


def _call(tx: InstructionTranslator, fn: VariableTracker, args: list[VariableTracker]):
    return fn.call_function(tx, args, {})


def _columns(tx: InstructionTranslator, iterables: tuple[VariableTracker, ...]):
    """Rows of one item of each iterable, read as zip reads them (stops at the shortest)."""
    iterators = [_iterator(tx, a) for a in iterables]
    while True:
        row = []
        for it in iterators:
            item = it.next_item(tx)
            if item is None:
                return
            row.append(item)
        yield row


def map_(tx: InstructionTranslator, fn: VariableTracker, *iterables: VariableTracker):
    if not iterables:
        raise Unsupported("map() with no iterable (a TypeError)")
    return _lazy("map", (_call(tx, fn, row) for row in _columns(tx, iterables)))


def filter_(tx: InstructionTranslator, fn: VariableTracker, iterable: VariableTracker):
    keep_all = fn.is_python_constant() and fn.as_python_constant() is None

    def generator():
        it = _iterator(tx, iterable)
        while (item := it.next_item(tx)) is not None:
            if tx.truth(item if keep_all else _call(tx, fn, [item])):
                yield item

    return _lazy("filter", generator())


def any_all(which: Callable) -> Callable:
    """any() / all(): read items until one decides, as CPython stops reading there."""

    def call(tx: InstructionTranslator, iterable: VariableTracker) -> VariableTracker:
        it = _iterator(tx, iterable)
        while (item := it.next_item(tx)) is not None:
            if tx.truth(item) is (which is any):
                return constant(which is any)
        return constant(which is all)

    return call


def next_(tx: InstructionTranslator, iterator: VariableTracker, *default: VariableTracker):
    from tracer.dynamo.variables.iterators import ListIteratorVariable

    if not isinstance(iterator, ListIteratorVariable):
        raise Unsupported(f"next() of {iterator.describe()} (a TypeError: not an iterator)")
    item = iterator.next_item(tx)
    if item is None and not default:
        raise Unsupported("next() of an exhausted iterator (StopIteration)")
    return default[0] if item is None else item


def reduce_(
    tx: InstructionTranslator,
    fn: VariableTracker,
    iterable: VariableTracker,
    *initial: VariableTracker,
):
    items = [*initial, *_items(tx, iterable)]
    if not items:
        raise Unsupported(
            "functools.reduce() of an empty sequence with no initial value (a TypeError)"
        )
    total = items[0]
    for item in items[1:]:
        total = _call(tx, fn, [total, item])
    return total


def chain(tx: InstructionTranslator, *iterables: VariableTracker):
    return _lazy("chain", (item for it in iterables for item in _lazy_items(tx, it)))


def chain_from_iterable(tx: InstructionTranslator, iterables: VariableTracker):
    return _lazy(
        "chain", (item for it in _lazy_items(tx, iterables) for item in _lazy_items(tx, it))
    )


def _lazy_items(tx: InstructionTranslator, iterable: VariableTracker):
    it = _iterator(tx, iterable)
    while (item := it.next_item(tx)) is not None:
        yield item


def islice(tx: InstructionTranslator, iterable: VariableTracker, *bounds: VariableTracker):
    positions = itertools.islice(itertools.count(), *[b.as_python_constant() for b in bounds])

    def generator():
        it = _iterator(tx, iterable)
        read = 0
        for wanted in positions:
            while read <= wanted:
                item = it.next_item(tx)
                if item is None:
                    return
                read += 1
            yield item

    return _lazy("islice", generator())


def accumulate(
    tx: InstructionTranslator,
    iterable: VariableTracker,
    func: VariableTracker | None = None,
    *,
    initial: VariableTracker | None = None,
):
    from tracer.dynamo.variables.functions import BuiltinVariable

    add = (
        func
        if func is not None
        and not (func.is_python_constant() and func.as_python_constant() is None)
        else BuiltinVariable(operator.add)
    )
    start = (
        None
        if initial is None
        or (initial.is_python_constant() and initial.as_python_constant() is None)
        else initial
    )

    def generator():
        total = start
        if total is not None:
            yield total
        for item in _lazy_items(tx, iterable):
            total = item if total is None else _call(tx, add, [total, item])
            yield total

    return _lazy("accumulate", generator())


def zip_longest(
    tx: InstructionTranslator, *iterables: VariableTracker, fillvalue: VariableTracker | None = None
):
    columns = [_items(tx, a) for a in iterables]
    fill = constant(None) if fillvalue is None else fillvalue
    rows = itertools.zip_longest(*columns, fillvalue=fill)
    return _eager([_tuple(row) for row in rows])


def repeat(tx: InstructionTranslator, value: VariableTracker, times: VariableTracker | None = None):
    n = _int(times)
    return _lazy("repeat", (value for _ in (itertools.repeat(None) if n is None else range(n))))


def count(
    tx: InstructionTranslator,
    start: VariableTracker | None = None,
    step: VariableTracker | None = None,
):
    first = 0 if start is None else start.as_python_constant()
    by = 1 if step is None else step.as_python_constant()
    return _lazy("count", (constant(v) for v in itertools.count(first, by)))


def starmap(tx: InstructionTranslator, fn: VariableTracker, iterable: VariableTracker):
    return _lazy(
        "starmap", (_call(tx, fn, item.unpack_sequence(tx)) for item in _lazy_items(tx, iterable))
    )


def by_position(combine: Callable) -> Callable:
    """product, combinations & co: CPython's itertools on the items' positions."""

    def call(
        tx: InstructionTranslator, *args: VariableTracker, **kwargs: VariableTracker
    ) -> VariableTracker:
        options = {k: v.as_python_constant() for k, v in kwargs.items()}
        if combine is itertools.product:  # product(*iterables, repeat=1)
            pools = [_items(tx, a) for a in args]
            counts = []
        else:  # combinations(iterable, r) & co: one pool, then a count
            pools = [_items(tx, a) for a in args[:1]]
            counts = [a.as_python_constant() for a in args[1:]]
        try:
            rows = list(combine(*[range(len(p)) for p in pools], *counts, **options))
        except TypeError as e:
            raise Unsupported(f"{combine.__name__}() raised TypeError: {e}") from e
        width = len(pools)  # product(a, b, repeat=2): a row reads a, b, a, b
        return _eager([_tuple(pools[k % width][i] for k, i in enumerate(row)) for row in rows])

    return call


def pairwise(tx: InstructionTranslator, iterable: VariableTracker):
    items = _items(tx, iterable)
    return _eager([_tuple(pair) for pair in zip(items, items[1:])])


def min_max(which: Callable) -> Callable:
    """max(iterable) / min(iterable) with `key=` and `default=`: the iterable's items, then
    the builtin on them (as a tuple: eager's answer and errors on the same items)."""

    def call(
        tx: InstructionTranslator, *args: VariableTracker, **kwargs: VariableTracker
    ) -> VariableTracker | None:
        from tracer.dynamo.variables.functions import BuiltinVariable
        from tracer.dynamo.variables.tuples import TupleVariable

        if len(args) != 1 or args[0].is_python_constant() or isinstance(args[0], TupleVariable):
            return None  # max(a, b), a constant or a tuple: the builtin's own path
        return BuiltinVariable(which).call_function(tx, [_tuple(_items(tx, args[0]))], kwargs)

    return call


ITERATOR_CALLS: dict[Any, Callable] = {
    max: min_max(max),
    min: min_max(min),
    map: map_,
    filter: filter_,
    any: any_all(any),
    all: any_all(all),
    next: next_,
    functools.reduce: reduce_,
    itertools.chain: chain,
    itertools.chain.from_iterable: chain_from_iterable,
    itertools.islice: islice,
    itertools.accumulate: accumulate,
    itertools.zip_longest: zip_longest,
    itertools.repeat: repeat,
    itertools.count: count,
    itertools.starmap: starmap,
    itertools.pairwise: pairwise,
    itertools.product: by_position(itertools.product),
    itertools.combinations: by_position(itertools.combinations),
    itertools.combinations_with_replacement: by_position(itertools.combinations_with_replacement),
    itertools.permutations: by_position(itertools.permutations),
}
