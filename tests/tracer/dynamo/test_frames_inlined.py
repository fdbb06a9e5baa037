"""Frames inside frames: closures and lambdas read from any scope are inlined, and a graph
break inside an inlined call splits the caller's graph at the call, runs the callee with its
own frame captured, and resumes in a new graph ([Note: breaks inside inlined calls]).

Every case compares the compiled result (and gradients, where there are some) with eager, and
pins the graph counts that Dynamo's design gives.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch
from minitorch import nn
from tests.tracer.dynamo.helpers import CountingBackend, assert_same, check_compiled
from tracer.dynamo import cache_entries, explain, fallback_reasons, optimize

pytestmark = pytest.mark.capture


# ---- closures and lambdas -------------------------------------------------------------------


def make_scale(k):
    return lambda t: t * k


def test_a_closure_from_an_enclosing_function_is_inlined():
    scale = make_scale(3.0)

    def f(x):
        return scale(x) + 1

    backend = check_compiled(f, minitorch.randn(4))
    assert backend.count == 1


def test_a_cell_that_changes_retraces():
    k = [2.0]

    def scale(t):
        return t * k[0]

    def f(x):
        return scale(x)

    compiled = optimize(f, backend=CountingBackend())
    x = minitorch.randn(3)
    assert_same(compiled(x), f(x))
    k[0] = 5.0  # a list item read through the closure cell: guarded by value
    assert_same(compiled(x), f(x))
    assert fallback_reasons(f) == []


def test_a_cell_assigned_again_by_its_function_retraces():
    def make():
        k = 2.0

        def scale(t):
            return t * k

        def set_k(v):
            nonlocal k
            k = v

        return scale, set_k

    scale, set_k = make()

    def f(x):
        return scale(x)

    compiled = optimize(f, backend=CountingBackend())
    x = minitorch.randn(3)
    assert_same(compiled(x), f(x))
    set_k(7.0)
    assert_same(compiled(x), f(x))
    assert len(cache_entries(f)) == 2


def test_a_closure_over_a_tensor_reads_it_as_a_graph_input():
    w = minitorch.randn(3, requires_grad=True)
    scale = make_scale(w)

    def f(x):
        return scale(x).sum()

    backend = check_compiled(f, minitorch.randn(3))
    assert backend.count == 1
    compiled = optimize(f, backend=backend)
    compiled(minitorch.randn(3)).backward()
    assert w.grad is not None


class WithLambda(nn.Module):
    def __init__(self, k: float) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = lambda t: t.relu() * k  # a closure stored on the module

    def forward(self, x):
        return self.act(self.fc(x))


def test_a_lambda_stored_on_a_module_is_inlined():
    model = WithLambda(2.0)
    x = minitorch.randn(2, 3)
    out = explain(model)(x)
    assert (out.graph_count, out.graph_break_count) == (1, 0)
    backend = CountingBackend()
    assert_same(optimize(model.forward, backend=backend)(x), model(x))


def test_a_decorated_function_is_inlined_through_the_wrapper_cell():
    def twice(fn):
        def wrapper(t):
            return fn(fn(t))

        return wrapper

    @twice
    def inc(t):
        return t + 1

    def f(x):
        return inc(x).sin()

    assert check_compiled(f, minitorch.randn(3)).count == 1


def test_an_empty_cell_raises_as_eager_does():
    def make():
        def use(t):
            return t * late  # noqa: F821 - assigned below, after the call

        fn = use
        return fn
        late = 1.0  # noqa: F841 - never runs: the cell stays empty

    use = make()

    def f(x):
        return use(x)

    compiled = optimize(f, backend=CountingBackend())
    with pytest.raises(NameError):
        f(minitorch.randn(2))
    with pytest.raises(NameError):
        compiled(minitorch.randn(2))


def assert_trains_like_eager(compiled, model, x) -> None:
    """The compiled loss and every parameter's gradient equal eager's."""
    loss = compiled(x)
    loss.backward()
    grads = [p.grad for p in model.parameters()]
    model.zero_grad()
    expected = model(x)
    expected.backward()
    assert_same(loss, expected)
    for got, want in zip(grads, [p.grad for p in model.parameters()]):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    model.zero_grad()


# ---- a graph break inside an inlined call -----------------------------------------------------


def helper(t):
    t = t * 2
    print("helper")
    return t + 1


def test_a_break_inside_a_helper_resumes_in_new_graphs(capsys):
    f = lambda x: helper(x).sum()  # noqa: E731 - the issue's own example
    x = minitorch.randn(3)
    out = explain(f)(x)
    assert out.graph_count == 3
    assert out.ops_per_graph == [["operator.mul"], ["operator.add"], ["Tensor.sum"]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "runs eagerly" warning
        compiled = optimize(f, backend=CountingBackend())
        assert_same(compiled(x), f(x))
    assert capsys.readouterr().out == "helper\n" * 3  # explain, compiled, eager: once each
    assert fallback_reasons(f) == [] and fallback_reasons(helper) == []


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 4)

    def forward(self, x):
        h = self.fc(x).relu()
        print("encoder")
        return h * 2


class Model(nn.Module):
    """A break two calls deep, in a submodule and in a method (VAE's `encode`)."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(4, 2)

    def encode(self, x):
        h = self.encoder(x)
        print("encode")
        return h.tanh()

    def forward(self, x):
        return self.head(self.encode(x)).sum()


def test_breaks_in_a_method_and_a_submodule_give_graphs_around_them(capsys):
    model = Model()
    x = minitorch.randn(5, 3)
    out = explain(model)(x)
    assert out.ops_per_graph == [
        ["minitorch.linear", "Tensor.relu"],
        ["operator.mul"],
        ["Tensor.tanh"],
        ["minitorch.linear", "Tensor.sum"],
    ]
    compiled = minitorch.compile(model, backend="eager")
    for _ in range(2):
        assert_trains_like_eager(compiled, model, x)
    assert fallback_reasons(Model.forward) == []


def test_a_break_in_a_callee_with_the_default_backend_matches_eager(capsys):
    model = Model()
    x = minitorch.randn(5, 3)
    compiled = minitorch.compile(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(compiled(x), model(x))


def test_super_in_a_broken_call_runs_eagerly_not_wrongly():
    class Base(nn.Module):
        def forward(self, x):
            return x + 1

    class Child(Base):
        def forward(self, x):
            print("child")
            return super().forward(x) * 2

    model = Child()

    def f(x):
        return model(x).sum()

    compiled = optimize(f, backend=CountingBackend())
    x = minitorch.randn(3)
    assert_same(compiled(x), f(x))


# ---- a frame that runs eagerly still has its modules captured ---------------------------------


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        print("block")
        return x + h.relu()


class Tower(nn.Module):
    """minGPT's shape: a loop over blocks, where a break cannot resume (it is in a loop)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(3)])
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x).sum()


def test_modules_called_from_a_frame_that_runs_eagerly_are_captured(capsys):
    model = Tower()
    x = minitorch.randn(2, 3)
    out = explain(model)(x)
    assert [e.code.co_name for e in out.entries if e.transformed is None] == ["forward"]
    # Block's graphs around its break (compiled again once its input requires grad), and
    # the head's; the eager frame's own `.sum()` is the only op outside a graph.
    assert out.ops_per_graph == [["minitorch.linear"], ["Tensor.relu", "operator.add"]] * 2 + [
        ["minitorch.linear"]
    ]
    assert_trains_like_eager(minitorch.compile(model, backend="eager"), model, x)


def test_the_module_call_hook_is_only_set_while_an_eager_frame_runs():
    from minitorch.nn.module import call_hook

    model = Tower()
    compiled = minitorch.compile(model, backend="eager")
    compiled(minitorch.randn(2, 3))
    assert call_hook.get() is None
    model.blocks[0].fc.weight = nn.Parameter(minitorch.randn(4, 4))  # a shape error
    x = minitorch.randn(2, 3)
    with pytest.raises(Exception) as eager:  # noqa: B017 - whichever error eager raises
        model(x)
    with pytest.raises(eager.type):
        compiled(x)
    assert call_hook.get() is None
