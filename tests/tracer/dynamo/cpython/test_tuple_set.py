"""tuple, namedtuple, set and frozenset through capture, against CPython.

The behaviours CPython's test_tuple, test_set and test_collections pin down, in cases of our
own: tuples concatenate, repeat, compare and hash as dict keys; a namedtuple is its own class,
made at module level or inside the frame; sets are built by BUILD_SET or set(), and their
methods and operators give CPython's sets and errors.
"""

from __future__ import annotations

import collections

from tests.tracer.dynamo.cpython.harness import Cases, pytest_tests

cases = Cases()
Point = collections.namedtuple("Point", ["x", "y"])


@cases.add(inductor=True)
def tuple_concat_and_repeat(x):
    t = (x, 1)
    u = t + (x * 2,)
    t += ("s",)
    return t, u, (0,) * 3, 2 * (x,), () * 5


@cases.add
def tuple_index_count(x):
    t = (1, 2, 3, 2)
    return x * t.index(2), t.count(2), t.index(2, 2), len(t)


@cases.add
def tuple_index_missing_raises(x):
    return x + (1, 2).index(7)


@cases.add
def tuple_slicing(x):
    t = (x, x + 1, x + 2, x + 3)
    return t[1:], t[::-1], t[:-1:2], t[5:]


@cases.add
def tuple_comparison(x):
    return x + 1, (1, 2) < (1, 3), (1, 2) == (1, 2), (2,) > (1, 9), (1, 2) <= (1, 2), () < (0,)


@cases.add
def tuple_keys_in_dict(x):
    d = {(0, 1): x, (1, 0): x * 2}
    d[(0, 1)] = d[(0, 1)] + 1
    return d, (1, 0) in d, hash((1, 2)) == hash((1, 2))


@cases.add
def tuple_constructor(x):
    return tuple([x + 1, 1]), tuple(range(3)), tuple(), tuple("ab")


@cases.add
def tuple_is_immutable(x):
    t = (x,)
    t[0] = x + 1
    return t


@cases.add(inductor=True, fallback="attribute ._replace of a tuple holding tensors")
def namedtuple_module_level(x):
    p = Point(x, x * 2)
    q = p._replace(y=x + 5)
    return p, q, p.x + q.y, p[1], p._fields, Point._make([1, 2])


@cases.add
def namedtuple_made_in_frame(x):
    Pair = collections.namedtuple("Pair", "a b")
    p = Pair(x, 3)
    return p.a * p.b, tuple(p), p._asdict()


@cases.add
def namedtuple_unpack(x):
    a, b = Point(x, x + 1)
    return a * b, isinstance(Point(1, 2), tuple)


@cases.add(inductor=True)
def set_literal_and_constructor(x):
    s = {3, 1, 2, 1}  # noqa: B033 (a duplicate is dropped)
    t = set([2, 2, 5])
    u = set()
    return x * len(s), sorted(s), sorted(t), u, s


@cases.add
def set_literal_of_strings_order(x):
    # the order depends on the set's table: filled from the frozenset constant, or the dict
    s = {"b", "a", "k", "0", "1", "layer", "w", "bias"}
    d = {"q": 1, "r": 2, "zz": 3, "a": 4, "b": 5}
    return (
        x + 1,
        list(s),
        [k for k in s],
        list(set(d)),
        list({*d, "extra"}),
        list(s | {"n", "m", "o"}),
    )


@cases.add
def set_add_discard_remove(x):
    s = {1, 2}
    s.add(3)
    s.add(1)
    s.discard(2)
    s.discard(99)
    s.remove(3)
    return x + len(s), s


@cases.add
def set_remove_missing_raises(x):
    s = {1}
    s.remove(2)
    return x


@cases.add
def set_update_and_operators(x):
    s = {1, 2, 3}
    s.update([4], (5,))
    a, b = {1, 2, 3}, {2, 3, 4}
    return x + 1, s, a | b, a & b, a - b, a ^ b, b - a


@cases.add
def set_inplace_operators(x):
    s = {1, 2, 3}
    alias = s
    s |= {9}
    s -= {1}
    s &= {2, 9, 3}
    s ^= {3, 7}
    return x * len(s), s, alias is s, alias


@cases.add
def set_membership_and_sorted(x):
    s = {"b", "a", "c"}
    return x + 1, "a" in s, "z" not in s, sorted(s), sorted(s, reverse=True), len(s)


@cases.add
def set_relations(x):
    a, b = {1, 2}, {1, 2, 3}
    return x + 1, a <= b, a < b, b >= a, a.issubset(b), b.issuperset(a), a.isdisjoint({7})


@cases.add
def set_comprehension(x):
    s = {v % 3 for v in range(10)}
    return x * len(s), s


@cases.add
def frozenset_basics(x):
    f = frozenset([1, 2, 2])
    g = f | {3}
    d = {f: x}
    return d[frozenset({1, 2})] + 1, g, type(g).__name__, f == {1, 2}


@cases.add
def set_pop_and_copy(x):
    s = {7}
    c = s.copy()
    v = s.pop()
    return x + v, s, c


@cases.add
def set_of_tuples(x):
    s = {(1, 2), (1, 2), (2, 1)}
    return x * len(s), sorted(s)


test_matches_cpython, test_one_graph = pytest_tests(cases)
