"""Python's containers through capture, as CPython defines them.

Each program runs plainly and compiled (one graph, no break), on fresh copies of the same
arguments; the results, the arguments afterwards, and which results are the same object must
all agree:

- dict views are live: a view taken before the dict is written sees the write;
- list `+` gives a list, `+=` on a list extends it in place, seen through every alias (a list
  the caller passed in, too); `*` repeats the same items;
- a container returned twice, or with a view of it, is one object, as eager.
"""

from __future__ import annotations

import collections
import copy

import pytest

import minitorch
from tests.tracer.dynamo.helpers import CountingBackend, assert_same
from tracer.dynamo import fallback_reasons, optimize, reset

X = minitorch.tensor([1.0, 2.0])


def view_then_write(x):
    d = {"a": x}
    vals = d.values()
    d["a"] = x + 1
    for v in vals:
        return v * 2


def items_view(x):
    d = {"a": x}
    it = d.items()
    d["b"] = x + 1
    return [v for _, v in it][-1] * 1, len(it)


def keys_view_contains(x):
    d = {1: x}
    ks = d.keys()
    d[4] = x * 3
    return x + (1 if 4 in ks else 0), list(ks)


def returns_view_with_dict(x):
    d = {"a": x}
    return d, d.values()


def dict_methods(x):
    d = {"a": x}
    d.setdefault("b", x * 2)
    d.setdefault("a", x * 100)
    popped = d.pop("a")
    d.update({"c": x + 1}, e=x - 1)
    d.update([("f", x * 5)])
    last = d.popitem()
    e = dict(d, g=x)
    del e["b"]
    merged = d | {"z": x}
    merged |= e
    return d, popped, last, e, merged, d.get("missing", 7), dict.fromkeys(["p", "q"], 0)


def list_concat(x):
    a = [x]
    return a + [x * 2]


def list_iadd_local(x):
    lst = [x]
    alias = lst
    lst += [x + 1]
    alias += (x + 2,)  # any iterable extends a list
    return lst, alias is lst, len(alias)


def list_iadd_argument(lst, y):
    lst += [y]
    return y + 1


def list_methods(x):
    lst = [3, 1, 2]
    lst.sort()
    lst.reverse()
    lst.remove(2)
    lst.insert(0, 5)
    ts = [x, x * 2, x * 3]
    ts[0:2] = [x - 1]
    del ts[-1]
    ts.extend(reversed([x + 7, x + 8]))
    return lst, lst.index(5), lst.count(1), ts, sorted([3, 1, 2], reverse=True), lst.copy()


def repeat_shares_items(x):
    rows = [[]] * 2
    rows[0].append(x)
    twice = 2 * [x]
    twice *= 2
    return rows, rows[0] is rows[1], len(twice)


def same_list_twice(x):
    out = [x * 2]
    return out, out


def nested_alias(x):
    inner = [x]
    outer = [inner, inner]
    inner.append(x + 1)
    return outer, outer[0] is outer[1]


def sets(x):
    s = {1, 2}
    s.add(3)
    s.discard(1)
    t = set([2, 5]) | s
    t -= {5}
    u = {k * 2 for k in s}
    return x * len(t), sorted(u), 3 in s, s.issubset({2, 3, 4}), s


def tuple_concat(x):
    t = (x,)
    t += (x + 1,)
    return t, t * 2


def dict_kinds(x):
    groups = collections.defaultdict(list)
    groups["a"].append(x)
    groups["a"].append(x + 1)
    counts = collections.defaultdict(int)
    counts["k"] += 2
    ordered = collections.OrderedDict()
    ordered["z"] = x
    ordered["a"] = x * 2
    ordered.move_to_end("z")
    first = ordered.popitem(last=False)
    keyed = {(1, "a"): x, None: 2, 2.5: x * 2, True: 0}
    keyed[(1, "a")] = keyed[(1, "a")] + 1
    return (
        groups,
        counts,
        ordered,
        first,
        keyed,
        isinstance(ordered, dict),
        isinstance([x], (tuple, list)),
    )


CASES = [
    (view_then_write, ()),
    (items_view, ()),
    (keys_view_contains, ()),
    (returns_view_with_dict, ()),
    (dict_methods, ()),
    (list_concat, ()),
    (list_iadd_local, ()),
    (list_iadd_argument, ([X], X)),
    (list_methods, ()),
    (repeat_shares_items, ()),
    (same_list_twice, ()),
    (nested_alias, ()),
    (sets, ()),
    (tuple_concat, ()),
    (dict_kinds, ()),
]


