"""In-place methods on tensors the graph made, and on inputs (written back after the graph), are
recorded functionally (variables/inplace.py); elsewhere they still break the graph, and the
results stay equal to eager."""

from __future__ import annotations

import pytest

import minitorch
from tests.tracer.dynamo.helpers import CountingBackend, assert_same
from tracer.dynamo import cache_entries, fallback_reasons, optimize, reset

pytestmark = pytest.mark.capture

X = minitorch.tensor([[1.0, -2.0], [3.0, 0.5]])
ONES64 = minitorch.tensor([1.0, 1.0], dtype=minitorch.float64)


@pytest.fixture(autouse=True)
def _fresh_cache():
    reset()
    yield
    reset()


def run(fn, *args):
    backend = CountingBackend()
    mine = [a.clone() if isinstance(a, minitorch.Tensor) else a for a in args]
    assert_same(optimize(fn, backend=backend)(*mine), fn(*args))
    for a, b in zip(mine, args):
        assert_same(a, b)  # inputs mutated the same way
    breaks = [b.reason for e in cache_entries(fn) for b in e.graph_breaks]
    return backend, breaks


def chained(x):
    y = x.sin()
    z = y.add_(1).mul_(x)  # each returns y itself
    return z, y, z is y


def test_in_place_methods_on_an_intermediate_become_graph_ops():
    backend, breaks = run(chained, X)
    assert breaks == [] and backend.count == 1
    (gm,) = backend.graphs
    targets = [n.target for n in gm.graph.nodes if n.op == "call_method"]
    assert targets == ["sin", "add", "mul"]


def views_then_write(x):
    y = x * 2
    row = y[0]  # a view: it must see the write
    y.add_(1)
    return row, y


def requires_grad_write(x):
    y = x.exp()  # exp's derivative reads y: eager's backward would refuse after the write
    y.add_(1)
    return y


def dtype_change(x):
    y = x * 2
    y.add_(ONES64)  # eager keeps float32: the out-of-place add would be float64
    return y


@pytest.mark.parametrize(
    "fn, words",
    [
        (views_then_write, "a view of it was taken"),
        (requires_grad_write, "requires grad"),
        (dtype_change, "shape or dtype"),
    ],
)
def test_writes_that_functional_ops_cannot_express_break_the_graph(fn, words):
    x = X.clone().requires_grad_() if fn is requires_grad_write else X
    _, breaks = run(fn, x)
    assert fallback_reasons(fn) == [] and len(breaks) == 1 and words in breaks[0]


def test_an_input_is_written_back_after_the_graph():
    def f(x):
        x.mul_(3)
        return x + 1

    x = X.clone()
    version = x._version
    backend, breaks = run(f, x.clone())  # the caller's tensor changes as in eager
    assert breaks == [] and fallback_reasons(f) == [] and backend.count == 1
    optimize(f, backend=backend)(x)
    assert x._version > version  # copy_ bumped it, as mul_ does


def test_pieces_of_a_written_input_share_its_memory():
    # chunk's pieces are views of the input eager mutated: the graph's pieces would be views
    # of its new value, which shares nothing with the caller's tensor (found by the fuzzer)
    def f(x):
        x += x
        first, second = x.chunk(2, 0)
        return second

    x = minitorch.tensor([1.0, 2.0])
    out = optimize(f, backend=CountingBackend())(x)
    out.fill_(7.0)
    assert x.tolist() == [2.0, 7.0]  # a write through the piece reaches the input, as in eager


def writes_into_copies(x):
    y = x.clone()
    y[0] = 5.0  # forward-forward's overlay_y_on_x writes into a clone
    z = minitorch.cat([x, x]).roll(1, 0)  # makemore's MLP writes into torch.roll(idx, 1, 1)
    z[1] = y[1] * 3
    w = minitorch.stack([x, y])
    w.mul_(2)
    return y, z, w


def test_writes_into_clone_roll_cat_and_stack_are_recorded():
    backend, breaks = run(writes_into_copies, X)
    assert breaks == [] and backend.count == 1
