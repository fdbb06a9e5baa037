"""The guard suite, part 1: tensors, arguments, containers and globals (see guard_suite.py)."""

from __future__ import annotations

import math
import types
from collections.abc import Callable

import numpy as np
import pytest

import minitorch
from tests.tracer.dynamo.guard_suite import (
    BACKENDS,
    Case,
    check_case,
    data,
    double,
    registry,
    triple,
)

pytestmark = pytest.mark.capture

CASES: dict[str, Callable[[], Case]] = {}
case = registry(CASES)


# ---- tensor metadata ------------------------------------------------------------------------


@case
def tensor_shape():
    return Case(lambda x: x * x.shape[0], lambda: (data(3, 2),), after=lambda: (data(5, 2),))


@case
def tensor_rank():
    return Case(lambda x: x.sum(0) * x.ndim, lambda: (data(4),), after=lambda: (data(2, 2),))


@case
def tensor_empty():
    return Case(lambda x: x.sum() + x.numel(), lambda: (data(3),), after=lambda: (data(0),))


@case
def tensor_dtype_float64():
    return Case(lambda x: x / 3, lambda: (data(3),), after=lambda: (data(3, dtype=np.float64),))


@case
def tensor_dtype_int():
    return Case(
        lambda x: x / 2 + x * 2,
        lambda: (data(3),),
        after=lambda: (data(3, dtype=np.int64, start=5),),
    )


@case
def tensor_dtype_branch():
    def f(x):
        if x.dtype.is_floating_point:
            return x * 2
        return x * 3

    return Case(f, lambda: (data(3),), after=lambda: (data(3, dtype=np.int64),))


@case
def tensor_requires_grad():
    return Case(lambda x: x * 2, lambda: (data(3),), after=lambda: (data(3).requires_grad_(),))


@case
def tensor_stride_transposed():
    return Case(lambda x: x.reshape(-1) * 1, lambda: (data(3, 3),), after=lambda: (data(3, 3).t(),))


@case
def tensor_stride_expanded():
    return Case(
        lambda x: x.sum(1) * 2, lambda: (data(2, 3),), after=lambda: (data(1, 3).expand(2, 3),)
    )


@case
def tensor_to_float_argument():
    def f(x, y):
        return x * y

    return Case(f, lambda: (data(3), data(3)), after=lambda: (data(3), 2.5))


# ---- inputs that share memory ([Note: aliasing is overlapping memory]) ----------------------


def write_a_read_b(a, b):
    a.add_(1)
    return b * 1


def distinct():
    return data(4), data(4)


def same_object():
    x = data(4)
    return x, x


def detached():
    x = data(4)
    return x, x.detach()


def one_array():
    array = np.arange(4, dtype=np.float32)
    return minitorch.from_numpy(array), minitorch.from_numpy(array)


def slices(first: slice, second: slice):
    """Two tensors over two slices of one numpy array."""
    array = np.arange(8, dtype=np.float32)
    return minitorch.from_numpy(array[first]), minitorch.from_numpy(array[second])


@case
def alias_same_object():
    return Case(write_a_read_b, distinct, after=same_object)


@case
def alias_detach():
    return Case(write_a_read_b, distinct, after=detached)


@case
def alias_two_from_numpy():
    return Case(write_a_read_b, distinct, after=one_array)


@case
def alias_overlapping_slices():
    return Case(write_a_read_b, distinct, after=lambda: slices(slice(0, 4), slice(1, 5)))


@case
def alias_detached_view():
    def view():
        x = data(4)
        return x.detach(), x.view(2, 2).detach()

    return Case(write_a_read_b, lambda: (data(4), data(2, 2)), after=view)


@case
def alias_view_with_base():
    def view():
        x = data(2, 4)
        return x[0], x

    return Case(write_a_read_b, lambda: (data(4), data(2, 4)), after=view)


@case
def alias_then_distinct():
    return Case(write_a_read_b, detached, after=distinct)


@case
def alias_disjoint_slices_then_overlapping():
    return Case(
        write_a_read_b,
        lambda: slices(slice(0, 4), slice(4, 8)),
        after=lambda: slices(slice(0, 4), slice(2, 6)),
    )


# ---- Python arguments -----------------------------------------------------------------------


@case
def int_argument():
    return Case(lambda x, n: x * n, lambda: (data(3), 2), after=lambda: (data(3), 3))


@case
def int_to_float_argument():
    return Case(
        lambda x, n: x * n,
        lambda: (data(3, dtype=np.int64), 2),
        after=lambda: (data(3, dtype=np.int64), 2.5),
    )


@case
def float_argument():
    return Case(lambda x, s: x + s, lambda: (data(3), 1.5), after=lambda: (data(3), -0.5))


