"""map, filter, any/all, next, functools.reduce and itertools through capture: one graph each,
the values CPython gives, and lazy iterators as lazy as CPython's."""

from __future__ import annotations

import functools
import itertools
import operator

import pytest

import minitorch
from tests.tracer.dynamo.test_container_semantics import _identities, _same
from tracer.dynamo import explain, reset

X = minitorch.tensor([1.0, 2.0])


def maps(x):
    return list(map(lambda t: t + 1, [x, x * 2])), list(map(operator.mul, [x, x], [2, 3]))


def filters(x):
    return list(filter(lambda k: k % 2, range(5))), list(filter(None, [0, 1, 2])), x


def any_all(x):
    return (
        x * any(v > 1 for v in [0, 2]) + x * all([1, 0]) + all(isinstance(k, int) for k in (1, 2))
    )


def next_and_iter(x):
    it = iter([x, x * 2, x * 3])
    first = next(it)
    rest = list(it)
    return first, rest, next(it, x - 1)


def live_list_iterator(x):
    items = [x]
    out = []
    for t in items:  # the loop reaches items appended while it runs
        out.append(t * 2)
        if len(items) < 3:
            items.append(t + 1)
    return out


def lazy_map(x):
    items = [x]
    m = map(lambda t: t * 3, items)
    items.append(x + 1)  # read later by the map
    return list(m)


def reduce_(x):
    return functools.reduce(operator.add, [x, x * 2, x * 3]), functools.reduce(
        lambda a, b: a * b, [1, 2, 3], 10
    )


def itertools_products(x):
    pairs = [a * b for a, b in itertools.product([x, x + 1], [2, 3])]
    combos = [a + b for a, b in itertools.combinations([x, x * 2, x * 3], 2)]
    perms = list(itertools.permutations([1, 2, 3], 2))
    rep = list(itertools.product([0, 1], repeat=2))
    return pairs, combos, perms, rep, list(itertools.combinations_with_replacement("ab", 2))


def itertools_lazy(x):
    chained = list(itertools.chain([x], (x + 1,), [x + 2]))
    flat = list(itertools.chain.from_iterable([[1, 2], [3]]))
    first_two = list(itertools.islice([x, x * 2, x * 3], 2))
    odd = list(itertools.islice(itertools.count(1), 1, 6, 2))
    sums = list(itertools.accumulate([x, x, x]))
    filled = list(itertools.zip_longest([x, x], [1], fillvalue=0))
    same = list(itertools.repeat(x, 2))
    star = list(itertools.starmap(operator.sub, [(x, 1), (x, 2)]))
    return (
        chained,
        flat,
        first_two,
        odd,
        sums,
        filled,
        same,
        star,
        list(itertools.pairwise([1, 2, 3])),
    )


def sorted_reversed(x):
    d = {"b": x, "a": x * 2}
    return (
        [d[k] for k in sorted(d)],
        list(reversed([x, x + 1])),
        sorted([3, 1, 2], key=lambda k: -k),
        list(reversed(d)),
    )


def tensor_protocols(x):
    m = minitorch.stack([x, x * 2, x * 3])
    rows = [r + 1 for r in m]  # a tensor iterates over its rows
    a, _, c = m
    return rows, a * c, m.is_cuda, list(m.shape), len(m), getattr(m, "is_cuda")  # noqa: B009 - the builtin


CASES = [
    tensor_protocols,
    maps,
    filters,
    any_all,
    next_and_iter,
    live_list_iterator,
    lazy_map,
    reduce_,
    itertools_products,
    itertools_lazy,
    sorted_reversed,
]


@pytest.mark.parametrize("fn", CASES, ids=[fn.__name__ for fn in CASES])
def test_one_graph_and_cpythons_values(fn):
    reset()
    expected = fn(X)
    report = explain(fn)(X)
    assert report.graph_break_count == 0 and report.graph_count <= 1, report.break_reasons
    reset()
    got = minitorch.compile(fn, backend="inductor")(X)
    _same(got, expected)
    assert _identities(got) == _identities(expected)


def memory_formats(x):
    m = x.reshape(1, 2, 1, 1).to(memory_format=minitorch.channels_last) * 2
    return m.contiguous(memory_format=minitorch.contiguous_format), minitorch.empty_like(
        m, memory_format=minitorch.preserve_format
    ).shape


def test_memory_formats_are_constants():
    reset()
    assert explain(memory_formats)(X).graph_count == 1
    _same(minitorch.compile(memory_formats)(X), memory_formats(X))
