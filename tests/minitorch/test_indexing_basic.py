"""Basic indexing: `x[key]` and `x[key] = value` against numpy, and their errors.

Keys are ints (negative from the end), slices (steps > 0, bounds clamped), None (a new dim) and
`...`, alone or in a tuple; this is PyTorch's basic indexing, where the result is a view.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from minitorch.errors import DTypeError, MinitorchError, ShapeError
from minitorch.ops.views_meta import index_shape, normalize_index


@st.composite
def _basic_keys(draw, shape: tuple[int, ...]):
    """A random basic key for `shape`: ints, slices, None and at most one `...`."""

    def item(n: int):
        kind = draw(st.sampled_from(["int", "slice", "full"]))
        if kind == "int":
            return draw(st.integers(-n, n - 1))
        if kind == "full":
            return slice(None)
        bound = st.none() | st.integers(-n - 2, n + 2)
        return slice(draw(bound), draw(bound), draw(st.none() | st.integers(1, 3)))

    first = draw(st.integers(0, len(shape)))  # how many leading dims the key indexes
    items = [item(n) for n in shape[:first]]
    if draw(st.booleans()):  # `...`, then keys for some of the trailing dims
        last = draw(st.integers(0, len(shape) - first))
        items += [Ellipsis] + [item(n) for n in shape[len(shape) - last :]]
    for _ in range(draw(st.integers(0, 2))):  # new dims anywhere
        items.insert(draw(st.integers(0, len(items))), None)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]  # a bare key: x[2], x[1:], x[None]
    return tuple(items)


_shapes = st.lists(st.integers(1, 5), min_size=0, max_size=4).map(tuple)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), shape=_shapes)
def test_getitem_matches_numpy_and_is_a_view(data, shape):
    key = data.draw(_basic_keys(shape))
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = minitorch.tensor(a)
    out = x[key]
    np.testing.assert_array_equal(out.numpy(), a[key])
    assert out.dtype is minitorch.float32 and out._base is x

    canonical = normalize_index(shape, key)
    assert normalize_index(shape, canonical) == canonical  # the canonical form is a fixed point
    assert index_shape(shape, canonical) == a[key].shape
    if out.numel():
        out.fill_(-1)  # a write through the view lands in the same places as numpy's
        a[key] = -1
        np.testing.assert_array_equal(x.numpy(), a)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), shape=_shapes)
def test_setitem_matches_numpy(data, shape):
    key = data.draw(_basic_keys(shape))
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    region = a[key].shape
    # a value that broadcasts to the region: a number, or a tensor with some dims at 1
    if data.draw(st.booleans()):
        value, np_value = 7, 7
    else:
        value_shape = tuple(n if data.draw(st.booleans()) else 1 for n in region)
        np_value = np.full(value_shape, 7, dtype=np.int64) - np.arange(
            int(np.prod(value_shape)), dtype=np.int64
        ).reshape(value_shape)
        value = minitorch.tensor(np_value)
    x = minitorch.tensor(a)
    x[key] = value
    a[key] = np_value
    np.testing.assert_array_equal(x.numpy(), a)
    assert x._version == 1


def test_examples_from_pytorch():
    x = minitorch.tensor([[1, 2, 3], [4, 5, 6]])
    assert x[1].tolist() == [4, 5, 6]
    assert x[-1, -1].item() == 6 and x[-1, -1].shape == ()
    assert x[:, 1].tolist() == [2, 5]
    assert x[..., ::2].tolist() == [[1, 3], [4, 6]]
    assert x[None].shape == (1, 2, 3) and x[:, None, :].shape == (2, 1, 3)
    assert x[1:100].tolist() == [[4, 5, 6]]  # slice bounds are clamped
    assert x[2:].shape == (0, 3)
    assert x[np.int64(0), minitorch.tensor(2)].item() == 3  # numpy ints, 0-d int tensors
    assert x[...].shape == (2, 3)


def test_iterating_gives_the_rows():
    x = minitorch.tensor([[1.0, 2.0], [3.0, 4.0]])
    rows = list(x)
    assert [r.tolist() for r in rows] == [[1.0, 2.0], [3.0, 4.0]]
    assert all(r._base is x for r in rows)
    a, b = minitorch.tensor([5, 6])
    assert (a.item(), b.item()) == (5, 6)
    with pytest.raises(MinitorchError, match="iteration over a 0-d tensor"):
        iter(minitorch.tensor(1.0))


@pytest.mark.parametrize(
    "key, error, message",
    [
        (3, ShapeError, "index 3 is out of bounds for dimension 0 with size 2"),
        ((0, -4), ShapeError, "index -4 is out of bounds for dimension 1 with size 3"),
        ((0, 0, 0), ShapeError, r"too many indices for tensor of dimension 2 \(got 3\)"),
        ((..., 0, ...), ShapeError, "only have a single ellipsis"),
        (slice(None, None, -1), ShapeError, "slice step must be positive, got -1"),
        (slice(None, None, 0), ShapeError, "slice step must be positive, got 0"),
        (1.0, DTypeError, "only integers, slices .* got float"),
        (minitorch.tensor(1.0), DTypeError, "None and long, int or bool tensors are valid"),
        ((slice(0, 1.5),), DTypeError, "got float"),
    ],
)
def test_bad_keys_name_the_problem(key, error, message):
    x = minitorch.zeros(2, 3)
    with pytest.raises(error, match=message):
        x[key]
    with pytest.raises(error, match=message):
        x[key] = 1.0
    assert x.tolist() == [[0.0] * 3] * 2 and x._version == 0


def test_setitem_errors_leave_the_tensor_unchanged():
    x = minitorch.zeros(3, 2)
    with pytest.raises(
        ShapeError,
        match=r"value tensor of shape \(3,\) cannot be broadcast to "
        r"indexing result of shape \(2,\)",
    ):
        x[0] = minitorch.ones(3)
    with pytest.raises(ShapeError, match=r"shape \(2, 2\) cannot be broadcast"):
        x[1:2] = minitorch.ones(2, 2)
    assert x.tolist() == [[0.0, 0.0]] * 3 and x._version == 0


def test_setitem_converts_the_value_like_copy_():
    x = minitorch.zeros(3, dtype=minitorch.int64)
    x[0] = 2.7  # PyTorch truncates into an integer tensor
    x[1:] = minitorch.tensor([True, True])
    assert x.tolist() == [2, 1, 1] and x.dtype is minitorch.int64
    y = minitorch.zeros(2, 2)
    y[:, 0] = minitorch.tensor([1.5, 2.5], dtype=minitorch.float64)
    assert y.dtype is minitorch.float32 and y.tolist() == [[1.5, 0.0], [2.5, 0.0]]


def test_indexing_gradients_accumulate_at_the_indexed_positions():
    x = minitorch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x[0] * 2 + x[:, 1:].sum() + x[1, ::2][None].sum()
    y.sum().backward()
    # row 0: 2 from x[0] * 2; x[:, 1:] and x[1, ::2] are summed into each of y's 3 elements
    assert x.grad.tolist() == [[2.0, 5.0, 5.0], [3.0, 3.0, 6.0]]


def test_setitem_gradients_go_to_the_value_and_the_rest_of_the_base():
    x = minitorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = minitorch.tensor([10.0], dtype=minitorch.float64, requires_grad=True)
    y = x * 2
    y[1:] = v  # broadcast over two elements; float64 into float32
    assert y.grad_fn.name() == "IndexScatterBackward0"
    (y * minitorch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 0.0]
    assert v.grad.tolist() == [5.0] and v.grad.dtype is minitorch.float64


def test_slices_keep_a_canonical_form_in_graphs():
    from tracer.aot import make_fx

    gm = make_fx(lambda x: x[-1, None, ::2])(minitorch.zeros(4, 5))
    assert "index(arg0_1, (3, None, slice(0, 5, 2)))" in gm.code


def test_an_out_of_range_index_is_an_index_error_as_in_pytorch():
    x = minitorch.zeros(2, 3)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 1 with size 3"):
        x[0, 5]
    with pytest.raises(minitorch.ShapeError):  # still a minitorch error about shapes
        x[2]
