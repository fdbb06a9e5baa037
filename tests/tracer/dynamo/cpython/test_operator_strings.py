"""The operator module and string keys through capture, against CPython.

The behaviours CPython's test_operator pins down, in cases of our own: itemgetter and
attrgetter with one and several keys, the arithmetic functions on numbers and tensors, getitem
and setitem on containers built in the frame, methodcaller; and the string formatting models
use to name their parameters (f-strings, %, format, join, split).
"""

from __future__ import annotations

import collections
import operator

from tests.tracer.dynamo.cpython.harness import Cases, pytest_tests

cases = Cases()
Pair = collections.namedtuple("Pair", "first second")


@cases.add(inductor=True)
def itemgetter_forms(x):
    one = operator.itemgetter(1)
    many = operator.itemgetter(0, 2)
    rows = [(3, "c"), (1, "a"), (2, "b")]
    return one([x, x * 2]), many([x, 1, x + 2]), sorted(rows, key=operator.itemgetter(0))


@cases.add
def itemgetter_on_dict(x):
    pick = operator.itemgetter("w", "b")
    return pick({"w": x, "b": x + 1, "z": 0})


@cases.add
def attrgetter_forms(x):
    p = Pair(x, Pair(1, 2))
    return operator.attrgetter("first")(p) * 2, operator.attrgetter("second.first", "first")(p)


@cases.add
def arithmetic_functions(x):
    return (
        operator.add(x, 1),
        operator.mul(x, x),
        operator.sub(5, 2),
        operator.neg(x),
        operator.truediv(7, 2),
        operator.floordiv(7, 2),
        operator.mod(7, 3),
        operator.pow(2, 5),
    )


@cases.add
def comparison_functions(x):
    return (
        x + 1,
        operator.lt(1, 2),
        operator.eq([1], [1]),
        operator.contains([1, 2], 2),
        operator.not_(0),
        operator.truth([]),
    )


@cases.add
def getitem_setitem_delitem(x):
    lst = [x, x + 1, x + 2]
    operator.setitem(lst, 0, x * 10)
    d = {"a": 1}
    operator.setitem(d, "b", x)
    operator.delitem(lst, 1)
    return operator.getitem(lst, 0), lst, d, operator.getitem(d, "b")


@cases.add
def getitem_slice(x):
    lst = [x, x + 1, x + 2]
    return operator.getitem(lst, slice(1, None)), operator.getitem((1, 2, 3), slice(None, None, -1))


@cases.add
def methodcaller_forms(x):
    upper = operator.methodcaller("upper")
    count = operator.methodcaller("count", 1)
    return x + 1, upper("ab"), count([1, 2, 1])


@cases.add
def operator_on_tensor_lists(x):
    parts = [x, x * 2, x * 3]
    return list(map(operator.mul, parts, [1, 2, 3])), operator.concat([x], [x + 1])


@cases.add
def inplace_operator_functions(x):
    a = [1]
    b = operator.iadd(a, [2])
    c = operator.iadd((1,), (2,))
    return x + len(a), a, b is a, c


@cases.add(inductor=True)
def string_keys(x):
    params = {}
    for i in range(2):
        params[f"layer{i}.weight"] = x * (i + 1)
        params["layer%d.bias" % i] = x + i  # noqa: UP031 (the form under test)
    names = sorted(params)
    return params, names, "-".join(names), [n.split(".")[1] for n in names]


@cases.add
def string_methods(x):
    name = "Encoder.Block_3"
    formatted = "{}:{:>4}".format("k", 7), "%s=%.2f" % ("lr", 0.5)  # noqa: UP031, UP032
    return (
        x + 1,
        name.lower(),
        name.startswith("Enc"),
        name.replace("_", "."),
        name.partition(".")[2],
        formatted,
        name[::-1],
        "a,b".split(","),
    )


@cases.add
def string_concat_in_loop(x):
    key = ""
    for part in ["a", "b", "c"]:
        key += part
    return x * len(key), key, key * 2, "b" in key


@cases.add(breaks=True)
def print_list(x):
    lst = [1, "a"]
    print("values:", lst, end="\n")
    return x * len(lst)


test_matches_cpython, test_one_graph = pytest_tests(cases)
