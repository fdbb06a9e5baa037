"""list through capture, against CPython.

The behaviours CPython's test_list pins down, in cases of our own: + makes a new list, +=
extends the same one (seen through every alias, the caller's list too), * repeats the same
items, the methods' defaults and errors, slicing, slice assignment and deletion.
"""

from __future__ import annotations

from tests.tracer.dynamo.cpython.harness import Cases, pytest_tests, tensor

cases = Cases()


@cases.add(inductor=True)
def literal_and_constructor(x):
    a = [x, x + 1]
    b = list((x, x + 1))
    c = list(range(3))
    return a, b, c, list("ab")


@cases.add(inductor=True)
def concat_makes_a_list(x):
    a = [x]
    b = a + [x * 2]
    return b, a, b is a


@cases.add
def iadd_extends_in_place(x):
    a = [x]
    alias = a
    a += [x + 1]
    a += (x + 2,)  # += takes any iterable
    return a, alias, a is alias, len(alias)


@cases.add
def alias_sees_append(x):
    a = [1]
    b = a
    b.append(2)
    return x * len(a), a


@cases.add(make_args=lambda: ([tensor()], tensor()))
def iadd_on_callers_list(lst, y):
    lst += [y * 2]
    return y + 1


@cases.add(make_args=lambda: ([1, 2], tensor()))
def methods_on_callers_list(lst, y):
    lst.append(3)
    lst.insert(0, 0)
    lst.remove(2)
    return y * len(lst)


def _callers_list() -> tuple:
    return [tensor() * 2, 2], tensor()


@cases.add(make_args=_callers_list)
def copy_of_callers_list_then_mutated(lst, x):
    kept = tuple(lst)
    head = lst[:1]
    lst.pop(0)
    return x + 1, kept, head


@cases.add(make_args=_callers_list)
def unpack_callers_list_then_clear(lst, x):
    first, *rest = lst
    lst.clear()
    return x + 1, first, rest


@cases.add(make_args=_callers_list)
def callers_list_mutated_then_copied(lst, x):
    lst.insert(0, x)
    return x + 1, tuple(lst), lst


@cases.add
def sorted_pairs_copied_then_mutated(x):
    ordered = sorted([("b", x), ("a", 3)])
    kept = tuple(ordered)
    ordered.pop(0)
    return x + 1, kept, ordered


@cases.add
def repeat(x):
    rows = [[]] * 3
    rows[0].append(x)
    twice = 2 * [x]
    twice *= 2
    return rows, rows[0] is rows[2], [t + 1 for t in twice], [0] * 0


@cases.add
def append_extend_insert(x):
    a = [x]
    a.append(x + 1)
    a.extend([x + 2, x + 3])
    a.extend(range(2))
    a.insert(1, x * 10)
    a.insert(-1, 7)
    a.insert(100, 8)  # past the end: appends
    return a


@cases.add
def pop_forms(x):
    a = [x, x + 1, x + 2, x + 3]
    last = a.pop()
    first = a.pop(0)
    middle = a.pop(-1)
    return a, last, first, middle


@cases.add
def pop_empty_raises(x):
    a = []
    return a.pop() + x


@cases.add(fallback="list.index() of an item not in the list (a ValueError)")
def remove_index_count(x):
    a = [3, 1, 2, 1]
    a.remove(1)  # the first one only
    return x * a.index(2), a, a.count(1), a.index(1, 1)


@cases.add
def remove_missing_raises(x):
    a = [1, 2]
    a.remove(5)
    return x


@cases.add
def index_missing_raises(x):
    return x + [1, 2].index(9)


@cases.add(inductor=True)
def reverse_and_sort(x):
    a = [3, 1, 2]
    a.reverse()
    b = [3, -1, 2, -5]
    b.sort(key=abs)
    c = ["bb", "a", "ccc"]
    c.sort(key=len, reverse=True)
    return x * a[0], a, b, c, sorted([2, 3, 1], reverse=True)


@cases.add
def sort_is_stable(x):
    pairs = [(1, "b"), (0, "z"), (1, "a"), (0, "y")]
    pairs.sort(key=lambda p: p[0])
    return x + 1, pairs


@cases.add
def copy_and_clear(x):
    a = [x, [1]]
    b = a.copy()
    b.append(3)
    b[1].append(2)
    c = a[:]
    a.clear()
    return a, b, c, b[1] is c[1], x + len(b)


@cases.add
def slicing(x):
    a = [x, x + 1, x + 2, x + 3, x + 4]
    return a[1:3], a[::2], a[::-1], a[-2:], a[10:], a[1:-1:2]


@cases.add
def slice_assignment(x):
    a = [0, 1, 2, 3, 4]
    a[1:3] = [x, x, x]
    b = [0, 1, 2, 3]
    b[::2] = [9, 8]
    c = [1, 2]
    c[len(c) :] = [3]
    c[:0] = [0]
    return a, b, c, a[1] + 1


@cases.add
def extended_slice_length_mismatch_raises(x):
    a = [0, 1, 2, 3]
    a[::2] = [x]
    return a


@cases.add
def slice_deletion(x):
    a = [x, x + 1, x + 2, x + 3]
    del a[1:3]
    b = list(range(6))
    del b[::2]
    c = [x, x * 2]
    del c[0]
    del c[-1]
    return a, b, c


@cases.add
def index_out_of_range_raises(x):
    a = [x]
    return a[3]


@cases.add
def setitem_and_negative_index(x):
    a = [x, x, x]
    a[-1] = x * 5
    a[0] = "s"
    return a


@cases.add
def comprehension_and_nested(x):
    grid = [[i * j for j in range(3)] for i in range(2)]
    evens = [v for v in range(6) if v % 2 == 0]
    ts = [x * k for k in evens]
    return grid, ts


@cases.add
def comparison_and_contains(x):
    return x + 1, [1, 2] < [1, 3], [1, 2] == [1, 2], [] < [0], 2 in [1, 2], [1] == (1,)


@cases.add
def unpacking(x):
    a, *rest = [x, x + 1, x + 2]
    *init, z = [1, 2, 3]
    (p, q), r = [1, 2], 3
    return a, rest, init, z, p + q + r


@cases.add
def list_of_tensors_reduced(x):
    parts = [x * i for i in range(1, 4)]
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total, len(parts)


@cases.add
def enumerate_then_mutate(x):
    out = []
    for i, v in enumerate([x, x * 2]):
        out.append(v + i)
    out[0], out[1] = out[1], out[0]
    return out


@cases.add
def append_while_iterating_reaches_new(x):
    a = [1, 2]
    total = x
    for v in a:
        if v < 3:
            a.append(v + 2)
        total = total + v
    return total, a


@cases.add(breaks=True)
def data_dependent_branch(x):
    a = [x]
    if x.sum() > 0:
        a.append(x + 1)
    else:
        a.append(x - 1)
    return a


test_matches_cpython, test_one_graph = pytest_tests(cases)
