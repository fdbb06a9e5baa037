"""Compiled functions keep eager's aliasing, version counters and None gradients.

Each test runs the function eagerly and compiled with every backend, and compares what a
caller can observe: values, which tensors share memory, writes through outputs, `.grad`.
"""

import numpy as np
import pytest

import minitorch
from minitorch import _dynamo
from minitorch.errors import AutogradError

BACKENDS = ["eager", "aot_eager", "inductor"]
X = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.fixture(autouse=True)
def _fresh():
    _dynamo.reset()
    yield
    _dynamo.reset()


def run(fn, backend, *arrays, requires_grad=False):
    """fn's outputs (as a tuple) and its inputs, made from copies of `arrays`."""
    inputs = [minitorch.tensor(a.copy(), requires_grad=requires_grad) for a in arrays]
    f = fn if backend is None else minitorch.compile(fn, backend=backend)
    out = f(*inputs)
    return (out if isinstance(out, tuple) else (out,)), inputs


def shares(a, b) -> bool:
    return np.shares_memory(a.detach().numpy(), b.detach().numpy())


def aliasing(outs, inputs) -> list:
    """Which outputs share memory with which inputs and earlier outputs, and their _base."""
    return [
        (
            [shares(o, x) for x in inputs],
            [shares(o, p) for p in outs[:i]],
            [o._base is x for x in inputs],
            [o is x for x in inputs],
        )
        for i, o in enumerate(outs)
    ]


def views_of_inputs(x):
    return x.t(), x[0], x.reshape(12), x[1:, ::2], x.unsqueeze(0).expand(2, 3, 4)


def views_of_each_other(x):
    y = x * 2
    return y, y.t(), y[1]


def views_of_a_hidden_base(x):
    y = x * 2
    return y.t(), y[0]


def a_copying_reshape(x):
    return x.t().reshape(12)


def the_input_itself(x):
    return x, x * 1


def view_after_mutating_the_input(x):
    x.add_(1)
    return x.t()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn",
    [
        views_of_inputs,
        views_of_each_other,
        views_of_a_hidden_base,
        a_copying_reshape,
        the_input_itself,
        view_after_mutating_the_input,
    ],
)
def test_outputs_alias_what_eager_outputs_alias(fn, backend):
    expected, eager_inputs = run(fn, None, X)
    got, inputs = run(fn, backend, X)
    assert aliasing(got, inputs) == aliasing(expected, eager_inputs)
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(g.numpy(), e.numpy())
    # A write through the first output reaches exactly what it reaches in eager.
    expected[0].mul_(10)
    got[0].mul_(10)
    for e, g in zip(expected + tuple(eager_inputs), got + tuple(inputs)):
        np.testing.assert_array_equal(g.numpy(), e.numpy())


def view_then_break_then_mutate(x):
    v = x.t()
    print(end="")  # a graph break: v crosses it as a view of x
    x.add_(1)
    return v * 1


def mutate_a_view_then_break(x):
    x[0].add_(1)
    print(end="")
    return x * 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [view_then_break_then_mutate, mutate_a_view_then_break])
def test_views_and_mutation_across_graph_breaks(fn, backend):
    expected, eager_inputs = run(fn, None, X)
    got, inputs = run(fn, backend, X)
    np.testing.assert_array_equal(got[0].numpy(), expected[0].numpy())
    np.testing.assert_array_equal(inputs[0].numpy(), eager_inputs[0].numpy())


def training_views(x):
    y = x * 2
    return y, y[0], x.t()


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_flow_through_remade_views_and_writes_into_them(backend):
    def loss(outs):
        y, row, xt = outs
        row.mul_(3)  # an in-place write into a view of an output: y's history changes
        return (y * y).sum() + (xt * 5).sum()

    expected, eager_inputs = run(training_views, None, X, requires_grad=True)
    loss(expected).backward()
    got, inputs = run(training_views, backend, X, requires_grad=True)
    assert got[2]._base is inputs[0]
    loss(got).backward()
    np.testing.assert_allclose(inputs[0].grad.numpy(), eager_inputs[0].grad.numpy())


@pytest.mark.parametrize("backend", [None, *BACKENDS])
def test_a_saved_output_written_before_backward_raises_eagers_error(backend):
    out, _ = run(lambda x: (x * 2).exp(), backend, X, requires_grad=True)
    out[0].add_(1)  # exp's backward reads its output
    with pytest.raises(AutogradError, match="modified by an inplace operation"):
        out[0].sum().backward()


