"""Side effects on the caller's lists, dicts and objects, replayed after the graph runs
(tracer/dynamo/side_effects.py), and in-place ops on input tensors, written back with copy_."""

from __future__ import annotations

import operator

import pytest

import minitorch
from minitorch import nn
from tests.tracer.dynamo.helpers import CountingBackend, assert_same
from tracer.dynamo import cache_entries, fallback_reasons, optimize, recompile_reasons, reset

pytestmark = pytest.mark.capture

X = minitorch.tensor([1.0, -2.0, 3.0])


class Box:
    def __init__(self):
        self.count = 0
        self.seen = []


def breaks_of(fn) -> list[str]:
    return [b.reason for e in cache_entries(fn) for b in e.graph_breaks]


def mutate_everything(x, out, d, box):
    y = x.cos()
    out.append(y)
    out.extend([y * 2, 3])
    out[0] = out[0] + 1  # a read after a write sees the write
    d["k"] = out.pop()
    d.update({"z": y})
    box.count += 1
    box.count += 1
    box.seen.append(box.count)
    return y * box.count + len(out)


def test_writes_to_the_callers_containers_and_objects_are_replayed():
    backend = CountingBackend()
    compiled = optimize(mutate_everything, backend=backend)
    mine = (X.clone(), [X], {"a": 1}, Box())
    theirs = (X.clone(), [X], {"a": 1}, Box())
    assert_same(compiled(*mine), mutate_everything(*theirs))
    assert_same(mine[:3], theirs[:3])
    assert mine[3].count == theirs[3].count == 2 and mine[3].seen == theirs[3].seen == [2]
    assert list(mine[2]) == ["a", "k", "z"] and mine[1][0] is not X
    assert fallback_reasons(mutate_everything) == [] and backend.count == 1
    source = cache_entries(mutate_everything)[0].transformed.source
    assert "L['out'][:] = " in source and "L['box'].count = " in source


_LOWER = operator.methodcaller("lower")  # an object tracing cannot call


def mutate_then_break(x, d, box):
    d["late"] = x.sin()
    box.count = 5
    keys = sorted(d, key=_LOWER)  # not traced: runs for real, after the writes were replayed
    return x * box.count, keys


def test_writes_are_replayed_before_a_graph_break_runs():
    backend = CountingBackend()
    compiled = optimize(mutate_then_break, backend=backend)
    mine, theirs = ({"b": 1}, Box()), ({"b": 1}, Box())
    assert_same(compiled(X, *mine), mutate_then_break(X, *theirs))
    assert_same(mine[0], theirs[0]) and mine[1].count == 5
    assert len(breaks_of(mutate_then_break)) == 1 and fallback_reasons(mutate_then_break) == []


