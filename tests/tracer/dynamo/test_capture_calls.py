"""Function-call constructs that TorchDynamo captures in one graph:
forwarding *args/**kwargs, functools.partial, lru_cache'd helpers, a bound method in a local,
user objects with __getattr__ and __slots__, and plain Python on argument values (type(v),
isinstance, hasattr, callable, getattr with a default, slice(None), len(x), rows of x).

Each is checked against the same function run eagerly (CPython is the reference for the
Python parts), and its graph and break counts are pinned with explain().
"""

from __future__ import annotations

import collections
import functools
import typing

import numpy as np
import pytest

import minitorch
import minitorch.nn as nn
from minitorch import _dynamo
from tests.tracer.dynamo.helpers import assert_same


def _x() -> minitorch.Tensor:
    return minitorch.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])


def check_one_graph(fn, *args, graphs: int = 1, **kwargs):
    """`fn` compiled gives eager's value with every backend and `graphs` graphs, no break."""
    expected = fn(*args, **kwargs)
    report = _dynamo.explain(fn)(*args, **kwargs)
    assert (report.graph_count, report.graph_break_count) == (graphs, 0), report.break_reasons
    for backend in ("eager", "aot_eager", "inductor"):
        _dynamo.reset()
        assert_same(minitorch.compile(fn, backend=backend)(*args, **kwargs), expected)
    return report


# ---- forwarding arguments ----------------------------------------------------------------------


def _inner(x, a, b=1, scale=1.0):
    return x * a + b * scale


def _forward_all(x, *args, **kwargs):
    return _inner(x, *args, **kwargs)


def test_star_args_and_kwargs_forwarded_through_a_helper():
    check_one_graph(lambda x: _forward_all(x, 2, b=3, scale=0.5), _x())


def test_star_args_and_kwargs_forwarded_through_a_nested_function():
    def f(x):
        def g(*a, **k):
            return _inner(*a, **k)

        return g(x, 2, b=3)

    check_one_graph(f, _x())


def _block(x, **kw):
    """A helper written the usual way: options as **kw."""
    if kw.get("act", "relu") == "relu":
        x = x.relu()
    if "bias" in kw:
        x = x + kw["bias"]
    return x * kw.get("scale", 1.0)


def test_inlining_a_function_that_takes_kw():
    def f(x):
        return _block(x, act="relu", scale=2.0) + _block(x, bias=1.0) + _block(x, act="none")

    check_one_graph(f, _x())


def test_kw_is_a_new_dict_on_every_call():
    """A callee that mutates its **kw does not change what the next call sees."""

    def mutating(x, **kw):
        kw["n"] = kw.get("n", 0) + 1
        return x * kw["n"]

    def f(x):
        return mutating(x) + mutating(x)  # 1 each time, as in CPython

    check_one_graph(f, _x())


# ---- functools ---------------------------------------------------------------------------------


def test_partial_of_a_minitorch_function_made_in_the_frame():
    def f(x):
        clamp = functools.partial(minitorch.clamp, min=0.0)
        return clamp(x) + clamp(x, max=1.0)

    check_one_graph(f, _x())


def test_partial_of_a_user_function_and_its_attributes():
    def f(x):
        p = functools.partial(_inner, a=2)
        assert p.func is _inner and p.args == () and p.keywords == {"a": 2}
        return p(x, b=4)

    check_one_graph(f, _x())


@functools.lru_cache
def _cached_scale(n):
    return n * SCALE


SCALE = 2


def test_lru_cache_helper_with_constant_arguments():
    check_one_graph(lambda x: x * _cached_scale(3), _x())


def test_lru_cache_result_is_the_cached_one_even_when_stale():
    """A cache holding a stale value gives it eagerly; the compiled code must give it too."""
    global SCALE
    _cached_scale.cache_clear()
    f = minitorch.compile(lambda x: x * _cached_scale(5), backend="eager")
    x = _x()
    np.testing.assert_allclose(f(x).numpy(), (x * 10).numpy())
    SCALE = 100  # the cache still says 10 for n=5
    try:
        np.testing.assert_allclose(f(x).numpy(), (x * 10).numpy())
        _cached_scale.cache_clear()  # now eager computes 500
        np.testing.assert_allclose(f(x).numpy(), (x * 500).numpy())
    finally:
        SCALE = 2
        _cached_scale.cache_clear()


