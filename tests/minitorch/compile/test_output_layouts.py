"""Compiled outputs are laid out in memory as eager's are ([Note: output layouts])."""

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch import _dynamo

BACKENDS = ["inductor", "numpy", "interpreter"]


def transposed_results(x, y):
    return x.t().sin(), y * 2, x + 1


def write_through_a_flattened_result(x):
    y = x.t().sin()
    print(end="")  # y leaves the graph; eager's y is transposed, so its flatten is a copy
    flat = y.flatten()
    flat[0].mul_(2)
    return y


def _orders(outs):
    return [tuple(np.argsort([-s for s in o.stride()], kind="stable")) for o in outs]


@pytest.mark.parametrize("backend", BACKENDS)
def test_outputs_have_eagers_dim_order(backend):
    _dynamo.reset()
    x = minitorch.randn(3, 4)
    y = minitorch.randn(4, 3).t()  # a transposed input: eager's y * 2 is transposed too
    expected = transposed_results(x, y)
    got = minitorch.compile(transposed_results, backend=backend)(x, y)
    assert _orders(got) == _orders(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reshape_of_an_output_copies_where_eager_copies(backend):
    _dynamo.reset()
    x = minitorch.randn(3, 4)
    expected = write_through_a_flattened_result(x)
    got = minitorch.compile(write_through_a_flattened_result, backend=backend)(x)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


def test_asking_eager_for_the_layout_draws_no_random_numbers():
    def f(x):
        return F.dropout(x.t(), 0.5, training=True) * 1

    x = minitorch.ones(3, 4)
    draws = []
    for fn in (f, minitorch.compile(f, backend="inductor")):
        minitorch.manual_seed(0)
        out = fn(x)
        draws.append((out.numpy().copy(), minitorch.rand(5).numpy()))
    np.testing.assert_array_equal(draws[1][1], draws[0][1])


def test_eager_is_not_asked_when_every_output_has_one_order(monkeypatch):
    """A training step's loss (0 dims) or a vector has one dim order: the graph's permute
    (the linear's weight.t()) needs no eager run, while a 2-d result of one still does."""
    layouts = __import__("minitorch.compile.layouts", fromlist=["eager_layouts"])
    asked = []
    real = layouts.eager_layouts
    monkeypatch.setattr(layouts, "eager_layouts", lambda *a: asked.append(1) or real(*a))
    w = minitorch.randn(3, 4, requires_grad=True)

    def loss(x):
        return (x @ w.t()).relu().sum(dim=0)

    x = minitorch.randn(5, 4)
    compiled = minitorch.compile(loss, backend="inductor")(x)
    np.testing.assert_allclose(compiled.detach().numpy(), loss(x).detach().numpy(), rtol=1e-5)
    assert asked == []
    _dynamo.reset()
    got = minitorch.compile(transposed_results, backend="inductor")(x.t(), x)
    assert asked == [1]
    assert _orders(got) == _orders(transposed_results(x.t(), x))