@case
def bool_argument():
    def f(x, flag):
        return x * 2 if flag else x - 1

    return Case(f, lambda: (data(3), True), after=lambda: (data(3), False))


@case
def str_argument():
    def f(x, mode):
        if mode == "sum":
            return x.sum()
        return x.mean()

    return Case(f, lambda: (data(3), "sum"), after=lambda: (data(3), "mean"))


@case
def none_argument():
    def f(x, y):
        if y is None:
            return x * 2
        return x + y

    return Case(f, lambda: (data(3), None), after=lambda: (data(3), data(3)))


@case
def int_argument_as_a_shape():
    return Case(lambda x, n: x.reshape(n, -1) * 1, lambda: (data(6), 2), after=lambda: (data(6), 3))


# ---- containers -----------------------------------------------------------------------------


@case
def list_of_tensors_length():
    return Case(
        lambda xs: sum(xs) * len(xs),
        lambda: ([data(3), data(3)],),
        after=lambda: ([data(3), data(3), data(3)],),
    )


@case
def tuple_of_tensors_item_shape():
    return Case(
        lambda xs: xs[0] + xs[1],
        lambda: ((data(3), data(3)),),
        after=lambda: ((data(3), data(2, 3)),),
    )


@case
def dict_of_tensors_keys():
    def f(d):
        return sum(v * 2 for v in d.values())

    return Case(
        f,
        lambda: ({"a": data(3), "b": data(3)},),
        after=lambda: ({"a": data(3), "b": data(3), "c": data(3)},),
    )


@case
def list_of_numbers_item():
    return Case(lambda x, ks: x * ks[0], lambda: (data(3), [2]), after=lambda: (data(3), [5]))


# ---- globals --------------------------------------------------------------------------------

G_TENSOR = data(3)
G_NUMBER = 2.0
G_FLAG = True
G_LIST = [2.0, 3.0]
G_CONFIG = {"scale": 2.0}


G_FUNCTION = double
G_MODULE = math


@case
def global_tensor_shape():
    return Case(
        lambda x: x * G_TENSOR,
        lambda: (data(3),),
        change=lambda mp: mp.setitem(globals(), "G_TENSOR", data(2, 3)),
    )


@case
def global_tensor_dtype():
    return Case(
        lambda x: x + G_TENSOR,
        lambda: (data(3, dtype=np.int64),),
        change=lambda mp: mp.setitem(globals(), "G_TENSOR", data(3, dtype=np.int64)),
    )


@case
def global_number():
    return Case(
        lambda x: x * G_NUMBER,
        lambda: (data(3),),
        change=lambda mp: mp.setitem(globals(), "G_NUMBER", 3.0),
    )


@case
def global_number_type():
    return Case(
        lambda x: x * G_NUMBER,
        lambda: (data(3, dtype=np.int64),),
        change=lambda mp: mp.setitem(globals(), "G_NUMBER", 2),
    )


@case
def global_flag():
    return Case(
        lambda x: x * 2 if G_FLAG else x + 2,
        lambda: (data(3),),
        change=lambda mp: mp.setitem(globals(), "G_FLAG", False),
    )


@case
def global_function():
    return Case(
        lambda x: G_FUNCTION(x),
        lambda: (data(3),),
        change=lambda mp: mp.setitem(globals(), "G_FUNCTION", triple),
    )


@case
def global_module():
    fake = types.ModuleType("fake_math")
    fake.sqrt = lambda v: v + 1
    return Case(
        lambda x: x * G_MODULE.sqrt(4.0),
        lambda: (data(3),),
        change=lambda mp: mp.setitem(globals(), "G_MODULE", fake),
    )


@pytest.fixture(autouse=True)
def _restore_global_list():
    """G_LIST is changed in place by a case (monkeypatch.setitem takes only dicts)."""
    saved = list(G_LIST)
    yield
    G_LIST[:] = saved


@case
def global_list_item_set():
    return Case(
        lambda x: x * G_LIST[0], lambda: (data(3),), change=lambda mp: G_LIST.__setitem__(0, 5.0)
    )


@case
def global_list_appended():
    def f(x):
        for k in G_LIST:
            x = x * k
        return x

    return Case(
        f, lambda: (data(3),), change=lambda mp: mp.setitem(globals(), "G_LIST", [*G_LIST, 4.0])
    )


@case
def global_dict_value():
    return Case(
        lambda x: x * G_CONFIG["scale"],
        lambda: (data(3),),
        change=lambda mp: mp.setitem(G_CONFIG, "scale", 7.0),
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_change_between_calls_gives_eager_answer(name, backend, monkeypatch):
    check_case(CASES[name](), backend, monkeypatch)