class Memo(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        self.last = x.relu()
        return self.last * self.calls


def test_plain_attributes_of_a_module_are_replayed():
    mine, theirs = Memo(), Memo()
    compiled = optimize(mine.forward, backend=CountingBackend())
    for _ in range(2):  # calls changed: the second call recompiles (it shaped the graph)
        assert_same(compiled(X), theirs(X))
    assert mine.calls == theirs.calls == 2
    assert_same(mine.last, theirs.last)


def sets_tensor_attribute(x):
    x.note = 1
    return x + 1


def test_a_write_that_cannot_be_replayed_runs_the_frame_eagerly():
    x = X.clone()
    assert_same(optimize(sets_tensor_attribute, backend=CountingBackend())(x), X + 1)
    assert x.note == 1
    assert "setting attribute 'note'" in fallback_reasons(sets_tensor_attribute)[0]


# ---- in-place ops on inputs --------------------------------------------------------------


def add_in_place(x, y):
    x.add_(y)
    x -= 1
    return x * 2


def test_an_input_mutated_in_place_is_written_back_like_eager():
    x, y = X.clone(), X.clone()
    x_eager = X.clone()
    backend = CountingBackend()
    version = x._version
    result = optimize(add_in_place, backend=backend)(x, y)
    assert_same(result, add_in_place(x_eager, X.clone()))
    assert_same(x, x_eager) and x._version > version
    assert backend.count == 1 and breaks_of(add_in_place) == []


@pytest.mark.parametrize(
    "make_args, words",
    [
        (lambda: (X.clone().requires_grad_() * 1, X.clone()), "requires grad"),
        (lambda: (minitorch.ones(2, 3)[0], X.clone()), "a view of another tensor"),
    ],
)
def test_inputs_that_cannot_be_written_back_are_refused_with_a_reason(make_args, words):
    def f(x, y):
        x.add_(y)  # a CALL: the graph breaks here and the method runs for real
        return x * 2

    mine, theirs = make_args(), make_args()
    assert_same(optimize(f, backend=CountingBackend())(*mine), f(*theirs))
    assert_same(mine, theirs) and words in breaks_of(f)[0]


def test_two_inputs_sharing_memory_are_refused():
    def f(x, v):
        x.mul_(2)
        return v + 1  # v is a view of x: it must see the write

    base, base_eager = minitorch.ones(2, 3), minitorch.ones(2, 3)
    assert_same(optimize(f, backend=CountingBackend())(base, base[0]), f(base_eager, base_eager[0]))
    assert "shares memory" in breaks_of(f)[0]
    reset()
    x, x_eager = X.clone(), X.clone()  # the same tensor twice: y must see the write too
    assert_same(optimize(f, backend=CountingBackend())(x, x), f(x_eager, x_eager))
    assert "shares memory" in breaks_of(f)[0]


def test_a_later_call_whose_inputs_share_memory_retraces():
    def f(x, v):
        x.mul_(2)
        return v + 1

    compiled = optimize(f, backend=CountingBackend())
    a, b = minitorch.ones(2, 3), minitorch.ones(3)
    assert_same(compiled(a, b), f(minitorch.ones(2, 3), minitorch.ones(3)))
    base, base_eager = minitorch.ones(2, 3), minitorch.ones(2, 3)
    assert_same(compiled(base, base[0]), f(base_eager, base_eager[0]))  # the guard fails
    assert_same(base, base_eager) and len(cache_entries(f)) == 2
    assert "did not share memory while tracing and do now" in recompile_reasons(f)[0]


# ---- bound methods and partials ----------------------------------------------------------


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):  # not a plain method call: not traced
        return x * self.k

    def apply(self, x):
        return x * self.k + self.offset()

    def offset(self):
        return 1


def test_a_bound_method_is_inlined_and_its_attributes_guarded():
    obj = Scale(2.0)

    def f(x):
        return obj.apply(x)

    backend = CountingBackend()
    compiled = optimize(f, backend=backend)
    assert_same(compiled(X), f(X))
    obj.k = 3.0
    assert_same(compiled(X), f(X))
    assert backend.count == 2 and "k" in recompile_reasons(f)[0]


def test_a_partial_is_inlined_with_its_arguments_guarded():
    import functools

    def scaled(x, y, k=1.0):
        return x * k + y

    p = functools.partial(scaled, k=2.0)

    def f(x):
        return p(x, 1.0) + 1

    backend = CountingBackend()
    compiled = optimize(f, backend=backend)
    assert_same(compiled(X), f(X))
    assert breaks_of(f) == [] and backend.count == 1
    p = functools.partial(scaled, X, k=3.0)  # another func/args: guards fail, retrace

    def g(y):
        return p(y)

    assert_same(optimize(g, backend=backend)(X), g(X))
    assert backend.count == 2


def bump_then_print(box, x):
    box.count += 1
    print("count", box.count)  # not traced: the call of this helper cannot be a graph break


def calls_bump(x, box):
    y = x.sin()
    bump_then_print(box, x)
    return y + box.count


def test_a_call_that_wrote_before_it_failed_is_not_run_twice(capsys):
    mine, theirs = Box(), Box()
    assert_same(optimize(calls_bump, backend=CountingBackend())(X, mine), calls_bump(X, theirs))
    assert mine.count == theirs.count == 1
    assert capsys.readouterr().out == "count 1\ncount 1\n"
    assert "print" in fallback_reasons(calls_bump)[0]


class WithProperty:
    def __init__(self):
        self.__dict__["k"] = 100.0  # shadowed: the property wins, as in Python
        self._k = 2.0

    @property
    def k(self):
        return self._k

    @k.setter
    def k(self, value):
        self._k = value * 10


def test_properties_are_read_and_their_setters_left_to_eager():
    obj = WithProperty()

    def reads(x):
        return x * obj.k

    def writes(x):
        obj.k = 1.0
        return x + 1

    assert_same(optimize(reads, backend=CountingBackend())(X), X * 2.0)
    assert_same(optimize(writes, backend=CountingBackend())(X), X + 1)
    assert obj._k == 10.0 and "property" in fallback_reasons(writes)[0]
