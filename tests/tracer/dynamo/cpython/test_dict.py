"""dict, defaultdict, OrderedDict, Counter and ChainMap through capture, against CPython.

The behaviours CPython's test_dict and test_collections pin down, in cases of our own: a
literal and dict() build the same mapping; insertion order is iteration order (and survives
an overwrite, not a delete and re-insert); keys(), values() and items() are live views; pop,
popitem, setdefault, update and | follow their documented defaults and errors.
"""

from __future__ import annotations

import collections

from tests.tracer.dynamo.cpython.harness import Cases, pytest_tests, tensor

cases = Cases()


@cases.add(inductor=True)
def literal_and_constructor(x):
    a = {"w": x, "b": x * 2}
    b = dict(w=x, b=x * 2)
    c = dict([("w", x), ("b", x * 2)])
    return a, b, c, list(a) == list(b) == list(c)


@cases.add
def from_zip(x):
    d = dict(zip(["p", "q", "r"], [x, x + 1, x + 2]))
    return d, len(d)


@cases.add
def fromkeys(x):
    d = dict.fromkeys(["a", "b", "a"], 0)
    e = dict.fromkeys(("k", "m"))
    return x + len(d), d, e


@cases.add
def get_with_default(x):
    d = {"a": x}
    return d.get("a") * 2, d.get("zz"), d.get("zz", 5), d.get("a", x * 100)


@cases.add
def setdefault_keeps_first(x):
    d = {}
    first = d.setdefault("k", x + 1)
    second = d.setdefault("k", x * 100)
    return d, first, second


@cases.add(inductor=True)
def pop_and_default(x):
    d = {"a": x, "b": x * 2}
    v = d.pop("a")
    missing = d.pop("nope", 3)
    return d, v + 1, missing


@cases.add
def pop_missing_raises_keyerror(x):
    d = {"a": x}
    return d.pop("b")


@cases.add
def missing_key_raises_keyerror(x):
    d = {"a": x}
    return d["b"] + 1


@cases.add
def popitem_is_lifo(x):
    d = {"a": x, "b": x + 1, "c": x + 2}
    last = d.popitem()
    return last, d


@cases.add
def popitem_empty_raises(x):
    d = {}
    return d.popitem()


@cases.add
def update_forms(x):
    d = {"a": x}
    d.update({"b": x + 1})
    d.update(c=x + 2)
    d.update([("d", x + 3)], e=x + 4)
    d.update({"a": x * 10})  # overwrite keeps the position
    return d


@cases.add
def overwrite_keeps_order_delete_moves(x):
    d = {"a": x, "b": x, "c": x}
    d["a"] = x + 1
    del d["b"]
    d["b"] = x + 2
    return list(d), d


@cases.add
def values_view_is_live(x):
    d = {"a": x}
    vals = d.values()
    d["b"] = x + 1
    return [v * 2 for v in vals], len(vals)


@cases.add
def keys_view_is_live_and_contains(x):
    d = {"a": x}
    ks = d.keys()
    d["b"] = x
    del d["a"]
    return x * len(ks), "b" in ks, "a" in ks, list(ks)


@cases.add
def items_view_is_live(x):
    d = {"a": x}
    its = d.items()
    d["a"] = x * 3
    d["c"] = x - 1
    # `in` on items: the key looked up, then the value compared by identity first
    return [(k, v + 1) for k, v in its], ("zz", 1) in its, ("c", d["c"]) in its


@cases.add
def len_and_in(x):
    d = {"a": x, 1: x, (2, 3): x}
    return x + len(d), "a" in d, 1 in d, (2, 3) in d, "z" not in d


@cases.add
def comprehension(x):
    d = {f"k{i}": x * i for i in range(3)}
    inverse = {v: k for k, v in {"a": 1, "b": 2}.items()}
    return d, inverse


@cases.add
def merge_operators(x):
    a = {"a": x, "b": x + 1}
    b = {"b": x * 5, "c": x}
    merged = a | b
    a |= {"d": x - 1}
    return merged, a, b