def _identities(value, seen=None) -> list[tuple[int, int]]:
    """Which containers inside `value` are the same object: pairs of visit positions."""
    order: dict[int, int] = {} if seen is None else seen
    pairs = []

    def visit(v):
        if isinstance(v, (list, dict, set)):
            if id(v) in order:
                pairs.append((order[id(v)], len(order)))
                return
            order[id(v)] = len(order)
        if isinstance(v, (list, tuple)):
            for item in v:
                visit(item)
        elif isinstance(v, dict):
            for item in v.values():
                visit(item)

    visit(value)
    return pairs


def _same(actual, expected) -> None:
    if type(expected).__name__ in ("dict_keys", "dict_values", "dict_items"):
        assert type(actual) is type(expected)
        assert_same(list(actual), list(expected))
    elif isinstance(expected, set):
        assert actual == expected and type(actual) is set
    elif isinstance(expected, (tuple, list)) and not isinstance(expected, minitorch.Size):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _same(a, e)
    elif isinstance(expected, dict):
        assert type(actual) is type(expected) and list(actual) == list(expected)
        assert getattr(actual, "default_factory", None) is getattr(
            expected, "default_factory", None
        )
        for k in expected:
            _same(actual[k], expected[k])
    else:
        assert_same(actual, expected)


@pytest.mark.parametrize("backend", ["eager", "inductor"])
@pytest.mark.parametrize("fn,args", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_containers_as_cpython(fn, args, backend):
    reset()
    args = args or (X,)
    mine, theirs = copy.copy(list(args)), copy.copy(list(args))
    mine = [copy.copy(a) for a in mine]
    theirs = [copy.copy(a) for a in theirs]
    counting = CountingBackend()
    if backend == "eager":
        got = optimize(fn, backend=counting)(*mine)
    else:
        got = minitorch.compile(fn, backend="inductor")(*mine)
    expected = fn(*theirs)
    _same(got, expected)
    _same(mine, theirs)  # the arguments, mutated alike
    assert _identities(got) == _identities(expected)
    assert fallback_reasons(fn) == []
    if backend == "eager":
        assert counting.count <= 1


def test_view_of_returned_dict_is_live():
    reset()
    d, values = optimize(returns_view_with_dict, backend=CountingBackend())(X)
    d["new"] = X
    assert len(values) == 2  # the view returned is a view of the dict returned


def test_caller_list_extended_through_alias():
    reset()
    lst = [X]
    alias = lst
    optimize(list_iadd_argument, backend=CountingBackend())(lst, X)
    assert len(alias) == 2 and alias is lst


SHARED = [X]


def append_then_count(x, a, b):
    a.append(x + 1)
    return len(b), len(SHARED)


def test_one_list_through_two_sources():
    # The same list as two arguments, or as an argument and a global, is one tracker: the
    # append through `a` is seen through `b`; the guard keeps which arguments were one object.
    reset()
    compiled = optimize(append_then_count, backend=CountingBackend())
    assert compiled(X, [X], [X]) == (1, 1)
    shared = [X]
    assert compiled(X, shared, shared) == (2, 1) and len(shared) == 2
    assert compiled(X, SHARED, SHARED) == (2, 2) and len(SHARED) == 2
    assert compiled(X, [X], [X]) == (1, 2)


def grows_while_iterating(x):
    d = {"a": x}
    for k in d:
        d[k + "b"] = x
    return d


def reads_values_written_in_the_loop(x):
    d = {"a": x, "b": x}
    seen = []
    for _, v in d.items():
        d["b"] = x + 1  # read when the loop reaches "b", as CPython's iterator reads it
        seen.append(v)
    return seen


def test_dict_iteration_as_cpython():
    reset()
    with pytest.raises(RuntimeError, match="changed size during iteration"):
        optimize(grows_while_iterating, backend=CountingBackend())(X)
    assert "changed size during iteration" in fallback_reasons(grows_while_iterating)[0]
    got = optimize(reads_values_written_in_the_loop, backend=CountingBackend())(X)
    _same(got, reads_values_written_in_the_loop(X))