@functools.cache
def _cached_ones(n):
    return minitorch.ones(n)


def test_lru_cache_tensor_result_is_the_cached_tensor():
    """A cached tensor is the same object on every call: a write to it is seen next call."""

    def f(x):
        return x + _cached_ones(3)

    _cached_ones.cache_clear()
    compiled, x = minitorch.compile(f, backend="eager"), _x()
    assert_same(compiled(x), f(x))
    _cached_ones(3).add_(1.0)  # eager's next call sees 2s
    assert_same(compiled(x), f(x))
    np.testing.assert_allclose(compiled(x).numpy(), (x + 2).numpy())
    _cached_ones.cache_clear()


def test_lru_cache_called_with_a_tensor_runs_for_real():
    @functools.lru_cache
    def double(t):
        return t * 2

    def f(x):
        return double(x) + 1

    x = _x()
    compiled = minitorch.compile(f, backend="eager")
    assert_same(compiled(x), f(x))
    assert double.cache_info().currsize == 1  # one tensor, one entry, called eagerly


# ---- methods and objects -----------------------------------------------------------------------


class _Proj(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, x):
        f = self.proj  # a bound module kept in a local
        g = self.scale  # a bound method kept in a local
        return g(f(x))

    def scale(self, t):
        return t * 2


def test_bound_method_and_module_kept_in_a_local():
    m = _Proj()
    check_one_graph(m.forward, _x())


class _Config:
    """Attributes from a dict, through __getattr__."""

    def __init__(self):
        self.options = {"scale": 2.0}
        self.shift = 1.0

    def __getattr__(self, name):
        if name in ("scale",):
            return self.options[name]
        return 0.5


_CONFIG = _Config()


def test_object_with_getattr():
    def f(x):
        return x * _CONFIG.scale + _CONFIG.shift + _CONFIG.missing

    check_one_graph(f, _x())


def test_object_with_getattr_follows_a_new_attribute():
    def f(x):
        return x * _CONFIG.scale + _CONFIG.extra

    compiled, x = minitorch.compile(f, backend="eager"), _x()
    assert_same(compiled(x), f(x))
    _CONFIG.extra = 7.0  # now normal lookup finds it on the instance
    try:
        assert_same(compiled(x), f(x))
        del _CONFIG.extra
        type(_CONFIG).extra = 3.0  # ... or on the class
        assert_same(compiled(x), f(x))
    finally:
        _CONFIG.__dict__.pop("extra", None)
        if "extra" in vars(type(_CONFIG)):
            del type(_CONFIG).extra


class _Slotted:
    __slots__ = ("k", "bias")

    def __init__(self, k, bias):
        self.k, self.bias = k, bias

    def apply(self, x):
        return x * self.k + self.bias


_SLOTTED = _Slotted(3.0, minitorch.tensor([1.0, 2.0, 3.0]))


def test_object_with_slots():
    def f(x):
        return _SLOTTED.apply(x) + _SLOTTED.k

    check_one_graph(f, _x())
    compiled, x = minitorch.compile(f, backend="eager"), _x()
    compiled(x)
    _SLOTTED.k = 5.0  # a new value in the slot retraces
    try:
        assert_same(compiled(x), f(x))
    finally:
        _SLOTTED.k = 3.0


# ---- plain Python on argument values ----------------------------------------------------------


@pytest.mark.parametrize("v", [3, 2.5, True, "s", None, (1, 2), [1, 2]])
def test_type_isinstance_and_callable_on_arguments(v):
    def f(x, v):
        r = x * 1.0
        if isinstance(v, int):
            r = r + 1
        if isinstance(v, (tuple, list)):
            r = r * 2
        if type(v) is int:
            r = r - 1
        if type(v) is bool:
            r = r - 10
        if callable(v):
            r = r * 100
        return r

    check_one_graph(f, _x(), v)


