"""The autograd engine's contract: .grad accumulation, grad mode, freed graphs, autograd.grad.

Values are checked against derivatives worked out by hand (d/dx x**2 = 2x, ...) in numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import AutogradError, autograd


def leaf(values, dtype=minitorch.float64) -> minitorch.Tensor:
    return minitorch.tensor(values, dtype=dtype, requires_grad=True)


# ---- .grad --------------------------------------------------------------------------------


def test_backward_fills_grad_of_leaves():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    assert x.grad.dtype is minitorch.float64
    assert x.grad.grad_fn is None and not x.grad.requires_grad


def test_backward_accumulates_across_calls():
    x = leaf([1.0, 2.0])
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0 + 2.0, 3.0 + 4.0])


def test_zeroed_grad_starts_over():
    x = leaf([1.0, 2.0])
    (x * 3.0).sum().backward()
    x.grad = None
    (x * 5.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("layout", ["row_major", "transposed"])
def test_a_leafs_grad_is_laid_out_as_the_leaf_whatever_the_backward_made(compiled, layout):
    """PyTorch's gradient layout contract: `x @ w.t()`'s backward makes w's gradient transposed
    (eagerly) or row-major (compiled); .grad has w's strides either way, and the same values,
    accumulated too."""
    rng = np.random.default_rng(0)
    x = minitorch.tensor(rng.standard_normal((2, 4)))
    values = rng.standard_normal((3, 4))
    w = (
        leaf(values)
        if layout == "row_major"
        else minitorch.tensor(values.T.copy()).t().detach().requires_grad_()
    )

    def loss(x, w):
        return (x @ w.t()).sin().sum()

    step = minitorch.compile(loss) if compiled else loss
    for calls in (1, 2):  # the second accumulates into the first
        step(x, w).backward()
        assert w.grad.stride() == w.stride()
        expected = calls * (np.cos(x.numpy() @ values.T).T @ x.numpy())
        np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_a_leaf_without_a_dense_layout_gets_a_row_major_grad(compiled):
    """A slice with gaps, or an expanded leaf, has no layout of its own: .grad is row-major
    (PyTorch's contract), and writable (sum's backward of an expanded leaf is a read-only
    broadcast)."""
    base = minitorch.tensor(np.arange(24.0).reshape(4, 6))
    leaves = [
        base[:, ::2].detach().requires_grad_(),  # strides (6, 2): gaps
        minitorch.tensor([1.0, 2.0]).expand(3, 2).detach().requires_grad_(),
    ]
    for w in leaves:

        def loss(w):
            return (w.t() * 2).sum() + w.sum()

        (minitorch.compile(loss) if compiled else loss)(w).backward()
        assert w.grad.stride() == (w.shape[1], 1)
        w.grad.mul_(2)  # writable
        np.testing.assert_array_equal(w.grad.numpy(), np.full(w.shape, 6.0))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_a_leafs_grad_shares_memory_with_nothing(compiled):
    """The gradient a backward delivers may be another leaf's too (a + b) or the user's
    (y.backward(g) through an add): .grad copies it, so a write into one .grad changes no
    other tensor; and a 0-d leaf's grad from sum's backward is writable."""
    a, b = leaf([1.0, 1.0, 1.0]), leaf([1.0, 1.0, 1.0])
    c = minitorch.tensor([1.0, 2.0, 3.0])

    def weighted(a, b):
        return ((a + b) * c).sum()

    (minitorch.compile(weighted) if compiled else weighted)(a, b).backward()
    a.grad.mul_(0.5)
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0, 3.0])

    x, g = leaf(np.zeros((2, 3))), minitorch.ones(2, 3, dtype=minitorch.float64)
    (minitorch.compile(lambda x: x + 0) if compiled else (lambda x: x + 0))(x).backward(g)
    g.mul_(5)
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))

    p = leaf(1.0)
    (minitorch.compile(lambda p: p.sum()) if compiled else (lambda p: p.sum()))(p).backward()
    p.grad.zero_()  # was a read-only broadcast: ValueError
    assert p.grad.item() == 0.0


def test_non_leaf_grad_is_none():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    y.sum().backward()
    assert not y.is_leaf and x.is_leaf
    assert y.grad is None
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_a_value_used_twice_gets_both_gradients():
    # f = sum(s*2 + s*3) with s = sin(x): df/dx = 5 cos(x), through a diamond in the graph
    values = np.array([0.1, 0.7, -1.2])
    x = leaf(values)
    s = minitorch.sin(x)
    (s * 2.0 + s * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 5 * np.cos(values))


def test_inputs_that_do_not_require_grad_get_none():
    x = leaf([1.0, 2.0])
    c = minitorch.tensor([3.0, 4.0], dtype=minitorch.float64)
    (x * c).sum().backward()
    assert c.grad is None
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


@pytest.mark.parametrize(
    "x_shape, y_shape",
    [
        ((3, 1), (4,)),
        ((4,), (2, 3, 4)),
        ((1, 4), (3, 1)),
        ((), (2, 3)),
        ((2, 1, 3), (1, 5, 1)),
    ],
)
def test_broadcast_gradients_are_summed_to_the_input_shape(x_shape, y_shape):
    rng = np.random.default_rng(0)
    xv, yv = rng.standard_normal(x_shape), rng.standard_normal(y_shape)
    x, y = leaf(xv), leaf(yv)
    (x * y).sum().backward()
    # d sum(x*y)/dx = y summed over the dims along which x was broadcast, and vice versa
    out_shape = np.broadcast_shapes(x_shape, y_shape)
    expected_x = _sum_to(np.broadcast_to(yv, out_shape), x_shape)
    expected_y = _sum_to(np.broadcast_to(xv, out_shape), y_shape)
    assert tuple(x.grad.shape) == x_shape and tuple(y.grad.shape) == y_shape
    np.testing.assert_allclose(x.grad.numpy(), expected_x)
    np.testing.assert_allclose(y.grad.numpy(), expected_y)


def _sum_to(a: np.ndarray, shape: tuple) -> np.ndarray:
    lead = a.ndim - len(shape)
    a = a.sum(axis=tuple(range(lead)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1)
    return a.sum(axis=stretched, keepdims=True).reshape(shape)


# ---- errors --------------------------------------------------------------------------------


def test_second_backward_through_a_freed_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(AutogradError, match="second time"):
        y.backward()


def test_a_shared_part_of_a_freed_graph_raises_too():
    x = leaf([1.0, 2.0])
    z = minitorch.exp(x)
    z.sum().backward()
    with pytest.raises(AutogradError, match="retain_graph=True"):
        (z * 3.0).sum().backward()


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])


def test_backward_of_a_non_scalar_needs_a_gradient():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    with pytest.raises(AutogradError, match="scalar outputs"):
        y.backward()
    with pytest.raises(AutogradError, match="scalar outputs"):
        autograd.grad(y, x)
    y.backward(minitorch.tensor([1.0, 10.0], dtype=minitorch.float64))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0])


def test_a_gradient_of_the_wrong_shape_raises():
    x = leaf([1.0, 2.0, 3.0])
    y = x + 1.0  # add's derivative would pass a (1,) gradient on unchanged
    with pytest.raises(AutogradError, match=r"shape \(1,\).*shape \(3,\)"):
        y.backward(minitorch.tensor([1.0], dtype=minitorch.float64))
    with pytest.raises(AutogradError, match="shape"):
        autograd.grad(y, x, grad_outputs=minitorch.ones(3, 1, dtype=minitorch.float64))
    assert x.grad is None


def test_backward_of_a_tensor_without_grad_raises():
    with pytest.raises(AutogradError, match="does not require grad"):
        minitorch.ones(3).sum().backward()


def test_only_float_tensors_can_require_grad():
    with pytest.raises(minitorch.DTypeError, match="int64"):
        minitorch.tensor([1, 2], requires_grad=True)


def test_autograd_errors_are_runtime_errors():
    assert issubclass(AutogradError, RuntimeError)
    assert issubclass(AutogradError, minitorch.MinitorchError)


# ---- autograd.grad -------------------------------------------------------------------------


def test_grad_returns_gradients_without_touching_dot_grad():
    x, w = leaf([1.0, 2.0]), leaf([3.0, -1.0])
    (gx,) = autograd.grad((x * w).sum(), x)
    np.testing.assert_allclose(gx.numpy(), [3.0, -1.0])
    assert x.grad is None and w.grad is None


def test_grad_of_several_inputs_and_outputs():
    x, y = leaf([1.0, 2.0]), leaf([0.5, 0.25])
    a, b = (x * y).sum(), (x * x).sum()
    gx, gy = autograd.grad([a, b], [x, y])
    np.testing.assert_allclose(gx.numpy(), [0.5 + 2.0, 0.25 + 4.0])
    np.testing.assert_allclose(gy.numpy(), [1.0, 2.0])


def test_grad_with_respect_to_an_intermediate():
    x = leaf([1.0, 2.0])
    h = x * 3.0
    (gh,) = autograd.grad((h * h).sum(), h)
    np.testing.assert_allclose(gh.numpy(), [6.0, 12.0])  # 2h


def test_grad_refuses_an_unused_input_unless_allowed():
    x, unused = leaf([1.0]), leaf([2.0])
    with pytest.raises(AutogradError, match="allow_unused"):
        autograd.grad((x * 2.0).sum(), [x, unused], retain_graph=True)
    gx, gu = autograd.grad((x * 2.0).sum(), [x, unused], allow_unused=True)
    assert gu is None
    np.testing.assert_allclose(gx.numpy(), [2.0])


def test_create_graph_gives_second_derivatives():
    values = np.array([0.5, -1.5, 2.0])
    x = leaf(values)
    (g,) = autograd.grad((x**3).sum(), x, create_graph=True)  # 3x^2
    assert g.requires_grad
    (gg,) = autograd.grad(g.sum(), x)  # 6x
    np.testing.assert_allclose(g.detach().numpy(), 3 * values**2)
    np.testing.assert_allclose(gg.numpy(), 6 * values)


# ---- grad mode -----------------------------------------------------------------------------


def test_no_grad_context_records_nothing_and_restores():
    x = leaf([1.0])
    with minitorch.no_grad():
        assert not minitorch.is_grad_enabled()
        y = x * 2.0
    assert minitorch.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_no_grad_restores_after_an_exception():
    with pytest.raises(KeyError), minitorch.no_grad():
        raise KeyError("boom")
    assert minitorch.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = leaf([1.0])
    with minitorch.no_grad():
        with minitorch.enable_grad():
            y = x * 2.0
        z = x * 2.0
    assert y.requires_grad and y.grad_fn is not None
    assert not z.requires_grad


def test_no_grad_as_decorator_with_and_without_parentheses():
    x = leaf([1.0])

    @minitorch.no_grad()
    def double(t):
        """Docstring kept."""
        return t * 2.0

    @minitorch.no_grad
    def triple(t):
        return t * 3.0

    assert not double(x).requires_grad and not triple(x).requires_grad
    assert double.__name__ == "double" and double.__doc__ == "Docstring kept."
    assert triple.__name__ == "triple"
    assert minitorch.is_grad_enabled()


def test_enable_grad_as_decorator():
    x = leaf([1.0])

    @minitorch.enable_grad()
    def double(t):
        return t * 2.0

    with minitorch.no_grad():
        y = double(x)
        assert not minitorch.is_grad_enabled()
    assert y.requires_grad


def test_set_grad_enabled_as_function_and_context():
    try:
        minitorch.set_grad_enabled(False)
        assert not minitorch.is_grad_enabled()
        with minitorch.set_grad_enabled(True):
            assert minitorch.is_grad_enabled()
        assert not minitorch.is_grad_enabled()
    finally:
        minitorch.set_grad_enabled(True)


# ---- grad_fn ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn, name",
    [
        (lambda x: x + 1.0, "AddBackward0"),
        (lambda x: 1.0 - x, "SubBackward0"),
        (lambda x: x * x, "MulBackward0"),
        (lambda x: x / 2.0, "DivBackward0"),
        (lambda x: -x, "NegBackward0"),
        (lambda x: x**2, "PowBackward0"),
        (lambda x: x.sin(), "SinBackward0"),
        (lambda x: x.cos(), "CosBackward0"),
        (lambda x: x.exp(), "ExpBackward0"),
        (lambda x: x.log(), "LogBackward0"),
        (lambda x: x.sum(), "SumBackward0"),
        (lambda x: x.reshape(2, 1), "ReshapeBackward0"),
        (lambda x: x.expand(3, 2), "ExpandBackward0"),
    ],
)
def test_grad_fn_names(fn, name):
    x = leaf([1.0, 2.0])
    y = fn(x)
    assert y.grad_fn.name() == name
    assert repr(y.grad_fn) == f"<{name}>"
    assert not y.is_leaf


def test_leaves_have_no_grad_fn():
    x = leaf([1.0])
    assert x.grad_fn is None and x.is_leaf
    assert minitorch.ones(2).grad_fn is None
