"""Tensor factories and random ops inside compiled code are graph nodes (variables/factories.py):
one graph, no break, and the values eager gives, random ones included (drawn from the
generator `manual_seed` seeds, in eager's order, when the compiled code runs)."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch._dynamo import explain

pytestmark = pytest.mark.capture


def deterministic(x):
    n = x.shape[-1]
    grid = minitorch.zeros(4, n) + minitorch.ones(n) + minitorch.full((4, n), 2.5)
    counted = minitorch.arange(n) * 0.5 + minitorch.arange(1, 2 * n + 1, 2)
    return x + grid + counted + minitorch.zeros_like(x) + minitorch.ones_like(x) * 3


def random(x):
    noise = minitorch.randn(4, x.shape[-1]) + minitorch.rand(x.shape[-1])
    return x * noise + minitorch.randn_like(x) + minitorch.rand_like(x), minitorch.randint(
        0, 10, (4, 2)
    )


def empty_then_filled(x):
    return minitorch.empty(x.shape).fill_(2.0) + x


def without_inputs():
    return minitorch.ones(3) * 2 + minitorch.arange(3)


def _seeded_call(fn, *args):
    minitorch.manual_seed(7)
    out = fn(*args)
    return out, minitorch.rand(3)  # the generator's state after the call


def _assert_equal(actual, expected):
    for a, e in zip(
        actual if isinstance(actual, tuple) else (actual,),
        expected if isinstance(expected, tuple) else (expected,),
        strict=True,
    ):
        assert a.dtype is e.dtype and tuple(a.shape) == tuple(e.shape)
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("backend", ["eager", "inductor"])
@pytest.mark.parametrize("fn", [deterministic, random, empty_then_filled])
def test_factories_are_one_graph_equal_to_eager(fn, backend):
    x = minitorch.randn(4, 5)
    report = explain(fn)(x)
    assert (report.graph_count, report.graph_break_count) == (1, 0), str(report)
    minitorch._dynamo.reset()
    expected, state = _seeded_call(fn, x)
    compiled = minitorch.compile(fn, backend=backend)
    for _ in range(2):  # the second call runs the cached code
        actual, compiled_state = _seeded_call(compiled, x)
        _assert_equal(actual, expected)
        _assert_equal(compiled_state, state)  # the generator moved on as in eager


def test_a_graph_with_no_inputs():
    _assert_equal(minitorch.compile(without_inputs)(), without_inputs())


def test_the_ops_are_in_the_backward_graph_too():
    """randn_like's noise scales an input that requires grad: its gradient is the noise."""

    def noisy(x):
        return x * minitorch.randn_like(x)

    x = minitorch.randn(3, 2, requires_grad=True)
    minitorch.manual_seed(1)
    noisy(x).sum().backward()
    expected, x.grad = x.grad, None
    minitorch.manual_seed(1)
    minitorch.compile(noisy)(x).sum().backward()
    _assert_equal(x.grad, expected)


def test_the_like_factories_are_factories_too():
    """zeros_like and randn_like live in minitorch/factories_like.py: capture records each as
    one node (variables/factories.py's FACTORY_MODULES), not a graph break or its inlined body."""
    from minitorch import factories_like
    from tracer.dynamo.variables.factories import is_factory

    assert all(is_factory(getattr(minitorch, n)) for n in factories_like.__all__)
    fn = lambda x: minitorch.randn_like(x) * 0 + minitorch.zeros_like(x) + x  # noqa: E731
    x = minitorch.randn(3, 4)
    report = explain(fn)(x)
    assert (report.graph_count, report.graph_break_count) == (1, 0), str(report)
    targets = [n.target for g in report.graphs for n in g.graph.nodes]
    assert minitorch.randn_like in targets and minitorch.zeros_like in targets, targets
    minitorch._dynamo.reset()
    _assert_equal(minitorch.compile(fn, fullgraph=True)(x), x)


def test_a_like_factory_makes_fresh_memory_to_write_in_place():
    """zeros_like(x) owns its memory (variables/inplace.py's _FRESH_MODULES): add_ on it is
    written functionally, in the graph, not a break."""

    def filled(x):
        return minitorch.zeros_like(x).add_(2) * x

    x = minitorch.randn(2, 3)
    report = explain(filled)(x)
    assert (report.graph_count, report.graph_break_count) == (1, 0), str(report)
    _assert_equal(minitorch.compile(filled, fullgraph=True)(x), filled(x))


def like(x):
    return minitorch.zeros_like(x) + 1


def test_a_like_factory_guards_its_input_sizes():
    compiled = minitorch.compile(like, backend="eager", dynamic=True)
    for n in (3, 5):
        assert tuple(compiled(minitorch.randn(n, 2)).shape) == (n, 2)


def test_a_new_leaf_is_not_captured():
    def leaf(x):
        return x + minitorch.zeros(3, requires_grad=True)

    report = explain(leaf)(minitorch.randn(3))
    assert any("requires_grad=True" in b.reason for b in report.break_reasons)


def reseeds(x):
    minitorch.manual_seed(3)
    return x + minitorch.randn(3) + minitorch.tensor([1.0, 2.0, 3.0]) + minitorch.tensor(x.tolist())


def test_seeding_and_data_are_graph_breaks_with_eager_values():
    # tensor([1.0, 2.0, 3.0]) is captured (its data is constant: test_data_factories.py);
    # tensor(x.tolist()) is data read while running: a break
    x = minitorch.zeros(3)
    reasons = [b.reason for b in explain(reseeds)(x).break_reasons]
    assert any("manual_seed() replaces the random generator" in r for r in reasons), reasons
    assert any("tolist" in r for r in reasons), reasons
    minitorch._dynamo.reset()
    expected = reseeds(x)
    minitorch.randn(2)  # moves the generator: the compiled call must seed it again
    _assert_equal(minitorch.compile(reseeds)(x), expected)