@pytest.mark.parametrize("v", [3, 2.5, "s", None, (1, 2)])
def test_type_name_of_an_argument(v):
    def f(x, v):
        return x * 2, type(v).__name__, type(v).__qualname__, len.__name__

    check_one_graph(f, _x(), v)


def test_callable_on_functions_modules_and_tensors():
    lin = nn.Linear(3, 3)

    def f(x):
        flags = (callable(x), callable(lin), callable(_inner), callable(len), callable(3))
        return x * 2, flags

    check_one_graph(f, _x())
    assert f(_x())[1] == (False, True, True, True, False)


def test_hasattr_and_getattr_with_a_default_on_a_tensor():
    def f(x):
        scale = getattr(x, "scale", 2.0)
        return x * scale + (1 if hasattr(x, "shape") else 0) + (1 if hasattr(x, "nope") else 0)

    check_one_graph(f, _x())


def test_getattr_default_follows_an_attribute_set_on_the_tensor():
    def f(x):
        return x * getattr(x, "scale", 2.0)

    compiled, x = minitorch.compile(f, backend="eager"), _x()
    assert_same(compiled(x), f(x))
    x.scale = 10.0
    assert_same(compiled(x), f(x))


def test_shape_as_a_list_and_slice_none():
    def f(x):
        s = list(x.shape)
        y = x[slice(None), 0] + x[slice(None, 1)].sum()
        return x.reshape(s[::-1]), y

    check_one_graph(f, _x())


def test_is_cuda_len_and_rows_of_a_tensor():
    def f(x):
        out = [row.sum() * len(x) for row in x]
        return minitorch.stack(out) + (1 if x.is_cuda else 2)

    check_one_graph(f, _x())


def test_or_and_on_values_that_are_not_tensors():
    def f(x, y=None, k=3, name=""):
        y = y or x
        return y * (k and 2) + (1 if (name or "relu") == "relu" else 0)

    check_one_graph(f, _x())


# ---- `a or b` on a tensor: bool() of its value, a graph break as in TorchDynamo ----------------


def _or(x):
    a = x[0, 0:1] * 2
    return (a or x.sum()) + 1


def _and_in_a_call(x):
    a = x[0, 0:1] * 2
    return minitorch.relu(a and x.sum() - 10) + x.sum()  # a callable under `a` on the stack


@pytest.mark.parametrize("fn", [_or, _and_in_a_call])
@pytest.mark.parametrize("first", [1.0, 0.0])
def test_or_and_on_a_tensor_break_once(fn, first):
    """bool() of a one-element tensor decides: one break, a graph before it and one after,
    whichever way it goes (not the whole frame run eagerly)."""
    x = minitorch.tensor([[first, 2.0, 3.0]])
    report = _dynamo.explain(fn)(x)
    assert (report.graph_count, report.graph_break_count) == (2, 1)
    assert "tensor's value" in str(report.break_reasons[0])
    for backend in ("eager", "aot_eager", "inductor"):
        _dynamo.reset()
        assert_same(minitorch.compile(fn, backend=backend)(x), fn(x))


def test_or_on_a_tensor_of_many_elements_raises_eagers_error():
    def f(t):
        return (t * 2 or t) + 1

    x = _x()
    with pytest.raises(Exception) as eager:
        f(x)
    with pytest.raises(type(eager.value)) as compiled:
        minitorch.compile(f, backend="eager")(x)
    assert str(compiled.value) == str(eager.value)


# ---- named tuples ------------------------------------------------------------------------------

_Pair = collections.namedtuple("_Pair", ["a", "b"])


class _Scaled(typing.NamedTuple):
    value: minitorch.Tensor
    scale: float = 2.0


def test_named_tuple_class_from_the_globals():
    def f(x):
        p = _Pair(x, b=x + 1)
        s = _Scaled(x)
        return p.a * p.b + s.value * s.scale, p, isinstance(p, _Pair)

    report = check_one_graph(f, _x())
    assert report.graph_count == 1
    out = minitorch.compile(f, backend="eager")(_x())[1]
    assert type(out) is _Pair and out._fields == ("a", "b")


