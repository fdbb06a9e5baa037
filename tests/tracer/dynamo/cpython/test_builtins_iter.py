"""Iterators and the builtins that consume them, through capture, against CPython.

The behaviours CPython's test_iter and test_builtin pin down, in cases of our own: map, filter,
zip (and zip(strict=True)'s ValueError), enumerate(start=), reversed, iter/next with a default
and StopIteration without, sorted, min/max with key= and default=, sum with start, any/all,
len, and range's arithmetic (negative steps, slicing, membership).
"""

from __future__ import annotations

from tests.tracer.dynamo.cpython.harness import Cases, pytest_tests

cases = Cases()


@cases.add(inductor=True)
def map_and_filter(x):
    doubled = list(map(lambda v: v * 2, [x, x + 1]))
    evens = list(filter(lambda v: v % 2 == 0, range(7)))
    pairs = list(map(lambda a, b: a + b, [1, 2, 3], [10, 20]))
    truthy = list(filter(None, [0, 1, "", "a", None, 2]))
    return doubled, evens, pairs, truthy


@cases.add
def zip_forms(x):
    short = list(zip([x, x + 1, x + 2], "ab"))
    three = list(zip(range(3), range(10, 13), [x, x, x]))
    return short, three, list(zip())


@cases.add
def zip_strict_raises(x):
    return list(zip([x, x], [1], strict=True))


@cases.add
def zip_strict_equal(x):
    return list(zip([x, x * 2], [1, 2], strict=True))


@cases.add
def enumerate_start(x):
    out = x
    for i, v in enumerate([1, 2, 3], start=5):
        out = out + i * v
    return out, list(enumerate("ab", 1))


@cases.add
def reversed_forms(x):
    return list(reversed([x, x + 1])), list(reversed(range(4))), list(reversed((1, 2, 3)))


@cases.add
def iter_next_default(x):
    it = iter([x, x * 2])
    first = next(it)
    second = next(it)
    third = next(it, "done")
    return first, second, third


@cases.add
def next_exhausted_raises(x):
    it = iter([x])
    next(it)
    return next(it)


@cases.add
def iterator_shared_by_loops(x):
    it = iter(range(6))
    head = [v for _, v in zip(range(2), it)]
    rest = list(it)
    return x * len(rest), head, rest


@cases.add(inductor=True)
def sorted_key_reverse(x):
    words = ["pear", "fig", "apple"]
    return x + 1, sorted(words), sorted(words, key=len), sorted(words, key=len, reverse=True)


@cases.add
def min_max_key_default(x):
    vals = [3, -7, 5]
    return (
        x + 1,
        min(vals),
        max(vals),
        min(vals, key=abs),
        max(vals, key=abs),
        max([], default=0),
        min(4, 2, 9),
        max("ab", "b"),
    )


@cases.add
def min_empty_raises(x):
    return x + min([])


@cases.add
def sum_forms(x):
    total = sum([x, x * 2, x * 3])
    return total, sum(range(5)), sum([1, 2], 10), sum([[1], [2]], [])


@cases.add
def any_all(x):
    return x + 1, any([0, 0, 1]), all([1, 2]), any([]), all([]), any(v > 2 for v in range(4))


@cases.add
def len_of_everything(x):
    return (
        x * len([1, 2]),
        len((1,)),
        len({"a": 1}),
        len({1, 2, 3}),
        len(range(2, 9, 3)),
        len("abc"),
    )


@cases.add
def range_arithmetic(x):
    r = range(10, 0, -3)
    return (
        x * r[1],
        list(r),
        r[-1],
        list(r[1:3]),
        4 in r,
        5 in r,
        r.index(7),
        len(r),
        range(0) == range(5, 5),
        list(range(-2, 2)),
    )


@cases.add
def range_index_out_of_range_raises(x):
    return x + range(3)[5]


@cases.add
def generator_expression_consumed(x):
    gen = (v * 2 for v in range(4))
    first = next(gen)
    return x + first, list(gen)


@cases.add(fallback="max() on the constant range(0, 3)")
def tensor_iteration_builtins(x):
    rows = list(x)
    return len(rows), sum(rows), max(range(3), key=lambda i: -i)


@cases.add
def isinstance_of_containers(x):
    return (
        x + 1,
        isinstance([1], list),
        isinstance((1,), tuple),
        isinstance({}, dict),
        isinstance({1}, (set, frozenset)),
        isinstance([x], (tuple, dict)),
    )


test_matches_cpython, test_one_graph = pytest_tests(cases)