@pytest.mark.parametrize("backend", [None, *BACKENDS])
def test_a_saved_input_written_before_backward_raises_eagers_error(backend):
    w = minitorch.tensor(X.copy())
    f = (
        (lambda x: x * w)
        if backend is None
        else minitorch.compile(lambda x: x * w, backend=backend)
    )
    x = minitorch.tensor(X.copy(), requires_grad=True)
    out = f(x)
    w.add_(1)  # mul's backward reads w
    with pytest.raises(AutogradError, match="modified by an inplace operation"):
        out.sum().backward()


def unused_output(x, w):
    return (w * 2).sum(), x * 3


def unused_across_break(x, w):
    y = x * 2
    z = w * 3
    print(end="")  # y crosses the break, and the loss does not read it
    return z.sum(), y


def detached(x, w):
    a = x.detach() * 2
    return (a * w).sum()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.filterwarnings("error")  # a fallback to eager would pass for the wrong reason
@pytest.mark.parametrize("fn", [unused_output, unused_across_break, detached])
def test_grad_is_none_where_eager_leaves_it_none(fn, backend):
    grads = []
    for b in (None, backend):
        _dynamo.reset()
        outs, inputs = run(fn, b, X[0], X[1], requires_grad=True)
        outs[0].backward()
        grads.append([None if x.grad is None else x.grad.numpy() for x in inputs])
    (ex, ew), (gx, gw) = grads
    assert ex is None and gx is None
    np.testing.assert_allclose(gw, ew)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_training_graph_with_slices_compiles(backend):
    """Slices in the joint graph's common-subexpression keys (unhashable before Python 3.12)."""
    fn = minitorch.compile(lambda x: (x * 2)[1:, ::2].sum(), backend=backend, fullgraph=True)
    x = minitorch.tensor(X.copy(), requires_grad=True)
    fn(x).backward()
    expected = np.zeros_like(X)
    expected[1:, ::2] = 2
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("args, kwargs", [((1,), {}), ((1, 2, 3), {}), ((), {"x": 1, "z": 2})])
def test_a_bad_call_raises_eagers_type_error(backend, args, kwargs):
    def f(x, y):
        return x + y

    with pytest.raises(TypeError) as eager:
        f(*args, **kwargs)
    with pytest.raises(TypeError) as compiled:
        minitorch.compile(f, backend=backend)(*args, **kwargs)
    assert str(compiled.value) == str(eager.value)


def two_equal_expressions(x):
    a = x.exp()
    b = x.exp()
    print(end="")  # both cross a break; a requires grad, so the write below runs eagerly
    a.add_(1)
    return a - b


@pytest.mark.parametrize("backend", BACKENDS)
def test_equal_outputs_of_a_training_graph_stay_two_tensors(backend):
    """The joint graph's common-subexpression elimination must not merge a and b."""
    base = minitorch.tensor(X.copy(), requires_grad=True)
    expected = two_equal_expressions(base * 1)
    got = minitorch.compile(two_equal_expressions, backend=backend)(base * 1)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_view_is_still_a_view(backend):
    """x[1:] of a one-element leaf shares no bytes, but it is a view: writing it raises."""

    def zero_the_tail(x):
        x[1:].zero_()
        return x

    x = minitorch.tensor([1.5], requires_grad=True)
    with pytest.raises(AutogradError, match="a view of a leaf Variable"):
        zero_the_tail(x)
    with pytest.raises(AutogradError, match="a view of a leaf Variable"):
        minitorch.compile(zero_the_tail, backend=backend)(x)


def detached_then_written_across_a_break(x):
    t = x.detach()
    print(end="")
    t *= 2  # writes x's memory, not its history
    return x.pow(3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_detached_alias_returned_by_a_graph_is_detached(backend):
    grads = []
    for b in (None, backend):
        _dynamo.reset()
        outs, (x,) = run(detached_then_written_across_a_break, b, X[0], requires_grad=True)
        outs[0].sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


def an_unused_nan_output(x):
    t = x * 0
    nan = t / t  # 0 / 0, and nothing the loss reads comes from it
    print(end="")  # both leave the graph
    return t, nan


def a_detached_intermediate(x):
    t = x**2
    d = t.detach()
    print(end="")
    d *= 2  # t's memory, not its history: t's gradient is still 2x
    return t, d


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.filterwarnings("ignore:invalid value encountered")  # eager's own 0 / 0
@pytest.mark.parametrize("fn", [an_unused_nan_output, a_detached_intermediate])
def test_gradients_from_some_outputs_only(fn, backend):
    """Outputs the loss does not read contribute nothing (not 0 * inf = NaN), and a
    detached output has no history."""
    grads = []
    for b in (None, backend):
        _dynamo.reset()
        outs, (x,) = run(fn, b, X[0], requires_grad=True)
        assert not outs[1].requires_grad or fn is an_unused_nan_output
        outs[0].sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])
