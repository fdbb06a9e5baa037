"""Advanced indexing in eager mode: `x[idx]`, `x[idx] = v`, `x[idx] += v` with integer tensors,
lists, ranges and boolean masks, against numpy (whose rules PyTorch follows wherever no int
stands next to an index tensor), and their gradients against numpy's scatter-add.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minitorch
from minitorch.errors import DataDependentError, DTypeError, IndexOutOfRangeError, ShapeError

rng = np.random.default_rng(0)
A = np.arange(3 * 4 * 5 * 6, dtype=np.float32).reshape(3, 4, 5, 6)
I = np.array([[0, 2], [1, -1]])  # (2, 2), a negative index among them
J = np.array([3, 0])


def _key_for_minitorch(key):
    """numpy arrays in a key, as minitorch tensors."""

    def convert(item):
        return minitorch.tensor(item) if isinstance(item, np.ndarray) else item

    return tuple(convert(i) for i in key) if type(key) is tuple else convert(key)


# Keys where PyTorch and numpy agree: no int next to an index array.
KEYS = [
    np.array([1, 0, 1]),  # a 1-d index on dim 0
    (slice(None), I),  # a 2-d index in the middle
    (slice(None), I, J),  # adjacent: broadcast, in place
    (I, slice(None), J),  # separated by a slice: broadcast dims first
    (Ellipsis, J),  # after ...
    (None, slice(None), J, None),  # new dims around
    (slice(0, 2), [2, 0], slice(1, None, 2)),  # a list, with strided slices
    (range(2), slice(None), [0, 0]),  # a range; repeated positions
    (A[:, :, 0, 0] > 20,),  # a 2-d mask: one dim of True positions
    (slice(None), A[0, :, :, 0] % 3 == 0),  # a mask over middle dims
    A > 50,  # a mask of the whole shape: 1-d result
    (np.array([1, 0]), Ellipsis, np.array([1, 4])),
    (slice(None), (0, 2)),  # a tuple inside the key: an index
    np.array([], dtype=np.int64),  # empty
    (np.array([0, 1], dtype=np.int32), J[:, None]),  # int32; broadcast to (2, 2)
]


@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_getitem_matches_numpy_and_copies(key):
    x = minitorch.tensor(A)
    out = x[_key_for_minitorch(key)]
    expected = A[key]
    assert tuple(out.shape) == expected.shape and out.dtype is minitorch.float32
    np.testing.assert_array_equal(out.numpy(), expected)
    assert out._base is None  # a copy, not a view: writing it leaves x alone
    out.fill_(-1.0)
    np.testing.assert_array_equal(x.numpy(), A)


@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_setitem_matches_numpy(key):
    region = A[key].shape
    for value in (
        7.0,
        rng.standard_normal(region[-1:] or ()).astype(np.float32),
        rng.standard_normal(region).astype(np.float32),
    ):
        x = minitorch.tensor(A)
        mt_value = minitorch.tensor(value) if isinstance(value, np.ndarray) else value
        x[_key_for_minitorch(key)] = mt_value
        expected = A.copy()
        expected[key] = value
        np.testing.assert_array_equal(x.numpy(), expected)
        assert x._version == 1


@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_gradients_scatter_back_to_the_indexed_positions(key):
    w = rng.standard_normal(A[key].shape).astype(np.float32)
    x = minitorch.tensor(A, requires_grad=True)
    (x[_key_for_minitorch(key)] * minitorch.tensor(w)).sum().backward()
    expected = np.zeros_like(A)
    np.add.at(expected, key, w)  # positions read twice get both gradients
    np.testing.assert_allclose(x.grad.numpy(), expected)


@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_setitem_gradients_go_to_the_value_and_the_unwritten_rest(key):
    region = A[key].shape
    v_shape = region[-1:] if region else ()  # broadcast over the region's leading dims
    w = rng.standard_normal(A.shape).astype(np.float32)
    x = minitorch.tensor(A, requires_grad=True)
    v = minitorch.tensor(rng.standard_normal(v_shape).astype(np.float32), requires_grad=True)
    y = x * 1
    y[_key_for_minitorch(key)] = v
    (y * minitorch.tensor(w)).sum().backward()
    grad_x = w.copy()
    grad_x[key] = 0
    np.testing.assert_allclose(x.grad.numpy(), grad_x)
    grad_v = w[key].reshape((-1, *v_shape)).sum(axis=0)  # PyTorch: every write's gradient
    np.testing.assert_allclose(v.grad.numpy(), grad_v, rtol=1e-5, atol=1e-5)


def test_an_int_next_to_an_index_is_a_select_as_in_pytorch():
    # PyTorch applies ints (and slices) first, then the index tensors to that view; numpy
    # counts the int as an index array too: x[:, 0, :, j] is (3, 5, 2) here, (2, 3, 5) there.
    x = minitorch.tensor(A)
    j = minitorch.tensor([1, 3])
    assert tuple(x[:, 0, :, j].shape) == (3, 5, 2)
    np.testing.assert_array_equal(x[:, 0, :, j].numpy(), A[:, 0][:, :, [1, 3]])
    assert tuple(x[:, [0], :, 0].shape) == (3, 1, 5)  # pytorch/pytorch#157676: (5, 1, 7)
    # An ellipsis that covers no dims separates nothing (pytorch/pytorch#141563).
    assert tuple(minitorch.ones(3, 4, 5)[:, (0, 1), ..., (0, 1)].shape) == (3, 2)


def test_bool_scalars_add_a_dim_that_is_kept_or_emptied():
    x = minitorch.tensor(A)
    assert tuple(x[True].shape) == (1, 3, 4, 5, 6)
    assert tuple(x[:, False].shape) == (3, 0, 4, 5, 6)
    assert tuple(x[minitorch.tensor(True), 1].shape) == (1, 4, 5, 6)


def test_duplicate_positions_last_write_wins_and_plus_equals_does_not_accumulate():
    x = minitorch.zeros(4)
    idx = minitorch.tensor([1, 1, 3])
    x[idx] = minitorch.tensor([5.0, 6.0, 7.0])
    assert x.tolist() == [0.0, 6.0, 0.0, 7.0]
    x[idx] += 1  # x[idx] = x[idx] + 1: each position is written once more, not three times
    assert x.tolist() == [0.0, 7.0, 0.0, 8.0]
    acc = minitorch.ops.index_put(minitorch.zeros(4), minitorch.ones(3), idx, accumulate=True)
    assert acc.tolist() == [0.0, 2.0, 0.0, 1.0]


def test_masked_writes_of_a_count_free_value_are_a_where():
    x = minitorch.tensor([[-1.0, 2.0], [3.0, -4.0]], requires_grad=True)
    y = x * 1
    y[y < 0] = 0  # relu
    assert y.grad_fn.name() == "WhereBackward0"
    assert y.tolist() == [[0.0, 2.0], [3.0, 0.0]]
    rows = minitorch.zeros(3, 2)
    rows[minitorch.tensor([True, False, True])] = minitorch.tensor([1.0, 2.0])
    assert rows.tolist() == [[1.0, 2.0], [0.0, 0.0], [1.0, 2.0]]
    counted = minitorch.zeros(3)  # one value per True element: the nonzero route
    counted[minitorch.tensor([True, False, True])] = minitorch.tensor([4.0, 5.0])
    assert counted.tolist() == [4.0, 0.0, 5.0]


def test_writes_convert_the_value_to_the_tensor_dtype():
    x = minitorch.zeros(3, dtype=minitorch.int64)
    x[[0, 2]] = 2.7  # truncated, as in PyTorch
    x[x == 0] = minitorch.tensor(5.5, dtype=minitorch.float64)
    assert x.tolist() == [2, 5, 2] and x.dtype is minitorch.int64


def test_out_of_range_indices_raise_an_index_error_naming_the_op_and_shapes():
    x = minitorch.zeros(2, 3)
    with pytest.raises(
        IndexOutOfRangeError,
        match=r"index: index 3 is out of bounds for "
        r"dimension 1 with size 3 \(indexing a "
        r"tensor of shape \(2, 3\)\)",
    ):
        x[:, [0, 3]]
    with pytest.raises(IndexError, match="index -3 is out of bounds for dimension 0 with size 2"):
        x[[-3]] = 1.0
    assert x.tolist() == [[0.0] * 3] * 2 and x._version == 0


@pytest.mark.parametrize(
    "key, error, message",
    [
        (
            (minitorch.tensor([0, 1]), minitorch.tensor([0, 1, 2])),
            ShapeError,
            r"indexing tensors could not be broadcast together with shapes \[2\], \[3\]",
        ),
        (minitorch.tensor([0.0]), DTypeError, "must be int64 or int32 tensors, got float32"),
        (
            minitorch.tensor([True, False]),
            IndexOutOfRangeError,
            r"the shape of the mask \[2\] at index 0 does not match .* \[3, 4\] at index 0",
        ),
        (([0], [0], [0]), ShapeError, "too many indices for tensor of dimension 2"),
    ],
)
def test_bad_advanced_keys_name_the_problem(key, error, message):
    x = minitorch.zeros(3, 4)
    with pytest.raises(error, match=message):
        x[key]
    with pytest.raises(error, match=message):
        x[key] = 1.0
    assert x._version == 0


def test_a_value_that_does_not_fit_the_indexed_shape_is_refused():
    x = minitorch.zeros(3, 4)
    with pytest.raises(
        ShapeError,
        match=r"value tensor of shape \(3,\) cannot be broadcast "
        r"to indexing result of shape \(2, 4\)",
    ):
        x[[0, 1]] = minitorch.ones(3)
    with pytest.raises(ShapeError, match=r"value tensor of shape \(3,\) cannot be broadcast"):
        x[minitorch.tensor([True, False, True])] = minitorch.ones(3)
    assert x._version == 0


def test_a_leaf_that_requires_grad_cannot_be_written():
    x = minitorch.zeros(3, requires_grad=True)
    with pytest.raises(minitorch.AutogradError, match="leaf Variable that requires grad"):
        x[[0]] = 1.0


def test_a_mask_read_on_fake_tensors_is_data_dependent():
    from minitorch.fake import FakeTensorMode, fake_like

    x = fake_like(minitorch.zeros(3))
    with FakeTensorMode():
        with pytest.raises(DataDependentError, match="depends on how many elements are True"):
            x[x > 0]
        y = x.clone()
        assert tuple(minitorch.functional.indexing.setitem(y, y > 0, 0.0).shape) == (3,)


def test_index_put_writes_or_accumulates_as_pytorch_documents():
    rows, cols = minitorch.tensor([1, 1, 0]), minitorch.tensor([0, 0, 2])
    values = minitorch.tensor([1.0, 2.0, 3.0])
    expected = np.zeros((2, 3), dtype=np.float32)
    np.add.at(expected, ([1, 1, 0], [0, 0, 2]), [1.0, 2.0, 3.0])
    x = minitorch.zeros(2, 3)
    out = minitorch.index_put(x, (rows, cols), values, accumulate=True)
    np.testing.assert_array_equal(out.numpy(), expected)
    assert x._version == 0 and x.tolist() == [[0.0] * 3] * 2  # out of place
    x.index_put_((rows, cols), values, accumulate=True)
    np.testing.assert_array_equal(x.numpy(), expected)
    assert x._version == 1
    masked = minitorch.ones(3).index_put(
        (minitorch.tensor([True, False, True]),), minitorch.tensor(5.0)
    )
    assert masked.tolist() == [5.0, 1.0, 5.0]


def test_index_put_accumulate_gradients_reach_every_value():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    v = minitorch.tensor([3.0, 4.0, 5.0], requires_grad=True)
    out = minitorch.index_put(x * 1, (minitorch.tensor([0, 0, 1]),), v, accumulate=True)
    (out * minitorch.tensor([10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [10.0, 100.0]  # accumulating keeps x's part everywhere
    assert v.grad.tolist() == [10.0, 10.0, 100.0]


@st.composite
def _advanced_keys(draw, shape: tuple[int, ...]):
    """A random key with index arrays (and maybe one mask) among slices, None and `...`, no
    ints: where no int stands beside an index array, PyTorch's rules are numpy's."""
    items: list = []
    dim = 0
    while dim < len(shape) and draw(st.booleans()):
        n = shape[dim]
        kind = draw(st.sampled_from(["index", "index", "slice", "mask"]))
        if kind == "index":
            size = draw(st.integers(0, 3))
            items.append(
                np.array(
                    draw(st.lists(st.integers(-n, n - 1), min_size=size, max_size=size)),
                    dtype=np.int64,
                )
            )
        elif kind == "mask" and not any(
            i.dtype == bool for i in items if isinstance(i, np.ndarray)
        ):
            items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        else:
            items.append(
                slice(
                    draw(st.none() | st.integers(0, n)), None, draw(st.none() | st.integers(1, 2))
                )
            )
        dim += 1
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    if draw(st.booleans()):
        # Last: numpy counts an ellipsis that covers no dims as separating the index arrays
        # around it, PyTorch does not (pytorch/pytorch#141563, tested above).
        items.append(Ellipsis)
    arrays = [i for i in items if isinstance(i, np.ndarray)]
    if not arrays:
        items.append(np.array([0]))  # at least one advanced item, on the next dim
        if dim >= len(shape):
            return None
    if sum(a.dtype != bool for a in arrays) > 1:  # index arrays must broadcast together
        sizes = {len(a) for a in arrays if a.dtype != bool}
        if len(sizes - {1}) > 1:
            return None
    return tuple(items)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
def test_random_advanced_keys_read_and_write_as_numpy(data, shape):
    key = data.draw(_advanced_keys(shape))
    assume(key is not None)
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = minitorch.tensor(a)
    try:
        expected = a[key]
    except IndexError:  # masks and indices that do not broadcast together
        with pytest.raises(minitorch.MinitorchError):
            x[_key_for_minitorch(key)]
        return
    np.testing.assert_array_equal(x[_key_for_minitorch(key)].numpy(), expected)
    x[_key_for_minitorch(key)] = -1.0
    expected = a.copy()
    expected[key] = -1.0
    np.testing.assert_array_equal(x.numpy(), expected)