@cases.add
def delete_key(x):
    d = {"a": x, "b": x + 1}
    del d["a"]
    return d


@cases.add
def delete_missing_raises(x):
    d = {"a": x}
    del d["b"]
    return d


@cases.add
def copy_is_shallow_and_new(x):
    d = {"a": [x]}
    e = d.copy()
    e["b"] = x + 1
    e["a"].append(x + 2)
    return d, e, d["a"] is e["a"]


@cases.add
def clear_empties_views(x):
    d = {"a": x}
    vals = d.values()
    d.clear()
    return x + len(vals), d, list(vals)


@cases.add(make_args=lambda: ({"old": 1, "keep": 2}, tensor()))
def dict_argument_mutated(d, x):
    d["new"] = x * 2
    d.pop("old")
    return x + 1


@cases.add(make_args=lambda: ({"scale": 3, "other": 1}, tensor()))
def dict_argument_read(d, x):
    return x * d["scale"] + len(d), sorted(d)


def _callers_dict() -> tuple:
    return {"a": tensor() * 2, "b": 3}, tensor()


@cases.add(make_args=_callers_dict)
def copy_of_callers_dict_then_update(d, x):
    kept = dict(d)
    d.update(a=x)
    return x + 1, kept


@cases.add(make_args=_callers_dict)
def items_of_callers_dict_then_pop(d, x):
    pairs = list(d.items())
    d.pop("a")
    return x + 1, pairs


@cases.add
def iteration_order(x):
    d = {"z": 1, "a": 2, "m": 3}
    out = x
    for k in d:
        out = out * d[k]
    return out, [k for k in d], list(reversed(d))


@cases.add
def int_and_tuple_keys(x):
    d = {(1, 2): x, 3: x + 1}
    d[(1, 2)] = d[(1, 2)] * 2
    return d


@cases.add
def equality(x):
    return x + 1, {"a": 1, "b": 2} == {"b": 2, "a": 1}, {"a": 1} != {"a": 2}


@cases.add
def defaultdict_factories(x):
    groups = collections.defaultdict(list)
    groups["a"].append(x)
    groups["a"].append(x + 1)
    groups["b"]
    counts = collections.defaultdict(int)
    for k in ["p", "q", "p"]:
        counts[k] += 1
    return groups, counts, "zz" in counts


@cases.add
def ordered_dict(x):
    od = collections.OrderedDict()
    od["b"] = x
    od["a"] = x + 1
    od["c"] = x + 2
    od.move_to_end("b")
    od.move_to_end("c", last=False)
    first = od.popitem(last=False)
    return od, first, list(od)


@cases.add(fallback="calling a type object (G['collections'].Counter)")
def counter_basics(x):
    c = collections.Counter(["a", "b", "a", "c", "a"])
    return x * c["a"], c["zz"], c.most_common(1), sorted(c.elements())


@cases.add(fallback="calling a ABCMeta object (G['collections'].ChainMap)")
def chain_map(x):
    cm = collections.ChainMap({"a": x}, {"a": x * 5, "b": x + 1})
    return cm["a"], cm["b"], sorted(cm)


@cases.add(breaks=True)
def print_dict(x):
    d = {"a": 1}
    print(d)
    return x + d["a"]


@cases.add
def string_keys_formatting(x):
    d = {}
    for i in range(3):
        d["layer_%d" % i] = x * i  # noqa: UP031 (the form under test)
        d[f"bias.{i}"] = i
        d["w{}".format(i)] = x + i  # noqa: UP032 (the form under test)
    return d, ",".join(sorted(d))


@cases.add
def nested_dicts(x):
    cfg = {"enc": {"dim": 2}, "dec": {"dim": 3}}
    cfg["enc"]["dim"] += 1
    return x * cfg["enc"]["dim"] + cfg["dec"]["dim"], cfg


test_matches_cpython, test_one_graph = pytest_tests(cases)