def test_named_tuple_made_in_the_frame():
    def f(x):
        Point = collections.namedtuple("Point", "x y", defaults=[3.0])
        p = Point(x)
        return p.x * p.y + p[0], p

    report = _dynamo.explain(f)(_x())
    assert (report.graph_count, report.graph_break_count) == (1, 0)
    x = _x()
    total, p = f(x)
    for backend in ("eager", "aot_eager", "inductor"):
        _dynamo.reset()
        out_total, out = minitorch.compile(f, backend=backend)(x)
        assert_same(out_total, total)
        # NOTE: eager makes a new class on every call, so the classes are never the same
        # object; everything else about them is (named_tuples.py).
        assert type(out).__name__ == "Point" and type(out).__module__ == type(p).__module__
        assert out._fields == p._fields and out.y == p.y
        assert_same(out.x, p.x)


# ---- operators on plain objects call their dunders ---------------------------------------------


class _Wrapped:
    """Holds a tensor; its operators return tensors (or NotImplemented)."""

    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        if isinstance(other, (int, float)):
            return self.t + other
        return NotImplemented

    def __radd__(self, other):
        return self.t * 0 + other + 100

    def __mul__(self, other):
        return self.t * other

    def __rmul__(self, other):
        return self.t * other * 2

    def __neg__(self):
        return -self.t


class _WrappedChild(_Wrapped):
    def __radd__(self, other):
        return self.t - 1000


_CHILD = _WrappedChild(minitorch.tensor([5.0, 6.0]))


@pytest.mark.parametrize(
    "expression",
    [
        lambda w, x: w + 1,  # __add__
        lambda w, x: 2.0 + w,  # float's __add__ knows nothing: __radd__
        lambda w, x: w * x,  # __mul__ with a tensor
        lambda w, x: x * w,  # Tensor.__mul__ returns NotImplemented: __rmul__
        lambda w, x: 3 * w,
        lambda w, x: -w,
        lambda w, x: w + _CHILD,  # the subclass's __radd__ goes first
    ],
)
def test_operators_on_an_object_call_its_dunders(expression):
    w = _Wrapped(minitorch.tensor([1.0, 2.0]))

    def f(x):
        return expression(w, x) + x

    check_one_graph(f, minitorch.tensor([3.0, 4.0]))


@pytest.mark.parametrize(
    "expression",
    [
        lambda w, x: w - x,  # no __sub__, and Tensor has no __rsub__ for it
        lambda w, x: w + w,  # NotImplemented, and one type never tries its own __radd__
    ],
)
def test_an_operator_the_object_lacks_is_eagers_type_error(expression):
    w = _Wrapped(minitorch.tensor([1.0, 2.0]))

    def f(x):
        return expression(w, x)

    with pytest.raises(TypeError) as eager:
        f(minitorch.tensor([3.0, 4.0]))
    with pytest.raises(TypeError) as compiled:
        minitorch.compile(f, backend="eager")(minitorch.tensor([3.0, 4.0]))
    assert str(compiled.value) == str(eager.value)


def test_a_dunder_patched_on_the_class_retraces():
    class Num:
        def __init__(self, k):
            self.k = k

        def __mul__(self, other):
            return other * self.k

    n = Num(2.0)

    def f(x):
        return n * x

    compiled, x = minitorch.compile(f, backend="eager"), _x()
    assert_same(compiled(x), f(x))
    Num.__mul__ = lambda self, other: other + self.k
    assert_same(compiled(x), f(x))


def test_isinstance_of_objects_and_modules():
    lin = nn.Linear(3, 3)

    def f(x):
        r = x * 1.0
        if isinstance(lin, nn.Linear):
            r = r + 1
        if isinstance(lin, (nn.ReLU, nn.Module)):
            r = r * 2
        if isinstance(_CONFIG, _Config):
            r = r - 3
        if isinstance(_CONFIG, (int, _Pair)):
            r = r * 100
        return r

    check_one_graph(f, _x())
