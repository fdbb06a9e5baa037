"""Aliasing through arguments, globals and nesting, against CPython.

A container is an object: every name that reaches it (the caller's variable, an alias in the
frame, a global, a slot of another container) sees one mutation. And identity comes before
equality where CPython says so: `t in lst` and `lst.index(t)` find a tensor by `is` first, so
they never ask a tensor for its truth value.
"""

from __future__ import annotations

from tests.tracer.dynamo.cpython.harness import Cases, pytest_tests, tensor

cases = Cases()
LOG: list = []  # a module-level list the cases append to (reset by their make_args)
TABLE: dict = {}


def _fresh_globals() -> tuple:
    LOG.clear()
    TABLE.clear()
    return (tensor(),)


@cases.add(make_args=_fresh_globals)
def append_to_global_list(x):
    LOG.append(x * 2)
    LOG.append(len(LOG))
    return x + len(LOG), list(LOG)


@cases.add(make_args=_fresh_globals)
def global_dict_written_and_viewed(x):
    keys = TABLE.keys()
    TABLE["w"] = x
    TABLE.setdefault("n", 0)
    return x * len(keys), list(keys), dict(TABLE)


@cases.add(
    make_args=lambda: ([tensor()], tensor()),
    fallback="in-place __iadd__ on an input tensor that shares memory with another",
)
def tensor_item_augmented_in_place(lst, x):
    lst[0] += x  # Tensor.__iadd__: the caller's tensor changes
    return lst[0] * 1


@cases.add(make_args=lambda: ({"inner": [1]}, tensor()))
def nested_list_in_callers_dict(d, x):
    inner = d["inner"]
    inner.append(2)
    d["inner"] += [3]
    return x * len(d["inner"]), inner is d["inner"]


def _same_list_twice() -> tuple:
    shared = [1]
    return shared, shared, tensor()


@cases.add(make_args=_same_list_twice)
def one_list_passed_twice(a, b, x):
    a.append(2)
    b += [3]
    return x * len(a), a is b, list(b)


@cases.add(make_args=lambda: ([1], {"a": 2}, tensor()))
def callers_containers_made_cyclic(lst, d, x):
    lst.append(d)
    d["k"] = lst
    return x + len(lst) + len(d)


@cases.add
def identity_before_equality(x):
    y = x * 2
    lst = [x, y]
    return x + 1, y in lst, lst.index(y), lst.count(x), (x, y) == (x, y)


@cases.add
def view_of_nested_dict(x):
    outer = {"a": {"k": x}}
    inner_values = outer["a"].values()
    outer["a"]["j"] = x * 3
    return [v + 1 for v in inner_values], len(inner_values)


@cases.add
def list_of_lists_aliasing(x):
    row = [x]
    grid = [row, row]
    grid[0].append(x * 2)
    grid[1] += [x * 3]
    return grid, grid[0] is grid[1], len(row)


@cases.add
def dict_values_returned_then_written(x):
    d = {"a": x}
    vals = d.values()
    d["b"] = x * 2
    return vals, d


@cases.add
def tuple_holding_list_mutated(x):
    inner = [x]
    t = (inner, 1)
    inner.append(x + 1)
    t[0].append(x + 2)
    return t, len(t[0])


@cases.add
def tuple_item_augmented_raises_but_mutates(x):
    t = ([x],)
    t[0] += [x * 2]  # TypeError after the list was extended
    return t


@cases.add(make_args=lambda: ([3, 1, 2], tensor()))
def sort_callers_list(lst, x):
    lst.sort()
    ordered = lst
    ordered.reverse()
    return x * lst[0], lst is ordered


test_matches_cpython, test_one_graph = pytest_tests(cases)
