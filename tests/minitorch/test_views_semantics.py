"""Views beyond the op-table samples: shared memory and version counters, PyTorch's signatures,
errors, `contiguous`/`clone`, joining, and property tests of round trips and view rules.

The op-table suite (test_op_table.py) checks values, shapes and gradients of every sample.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from minitorch.errors import DTypeError, MinitorchError, ShapeError
from minitorch.ops.views_meta import view_is_possible


def arange(*shape, dtype=minitorch.float32):
    n = int(np.prod(shape))
    return minitorch.tensor(np.arange(n).reshape(shape), dtype=dtype)


# ---- views share memory and a version counter ----------------------------------------------

VIEWS = {  # name: (the view in minitorch, the same view in numpy)
    "view": (lambda x: x.view(6, 4), lambda a: a.reshape(6, 4)),
    "reshape": (lambda x: x.reshape(4, -1), lambda a: a.reshape(4, -1)),
    "permute": (lambda x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    "transpose": (lambda x: x.transpose(0, -1), lambda a: a.swapaxes(0, -1)),
    "T": (lambda x: x.T, lambda a: a.transpose(2, 1, 0)),
    "mT": (lambda x: x.mT, lambda a: a.swapaxes(-1, -2)),
    "squeeze": (lambda x: x.unsqueeze(1).squeeze(1), lambda a: a),
    "unsqueeze": (lambda x: minitorch.unsqueeze(x, -1), lambda a: a[..., None]),
    "flatten": (lambda x: minitorch.flatten(x, 1), lambda a: a.reshape(2, 12)),
    "index": (lambda x: x[1, :, ::2], lambda a: a[1, :, ::2]),
    "index_none": (lambda x: x[None, ..., 1:], lambda a: a[None, ..., 1:]),
    "view_of_view": (
        lambda x: x.transpose(0, 1)[1:].permute(2, 1, 0),
        lambda a: a.swapaxes(0, 1)[1:].transpose(2, 1, 0),
    ),
    "contiguous": (lambda x: x.contiguous(), lambda a: a),
}


@pytest.mark.parametrize("name", VIEWS)
def test_a_view_shares_memory_with_its_base(name):
    make, make_np = VIEWS[name]
    x = arange(2, 3, 4)
    v = make(x)
    expected = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(v.numpy(), make_np(expected))
    assert v._base is (None if v is x else x)  # the root, even for a view of a view

    v.add_(100)  # a write through the view ...
    make_np(expected)[...] += 100
    np.testing.assert_array_equal(x.numpy(), expected)  # ... is seen by the base
    assert x._version == v._version == 1  # one counter for both

    x.mul_(2)  # and a write through the base is seen by the view
    np.testing.assert_array_equal(v.numpy(), make_np(expected * 2))
    assert v._version == 2


def test_expand_is_a_view_that_cannot_be_written():
    x = minitorch.zeros(3, 1)
    e = x.expand(3, 4)
    x.add_(1)
    assert e.tolist() == [[1.0] * 4] * 3 and e._base is x
    with pytest.raises(MinitorchError, match="single memory location"):
        e.add_(1)
    assert x.tolist() == [[1.0]] * 3


def test_reshape_copies_when_the_strides_do_not_allow_a_view():
    x = arange(2, 3)
    flat = x.T.reshape(6)  # x.T is not row-major: a copy
    assert flat.tolist() == [0, 3, 1, 4, 2, 5] and flat._base is None
    flat.add_(1)
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]] and x._version == 0
    with pytest.raises(ShapeError, match=r"Use \.reshape\(\.\.\.\) instead"):
        x.T.view(6)
    assert x.T.view(3, 1, 2).shape == (3, 1, 2)  # size-1 dims fit any layout


def test_detach_shares_memory_and_version():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d._base is None
    d.add_(1)
    assert x.detach().tolist() == [2.0, 3.0] and x._version == 1


def test_data_ptr_of_views_points_into_the_base():
    x = arange(4, 4)
    row = x[2]
    assert row.data_ptr() == x.data_ptr() + 2 * 4 * x.dtype.itemsize
    assert x.clone().data_ptr() != x.data_ptr()


def test_contiguous_copies_only_when_needed():
    x = arange(2, 3)
    assert x.contiguous() is x
    t = x.T
    assert not t.is_contiguous()
    c = t.contiguous()
    assert c.is_contiguous() and c.tolist() == t.tolist() and c._base is None
    assert c.stride() == (2, 1)


def test_clone_is_new_memory_with_a_gradient():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.grad_fn is not None and c._base is None
    (c * c).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    assert minitorch.clone(x).tolist() == [1.0, 2.0]


def test_view_gradients_and_grad_fn_names():
    x = minitorch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert x.T.grad_fn.name() == "PermuteBackward0"
    assert x[0].grad_fn.name() == "IndexBackward0"
    y = x.T[1:] * minitorch.tensor([[1.0, 10.0]])  # (2, 2) from rows 1, 2 of x.T
    y.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 1.0], [0.0, 10.0, 10.0]]


# ---- signatures ---------------------------------------------------------------------------


def test_shape_arguments_as_varargs_or_tuples():
    x = arange(2, 3, 4)
    assert x.view(6, 4).shape == x.view((6, 4)).shape == x.view([6, 4]).shape == (6, 4)
    assert x.permute(2, 0, 1).shape == x.permute((2, 0, 1)).shape == (4, 2, 3)
    assert minitorch.permute(x, (1, 0, 2)).shape == (3, 2, 4)
    assert x.view(minitorch.Size([4, 6])).shape == (4, 6)
    assert x.view_as(minitorch.zeros(12, 2)).shape == (12, 2)
    assert x.reshape_as(minitorch.zeros(24)).shape == (24,)
    assert minitorch.zeros(3, 1).expand_as(minitorch.zeros(2, 3, 5)).shape == (2, 3, 5)
    assert x.flatten().shape == (24,) and x.flatten(0, 1).shape == (6, 4)
    assert x.flatten(start_dim=-2).shape == (2, 12)
    assert x.squeeze().shape == (2, 3, 4)
    assert minitorch.zeros(1, 2, 1).squeeze((0, 2)).shape == (2,)
    assert minitorch.zeros(()).flatten().shape == (1,)


def test_transposes():
    x = arange(2, 3, 4)
    assert x.T.shape == (4, 3, 2)
    assert x.mT.shape == (2, 4, 3) and x.mT.tolist() == np.swapaxes(x.numpy(), -1, -2).tolist()
    m = arange(2, 3)
    assert m.t().tolist() == m.numpy().T.tolist() and minitorch.t(m).shape == (3, 2)
    assert arange(3).t().shape == (3,) and arange(3).T.shape == (3,)
    with pytest.raises(ShapeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
        x.t()
    with pytest.raises(ShapeError, match="mT is only supported on matrices"):
        _ = arange(3).mT


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: x.view(5, 5), r"cannot reshape \(2, 3, 4\)"),
        (lambda x: x.view(-1, -1), r"cannot reshape"),
        (lambda x: x.view(minitorch.float64), "view\\(dtype\\) is not supported"),
        (lambda x: x.permute(0, 1), r"number of dims 2 in \(0, 1\) does not match"),
        (lambda x: x.permute(0, 1, 1), "repeated dim"),
        (lambda x: x.permute(0, 1, 3), r"range of \[-3, 2\], but got 3"),
        (lambda x: x.transpose(0, 3), r"transpose: dimension out of range"),
        (lambda x: x.unsqueeze(4), r"unsqueeze: dimension out of range .*\[-4, 3\]"),
        (lambda x: x.squeeze(3), "squeeze: dim 3 is out of range for a 3-d tensor"),
        (lambda x: x.flatten(2, 1), "start_dim 2 cannot come after end_dim 1"),
        (lambda x: x.expand(3, 3, 4), r"expand: cannot expand \(2, 3, 4\)"),
    ],
)
def test_view_errors_name_the_op_and_shapes(call, message):
    x = arange(2, 3, 4)
    with pytest.raises(MinitorchError, match=message):
        call(x)


def test_view_functions_refuse_non_tensors():
    with pytest.raises(DTypeError, match="reshape\\(\\): expected a Tensor, got list"):
        minitorch.reshape([1, 2], (2,))


# ---- cat and stack --------------------------------------------------------------------------


def test_cat_and_stack():
    a, b = arange(2, 3), arange(1, 3, dtype=minitorch.int64)
    c = minitorch.cat([a, b])
    assert c.shape == (3, 3) and c.dtype is minitorch.float32
    assert c.tolist() == [[0, 1, 2], [3, 4, 5], [0, 1, 2]]
    assert minitorch.concat((a, a), dim=-1).shape == (2, 6)
    assert minitorch.cat([minitorch.tensor([]), a]).shape == (2, 3)  # 1-d empties are skipped
    s = minitorch.stack([a, a * 2], dim=1)
    assert s.shape == (2, 2, 3) and s[:, 1].tolist() == (a * 2).tolist()
    assert minitorch.stack((a, a), -1).shape == (2, 3, 2)
    assert c._base is None and s._base is None  # new memory


def test_cat_gradients_go_back_in_each_input_dtype():
    a = minitorch.tensor([1.0, 2.0], requires_grad=True)
    b = minitorch.tensor([3.0], dtype=minitorch.float64, requires_grad=True)
    out = minitorch.cat([a, b])
    assert out.dtype is minitorch.float64
    (out * minitorch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert a.grad.tolist() == [1.0, 2.0] and a.grad.dtype is minitorch.float32
    assert b.grad.tolist() == [3.0] and b.grad.dtype is minitorch.float64


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: minitorch.cat([]), ShapeError, "expected a non-empty list"),
        (lambda: minitorch.cat(arange(2, 3)), DTypeError, "must be a tuple or list of Tensors"),
        (lambda: minitorch.cat([arange(2), 1.0]), DTypeError, "element 1 of 'tensors'"),
        (
            lambda: minitorch.cat([arange(2, 3), arange(2, 4)]),
            ShapeError,
            r"must match except in dimension 0. Expected size 3 but got size 4 for tensor number 1",
        ),
        (
            lambda: minitorch.cat([arange(2, 3), arange(6)]),
            ShapeError,
            "same number of dimensions: got 2 and 1",
        ),
        (
            lambda: minitorch.cat([arange(2), minitorch.tensor(1.0)]),
            ShapeError,
            r"zero-dimensional tensor \(at position 1\)",
        ),
        (lambda: minitorch.cat([arange(2, 3)], dim=2), ShapeError, "cat: dimension out of range"),
        (
            lambda: minitorch.stack([arange(2, 3), arange(3, 2)]),
            ShapeError,
            r"equal size, but got \(2, 3\) at entry 0 and \(3, 2\) at entry 1",
        ),
        (lambda: minitorch.stack([]), ShapeError, "expected a non-empty list"),
    ],
)
def test_cat_and_stack_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- property tests ---------------------------------------------------------------------------


@st.composite
def _strided_arrays(draw):
    """A numpy array with an arbitrary layout: permuted, sliced with steps, or both."""
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    a = a.transpose(draw(st.permutations(range(len(shape)))))
    steps = tuple(slice(None, None, draw(st.integers(1, 2))) for _ in shape)
    return a[steps]


def _factorizations(n: int):
    """Shapes with n elements, size-1 dims anywhere: 12 -> (12,), (3, 4), (2, 1, 6), ..."""
    if n == 1:
        return st.sampled_from([(), (1,), (1, 1)])
    divisors = [d for d in range(2, n + 1) if n % d == 0]
    first = st.sampled_from(divisors).flatmap(
        lambda d: _factorizations(n // d).map(lambda rest: (d, *rest))
    )
    return st.tuples(st.booleans(), first).map(lambda t: (1, *t[1]) if t[0] else t[1])


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_view_is_possible_exactly_when_numpy_reshapes_without_copying(data):
    a = data.draw(_strided_arrays())
    new_shape = data.draw(_factorizations(a.size))
    strides = tuple(s // a.itemsize for s in a.strides)
    copied = not np.shares_memory(np.reshape(a, new_shape), a)
    assert view_is_possible(a.shape, strides, new_shape) == (not copied)

    x = minitorch.from_numpy(a)
    if copied:
        with pytest.raises(ShapeError):
            x.view(new_shape)
    else:
        v = x.view(new_shape)
        assert v.data_ptr() == x.data_ptr() or a.size == 0
        np.testing.assert_array_equal(v.numpy(), a.reshape(new_shape))


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_reshape_and_permute_round_trips(data):
    a = data.draw(_strided_arrays())
    x = minitorch.from_numpy(a)
    shape = data.draw(_factorizations(a.size))
    np.testing.assert_array_equal(x.reshape(shape).reshape(a.shape).numpy(), a)
    np.testing.assert_array_equal(
        x.flatten().view(a.shape).numpy()
        if x.is_contiguous()
        else x.flatten().reshape(a.shape).numpy(),
        a,
    )
    order = data.draw(st.permutations(range(a.ndim)))
    inverse = tuple(np.argsort(order))
    p = x.permute(order)
    np.testing.assert_array_equal(p.numpy(), a.transpose(order))
    assert p.permute(inverse).stride() == x.stride()
    np.testing.assert_array_equal(p.permute(inverse).numpy(), a)
    d0, d1 = data.draw(st.integers(0, a.ndim - 1)), data.draw(st.integers(-a.ndim, -1))
    np.testing.assert_array_equal(x.transpose(d0, d1).transpose(d0, d1).numpy(), a)
    np.testing.assert_array_equal(x.unsqueeze(d1).squeeze(d1).numpy(), a)
