"""functools and itertools through capture, against CPython.

The behaviours CPython's test_functools and test_itertools pin down, in cases of our own:
reduce with and without an initial value (and its TypeError on an empty sequence), partial's
bound arguments and keywords, lru_cache and wraps on functions made in the frame, and every
common itertools constructor with its keyword arguments.
"""

from __future__ import annotations

import functools
import itertools

from tests.tracer.dynamo.cpython.harness import Cases, pytest_tests

cases = Cases()


def scale(t, factor, shift=0):
    return t * factor + shift


@cases.add(inductor=True)
def reduce_forms(x):
    total = functools.reduce(lambda a, b: a + b, [x, x * 2, x * 3])
    product = functools.reduce(lambda a, b: a * b, [1, 2, 3, 4], 10)
    return total, product, functools.reduce(max, [3, 9, 2])


@cases.add
def reduce_empty_raises(x):
    return functools.reduce(lambda a, b: a + b, [])


@cases.add(inductor=True)
def partial_binds(x):
    double = functools.partial(scale, factor=2)
    shifted = functools.partial(scale, x, 3)
    return double(x), shifted(shift=1), double(x, shift=5)


@cases.add
def partial_made_in_frame(x):
    add = functools.partial(lambda a, b, c=0: a + b + c, 1)
    return x + add(2), add(2, c=4), add.args, sorted(add.keywords)


@cases.add(fallback="calling a type object")
def lru_cache_in_frame(x):
    calls = []

    @functools.lru_cache(maxsize=None)  # noqa: UP033 (the form under test)
    def square(n):
        calls.append(n)
        return n * n

    total = square(3) + square(3) + square(4)
    return x * total, calls


@cases.add(fallback="code inside a try or with block")
def wraps_keeps_name(x):
    def inner(t):
        """Doubles."""
        return t * 2

    @functools.wraps(inner)
    def outer(t):
        return inner(t) + 1

    return outer(x), outer.__name__, outer.__doc__


@cases.add
def product_and_chain(x):
    pairs = list(itertools.product([1, 2], "ab"))
    cube = list(itertools.product(range(2), repeat=2))
    joined = list(itertools.chain([x], (x * 2,), []))
    flat = list(itertools.chain.from_iterable([[1, 2], [3]]))
    return pairs, cube, joined, flat


@cases.add
def combinations_permutations(x):
    return (
        x * len(list(itertools.combinations(range(4), 2))),
        list(itertools.combinations("abc", 2)),
        list(itertools.permutations([1, 2, 3], 2)),
        list(itertools.permutations(range(3))),
    )


@cases.add
def islice_forms(x):
    return (
        x + 1,
        list(itertools.islice(range(10), 3)),
        list(itertools.islice(range(10), 2, 8, 3)),
        list(itertools.islice("abcdef", 4, None)),
    )


@cases.add
def accumulate_forms(x):
    running = list(itertools.accumulate([x, x, x]))
    prods = list(itertools.accumulate([1, 2, 3, 4], lambda a, b: a * b))
    seeded = list(itertools.accumulate([1, 2], initial=100))
    return running, prods, seeded


@cases.add
def zip_longest_fill(x):
    return (
        x + 1,
        list(itertools.zip_longest([1, 2, 3], "ab")),
        list(itertools.zip_longest([1], [2, 3], fillvalue=0)),
    )


@cases.add
def repeat_and_count(x):
    threes = list(itertools.repeat(3, 4))
    counted = list(itertools.islice(itertools.count(5, 2), 3))
    ts = list(zip(itertools.count(), [x, x + 1]))
    return threes, counted, ts


@cases.add
def starmap_pairs(x):
    sums = list(itertools.starmap(lambda a, b: a + b, [(x, 1), (x, 2)]))
    return sums, list(itertools.starmap(pow, [(2, 3), (3, 2)]))


@cases.add(fallback="calling a type object (G['itertools'].groupby)")
def groupby_runs(x):
    keys = [k for k, _ in itertools.groupby("aaabbca")]
    sizes = [len(list(g)) for _, g in itertools.groupby([1, 1, 2, 3, 3, 3])]
    by_parity = [(k, list(g)) for k, g in itertools.groupby(range(6), key=lambda v: v // 2)]
    return x * len(keys), keys, sizes, by_parity


@cases.add
def pairwise_and_tee_free(x):
    return x + 1, list(itertools.pairwise([1, 2, 3, 4])), list(itertools.pairwise("a"))


@cases.add
def itertools_over_tensors(x):
    rows = [x, x * 2, x * 3]
    diffs = [b - a for a, b in itertools.pairwise(rows)]
    return diffs, list(itertools.accumulate(rows))[-1]


test_matches_cpython, test_one_graph = pytest_tests(cases)
