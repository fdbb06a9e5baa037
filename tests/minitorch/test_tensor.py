"""The Tensor class: printing, leaving minitorch, strides, error messages, and broadcasting.

Property tests (hypothesis) hold broadcasting and reductions to numpy over random shapes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch
from minitorch.fake import FakeTensorMode, fake_like

# ---- repr ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, text",
    [
        (lambda: minitorch.tensor([1.0, 2.5]), "tensor([1.0000, 2.5000])"),
        (lambda: minitorch.tensor([1.0, 2.0]), "tensor([1., 2.])"),
        (lambda: minitorch.tensor([-1.0, 2.0]), "tensor([-1.,  2.])"),
        (lambda: minitorch.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
        (lambda: minitorch.tensor([1.0, 1e4]), "tensor([1.0000e+00, 1.0000e+04])"),  # > 1000x
        (lambda: minitorch.tensor([float("inf"), 1.5]), "tensor([   inf, 1.5000])"),
        (lambda: minitorch.tensor(3.5), "tensor(3.5000)"),
        (
            lambda: minitorch.tensor([[1.0, 2.0], [3.0, 4.0]]),
            "tensor([[1., 2.],\n        [3., 4.]])",
        ),
        (lambda: minitorch.tensor([1, 2, 3]), "tensor([1, 2, 3])"),
        (
            lambda: minitorch.tensor([1, 2], dtype=minitorch.int32),
            "tensor([1, 2], dtype=minitorch.int32)",
        ),
        (lambda: minitorch.tensor([True, False]), "tensor([ True, False])"),
        (
            lambda: minitorch.tensor([1.5, 2.0], dtype=minitorch.float64),
            "tensor([1.5000, 2.0000], dtype=minitorch.float64)",
        ),
        (
            lambda: minitorch.tensor([1.0, 2.0], requires_grad=True),
            "tensor([1., 2.], requires_grad=True)",
        ),
        (
            lambda: minitorch.tensor([1.0, 2.0], requires_grad=True) * 2,
            "tensor([2., 4.], grad_fn=<MulBackward0>)",
        ),
        (
            lambda: minitorch.tensor([1.0, 2.0], dtype=minitorch.float64, requires_grad=True).sum(),
            "tensor(3., dtype=minitorch.float64, grad_fn=<SumBackward0>)",
        ),
        (lambda: minitorch.ones(1001), "tensor([1., 1., 1.,  ..., 1., 1., 1.])"),  # summarized
        (
            lambda: minitorch.arange(2000).reshape(2, 1000),
            "tensor([[   0,    1,    2,  ...,  997,  998,  999],\n"
            "        [1000, 1001, 1002,  ..., 1997, 1998, 1999]])",
        ),
        (lambda: minitorch.zeros(0), "tensor([])"),
        (lambda: minitorch.zeros(0, 3), "tensor([], size=(0, 3))"),
    ],
)
def test_repr(make, text):
    assert repr(make()) == text


def test_repr_of_a_parameter_and_a_size():
    p = minitorch.nn.Parameter(minitorch.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert repr(minitorch.ones(2, 3).shape) == "minitorch.Size([2, 3])"


def test_repr_of_a_fake_tensor():
    fake = fake_like(minitorch.ones(2, 3))
    assert repr(fake) == "FakeTensor(size=(2, 3), dtype=minitorch.float32)"


# ---- leaving minitorch ---------------------------------------------------------------------


def test_item_gives_python_numbers():
    assert minitorch.tensor(2.5).item() == 2.5 and type(minitorch.tensor(2.5).item()) is float
    assert type(minitorch.tensor([7]).item()) is int
    assert minitorch.tensor([[True]]).item() is True
    with pytest.raises(minitorch.MinitorchError, match="2 elements"):
        minitorch.tensor([1.0, 2.0]).item()


def test_tolist():
    assert minitorch.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert minitorch.tensor(2.0).tolist() == 2.0


def test_numpy_shares_memory_and_refuses_requires_grad():
    t = minitorch.tensor([1.0, 2.0])
    t.numpy()[0] = 5.0
    assert t.tolist() == [5.0, 2.0]

    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(minitorch.AutogradError, match="detach"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 2.0]


def test_from_numpy_shares_memory():
    a = np.zeros(3, dtype=np.float64)
    t = minitorch.from_numpy(a)
    a[1] = 4.0
    assert t.dtype is minitorch.float64
    assert t.tolist() == [0.0, 4.0, 0.0]


# ---- shapes and strides --------------------------------------------------------------------


def test_transposed_numpy_array_keeps_its_strides():
    a = np.arange(6, dtype=np.float32).reshape(2, 3).T  # (3, 2), column-major
    t = minitorch.from_numpy(a)
    assert t.shape == (3, 2) and t.shape == minitorch.Size([3, 2])
    assert t.stride() == (1, 3) and t.stride(1) == 3
    assert not t.is_contiguous()
    assert minitorch.from_numpy(np.ascontiguousarray(a)).is_contiguous()
    # ops read it by its strides
    np.testing.assert_allclose(minitorch.sin(t).numpy(), np.sin(a))
    np.testing.assert_allclose((t + minitorch.ones(2)).numpy(), a + 1)
    np.testing.assert_array_equal(t.reshape(-1).numpy(), a.reshape(-1))


def test_contiguity_ignores_size_one_dims_and_expand_has_zero_strides():
    t = minitorch.ones(3, 1)
    assert t.stride() == (1, 1) and t.is_contiguous()
    e = t.expand(3, 4)
    assert e.stride() == (1, 0) and not e.is_contiguous()


def test_randint_draws_int64_in_the_half_open_range_and_is_seeded():
    minitorch.manual_seed(3)
    a = minitorch.randint(-2, 3, (4, 50))
    minitorch.manual_seed(3)
    b = minitorch.randint(-2, 3, (4, 50))
    assert a.dtype is minitorch.int64 and tuple(a.shape) == (4, 50)
    assert set(np.unique(a.numpy())) == {-2, -1, 0, 1, 2}  # 200 draws: every value, no other
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert minitorch.randint(5, (3,)).numpy().max() < 5  # randint(high, size)
    with pytest.raises(minitorch.MinitorchError, match=r"randint\(\): expected low < high"):
        minitorch.randint(3, 3, (2,))
    with pytest.raises(minitorch.MinitorchError, match=r"randint\(\): size must be a tuple"):
        minitorch.randint(0, 3)


def test_metadata():
    t = minitorch.zeros(2, 3, 4)
    assert (t.ndim, t.dim(), t.numel(), len(t)) == (3, 3, 24, 2)
    assert t.size() == (2, 3, 4) and t.size(-1) == 4
    assert t.shape.numel() == 24
    assert t.device == "cpu"


# ---- errors ----------------------------------------------------------------------------------


def test_shape_mismatch_names_the_op_both_shapes_and_the_line():
    with pytest.raises(minitorch.ShapeError) as info:
        minitorch.ones(2, 3) + minitorch.ones(4)
    message = str(info.value)
    assert "add" in message and "(2, 3)" in message and "(4,)" in message
    assert "test_tensor.py:" in message  # the user's line, not minitorch's
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, minitorch.MinitorchError)


def test_shape_mismatch_is_a_value_error_for_every_binary_op():
    a, b = minitorch.ones(2, 3), minitorch.ones(2)
    for fn, name in [(lambda: a * b, "mul"), (lambda: a - b, "sub"), (lambda: a / b, "div")]:
        with pytest.raises(ValueError, match=f"^{name}: .*\\(2, 3\\) and \\(2,\\)"):
            fn()


@pytest.mark.parametrize(
    "fn, pattern",
    [
        (lambda: minitorch.ones(2, 3).reshape(4, 2), r"reshape: .*\(2, 3\).*\(4, 2\)"),
        (lambda: minitorch.ones(2, 3).reshape(-1, -1), "reshape"),
        (lambda: minitorch.ones(2, 3).reshape(4, -1), "reshape"),
        (lambda: minitorch.ones(2, 3).expand(4, 3), r"expand: .*\(2, 3\).*\(4, 3\)"),
        (lambda: minitorch.ones(2, 3).expand(3), "expand"),
        (lambda: minitorch.ones(3).expand(-1, 3), "expand: -1"),
        (lambda: minitorch.ones(2, 3).sum(dim=2), "sum: dim 2 is out of range for a 2-d tensor"),
        (lambda: minitorch.ones(2, 3).mean(dim=-3), "mean: dim -3"),
    ],
)
def test_shape_errors_name_the_op(fn, pattern):
    with pytest.raises(minitorch.ShapeError, match=pattern):
        fn()


@pytest.mark.parametrize(
    "fn, pattern",
    [
        (lambda: minitorch.sin(1.0), "sin.*float"),
        (lambda: -minitorch.tensor([True]), "neg.*bool"),
        (lambda: minitorch.from_numpy(np.zeros(2, np.complex64)), "complex64"),
    ],
)
def test_dtype_errors_name_the_op_and_dtype(fn, pattern):
    with pytest.raises(minitorch.DTypeError, match=pattern) as info:
        fn()
    assert isinstance(info.value, TypeError)


def test_reading_a_fake_tensor_is_data_dependent():
    with FakeTensorMode():
        y = minitorch.sin(fake_like(minitorch.ones(2))) + 1
        z = minitorch.sum(y)
    assert y.shape == (2,)
    for read in (y.tolist, y.numpy, z.item, lambda: float(z), lambda: bool(z)):
        with pytest.raises(minitorch.DataDependentError, match=r"fake tensor of shape"):
            read()


# ---- properties ------------------------------------------------------------------------------

_FLOATS = st.floats(-100, 100, allow_nan=False, width=64)


@settings(max_examples=60, deadline=None)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4),
    op=st.sampled_from(["add", "mul"]),
    data=st.data(),
)
def test_broadcasting_matches_numpy(shapes, op, data):
    a_shape, b_shape = shapes.input_shapes
    a = data.draw(hnp.arrays(np.float64, a_shape, elements=_FLOATS))
    b = data.draw(hnp.arrays(np.float64, b_shape, elements=_FLOATS))
    out = getattr(minitorch, op)(minitorch.tensor(a), minitorch.tensor(b))
    expected = np.add(a, b) if op == "add" else np.multiply(a, b)
    assert tuple(out.shape) == expected.shape == shapes.result_shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    a_shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3),
    b_shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3),
)
def test_shapes_broadcast_exactly_when_numpy_says_so(a_shape, b_shape):
    a, b = minitorch.zeros(a_shape), minitorch.zeros(b_shape)
    try:
        expected = np.broadcast_shapes(a_shape, b_shape)
    except ValueError:
        with pytest.raises(minitorch.ShapeError):
            minitorch.add(a, b)
    else:
        assert tuple(minitorch.add(a, b).shape) == expected


@settings(max_examples=60, deadline=None)
@given(shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4), data=st.data())
def test_sum_over_random_dims_matches_numpy(shape, data):
    a = data.draw(hnp.arrays(np.float64, shape, elements=_FLOATS))
    ndim = len(shape)
    axes = data.draw(st.lists(st.integers(0, max(ndim - 1, 0)), unique=True, max_size=ndim))
    # Each axis may be written as a negative dim.
    dims = tuple(d - ndim if data.draw(st.booleans()) else d for d in axes)
    keepdim = data.draw(st.booleans())
    if not dims:
        dim = None
    elif len(dims) == 1 and data.draw(st.booleans()):
        dim = dims[0]
    else:
        dim = dims

    out = minitorch.sum(minitorch.tensor(a), dim=dim, keepdim=keepdim)
    expected = np.sum(a, axis=None if dim is None else dim, keepdims=keepdim)
    assert tuple(out.shape) == np.shape(expected)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)
