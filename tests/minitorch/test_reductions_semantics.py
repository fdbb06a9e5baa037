"""Reductions beyond the op-table samples: PyTorch's signatures, ties, errors, stability.

The op-table suite (test_op_table.py) checks values, shapes and gradients of every sample;
here: the public functions' argument forms, the gradient rules at ties, the named results of
max/min/topk, numerical stability of softmax, and property tests over random dims.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch
from minitorch.fake import FakeTensorMode, fake_like
from tracer.aot import make_fx


def leaf(values, dtype=minitorch.float64):
    return minitorch.tensor(values, dtype=dtype, requires_grad=True)


# ---- max, min, topk: named (values, indices) -------------------------------------------------


def test_max_along_a_dim_is_a_named_pair():
    x = minitorch.tensor([[1.0, 5.0], [4.0, 2.0]])
    out = x.max(dim=1)
    values, indices = out
    assert values is out.values and indices is out.indices
    assert values.tolist() == [5.0, 4.0] and indices.tolist() == [1, 0]
    assert indices.dtype is minitorch.int64
    assert isinstance(out, minitorch.return_types.max)
    assert repr(out) == (
        "minitorch.return_types.max(\nvalues=tensor([5., 4.]),\nindices=tensor([1, 0]))"
    )


def test_max_and_min_forms():
    x = minitorch.tensor([[1.0, 5.0, -2.0], [4.0, 2.0, 0.0]])
    assert minitorch.max(x).item() == 5.0 and minitorch.max(x).shape == ()
    assert minitorch.min(x).item() == -2.0
    assert x.min(0).values.tolist() == [1.0, 2.0, -2.0]
    kept = minitorch.min(x, -1, keepdim=True)
    assert kept.values.shape == (2, 1) and kept.indices.tolist() == [[2], [2]]
    assert repr(kept).startswith("minitorch.return_types.min(")


def test_max_with_a_tensor_is_the_elementwise_maximum():
    a, b = minitorch.tensor([1.0, 5.0]), minitorch.tensor([3.0, 2.0])
    assert minitorch.max(a, b).tolist() == [3.0, 5.0]
    assert a.max(other=b).tolist() == [3.0, 5.0]
    assert minitorch.min(a, b).tolist() == [1.0, 2.0]


def test_topk():
    x = minitorch.tensor([[3.0, 1.0, 4.0, 1.0, 5.0], [9.0, 2.0, 6.0, 5.0, 3.0]])
    values, indices = minitorch.topk(x, 2)
    assert values.tolist() == [[5.0, 4.0], [9.0, 6.0]] and indices.tolist() == [[4, 2], [0, 2]]
    low = x.topk(3, dim=1, largest=False)
    assert low.values.tolist() == [[1.0, 1.0, 3.0], [2.0, 3.0, 5.0]]
    assert low.indices.tolist()[0] == [1, 3, 0]  # equal values keep their order
    assert minitorch.topk(x, 1, dim=0).indices.tolist() == [[1, 1, 1, 1, 0]]
    assert repr(minitorch.topk(x, 1)).startswith("minitorch.return_types.topk(")


def test_topk_refuses_k_out_of_range():
    with pytest.raises(minitorch.ShapeError, match=r"topk\(\): k=6 is out of range.*size 5"):
        minitorch.topk(minitorch.ones(2, 5), 6)
    with pytest.raises(minitorch.DTypeError, match=r"topk\(\).*bool"):
        minitorch.topk(minitorch.tensor([True, False]), 1)


# ---- gradients at ties -----------------------------------------------------------------------


def test_amax_splits_the_gradient_among_ties():
    x = leaf([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    minitorch.amax(x, dim=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])


def test_max_over_everything_splits_the_gradient_among_ties():
    x = leaf([1.0, 4.0, 4.0, 0.0])
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, 0.5, 0.5, 0])
    y = leaf([1.0, -4.0, -4.0])
    minitorch.amin(y).backward()
    np.testing.assert_allclose(y.grad.numpy(), [0, 0.5, 0.5])


def test_max_along_a_dim_sends_the_gradient_to_the_returned_index():
    x = leaf([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    values, indices = x.max(dim=1)
    assert indices.tolist() == [1, 0]  # the first maximum
    (values * minitorch.tensor([10.0, 20.0], dtype=minitorch.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 10, 0], [20, 0, 0]])


def test_topk_sends_each_gradient_to_its_index():
    x = leaf([[0.5, 2.0, 1.0, 3.0]])
    values, _ = x.topk(2)
    (values * minitorch.tensor([[1.0, 10.0]], dtype=minitorch.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 10, 0, 1]])


def test_gather_adds_up_the_gradient_of_repeated_indices():
    x = leaf([[1.0, 2.0, 3.0]])
    index = minitorch.tensor([[2, 0, 2, 2]])
    out = x.gather(1, index)
    assert out.tolist() == [[3.0, 1.0, 3.0, 3.0]]
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[1, 0, 3]])


# ---- argmax, argmin -------------------------------------------------------------------------


def test_argmax_forms():
    x = minitorch.tensor([[1, 7, 7], [9, 0, 9]])
    assert minitorch.argmax(x).item() == 3  # into the flattened tensor
    assert minitorch.argmax(x, keepdim=True).shape == (1, 1)
    assert x.argmax(dim=1).tolist() == [1, 0]  # the first of equal maxima
    assert x.argmin(dim=0, keepdim=True).tolist() == [[0, 1, 0]]
    assert minitorch.argmax(x, -1).dtype is minitorch.int64


def test_argmax_errors():
    with pytest.raises(minitorch.DTypeError, match=r"argmax\(\).*bool"):
        minitorch.argmax(minitorch.tensor([True, False]))
    with pytest.raises(minitorch.ShapeError, match=r"argmin\(\).*dim 1 of size 0"):
        minitorch.argmin(minitorch.zeros(2, 0), dim=1)
    with pytest.raises(minitorch.ShapeError, match=r"dim 2 is out of range"):
        minitorch.argmax(minitorch.zeros(2, 3), dim=2)
    with pytest.raises(minitorch.DTypeError, match=r"dim must be an int"):
        minitorch.argmax(minitorch.zeros(2, 3), dim=(0, 1))


def test_reducing_nothing_is_refused_by_name():
    with pytest.raises(minitorch.ShapeError, match=r"max\(\).*\(0, 3\) is empty"):
        minitorch.max(minitorch.zeros(0, 3))
    with pytest.raises(minitorch.ShapeError, match=r"amax\(\).*dim 0 of size 0"):
        minitorch.amax(minitorch.zeros(0, 3), dim=0)
    assert minitorch.amax(minitorch.zeros(0, 3), dim=1).shape == (0,)  # nothing to reduce


# ---- sum, mean, var -------------------------------------------------------------------------


def test_sum_with_dtype():
    x = minitorch.tensor([1, 2, 3], dtype=minitorch.int32)
    assert x.sum().dtype is minitorch.int64  # integers accumulate in int64
    assert x.sum(dtype=minitorch.int32).dtype is minitorch.int32
    out = minitorch.sum(x, dtype=minitorch.float64)
    assert out.dtype is minitorch.float64 and out.item() == 6.0
    assert minitorch.sum(minitorch.ones(2, 3), dim=()).item() == 6.0  # () means every dim


def test_mean_refuses_integers_unless_given_a_dtype():
    x = minitorch.tensor([1, 2])
    with pytest.raises(minitorch.DTypeError, match=r"mean\(\).*int64"):
        x.mean()
    out = x.mean(dtype=minitorch.float64)
    assert out.dtype is minitorch.float64 and out.item() == 1.5


def test_var_forms():
    data = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 9.0]])
    x = minitorch.tensor(data)
    np.testing.assert_allclose(x.var().item(), np.var(data, ddof=1))
    np.testing.assert_allclose(minitorch.var(x, 1).numpy(), np.var(data, 1, ddof=1))
    np.testing.assert_allclose(minitorch.var(x, 1, False).numpy(), np.var(data, 1))
    np.testing.assert_allclose(minitorch.var(x, False).item(), np.var(data))  # var(x, unbiased)
    np.testing.assert_allclose(
        x.var(0, correction=0, keepdim=True).numpy(), np.var(data, 0, keepdims=True)
    )
    assert x.var(dim=1, unbiased=True, keepdim=True).shape == (2, 1)
    with pytest.raises(minitorch.MinitorchError, match=r"either unbiased or correction"):
        x.var(unbiased=True, correction=1)
    with pytest.raises(minitorch.DTypeError, match=r"var\(\).*int64"):
        minitorch.tensor([1, 2]).var()


def test_var_of_one_element_is_nan_as_in_pytorch():
    with np.errstate(divide="ignore", invalid="ignore"):
        assert np.isnan(minitorch.tensor([2.0]).var().item())
        assert minitorch.tensor([2.0]).var(correction=0).item() == 0.0


def test_var_is_accurate_for_a_large_mean():
    # The one-pass E[x^2] - E[x]^2 loses every digit here; two passes do not.
    data = 1e8 + np.array([1.0, 2.0, 3.0, 4.0])
    out = minitorch.tensor(data, dtype=minitorch.float64).var()
    np.testing.assert_allclose(out.item(), np.var(data, ddof=1), rtol=1e-12)


# ---- softmax ---------------------------------------------------------------------------------


def test_softmax_is_stable_for_large_inputs():
    x = minitorch.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    out = minitorch.softmax(x, dim=1).numpy()
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(
        out[0], np.exp([-2.0, -1.0, 0.0]) / np.exp([-2, -1, 0.0]).sum(), rtol=1e-6
    )
    # log_softmax stays finite where softmax underflows to 0.
    logp = x.log_softmax(1).numpy()
    np.testing.assert_allclose(logp[1], [-2000.0, -1000.0, 0.0], rtol=1e-6)


def test_softmax_forms_and_dtypes():
    x = minitorch.tensor([1, 2, 3])
    with pytest.raises(minitorch.DTypeError, match=r"softmax\(\).*int64"):
        minitorch.softmax(x, 0)
    out = minitorch.softmax(x, 0, dtype=minitorch.float64)
    assert out.dtype is minitorch.float64
    np.testing.assert_allclose(out.numpy(), np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum())
    assert minitorch.softmax(minitorch.zeros(0, 3), 0).shape == (0, 3)


def test_softmax_gradient_is_unchanged_by_the_max_shift():
    # d softmax / dx = diag(s) - s s^T: the shift by max(x) must not change it.
    data = np.array([0.3, -1.2, 2.0, 2.0])
    x = leaf(data)
    s = np.exp(data) / np.exp(data).sum()
    w = np.array([1.0, -2.0, 0.5, 3.0])
    (minitorch.softmax(x, 0) * minitorch.tensor(w, dtype=minitorch.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (np.diag(s) - np.outer(s, s)) @ w, atol=1e-12)


# ---- through the tracer ----------------------------------------------------------------------


def test_max_along_a_dim_traces_to_argmax_and_gather():
    gm = make_fx(lambda x: minitorch.max(x, 1))(minitorch.ones(2, 3))
    targets = [n.target.name for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == ["argmax", "gather", "reshape", "reshape"]


def test_aot_eager_matches_eager_forward_and_backward():
    # AOT autograd records every derivative formula above (gather's scatter_add, amax's tie
    # mask, mm's transposes) into one joint graph; running it must give eager's numbers.
    def f(x, w):
        h = x @ w
        values, _ = h.max(1)
        return (
            minitorch.log_softmax(h, 1).sum()
            + values.sum()
            + h.amax(0).sum()
            + minitorch.softmax(h, 0).var()
            + h.topk(2).values.sum()
        )

    rng = np.random.default_rng(0)
    data = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    eager, compiled = [leaf(a) for a in data], [leaf(a) for a in data]
    f(*eager).backward()
    out = minitorch.compile(f, backend="aot_eager")(*compiled)
    out.backward()
    np.testing.assert_allclose(out.item(), f(*eager).item(), rtol=1e-12)
    for got, want in zip(compiled, eager):
        np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_fake_tensors_flow_through_the_pairs():
    x = fake_like(minitorch.ones(2, 5, 3))
    with FakeTensorMode():
        values, indices = minitorch.topk(x, 2, dim=1)
        pair = x.min(0, keepdim=True)
    assert values.shape == indices.shape == (2, 2, 3) and indices.dtype is minitorch.int64
    assert pair.values.shape == (1, 5, 3)


# ---- properties ------------------------------------------------------------------------------

_FLOATS = st.floats(-100, 100, allow_nan=False, width=64)


@settings(max_examples=60, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4), data=st.data())
def test_extremes_over_random_dims_match_numpy(shape, data):
    a = data.draw(hnp.arrays(np.float64, shape, elements=_FLOATS))
    ndim = len(shape)
    axes = data.draw(st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim))
    dims = tuple(d - ndim if data.draw(st.booleans()) else d for d in axes)
    keepdim = data.draw(st.booleans())
    x = minitorch.tensor(a)

    np.testing.assert_array_equal(
        minitorch.amax(x, dims, keepdim).numpy(), np.amax(a, axis=dims, keepdims=keepdim)
    )
    np.testing.assert_array_equal(
        x.amin(dims, keepdim).numpy(), np.amin(a, axis=dims, keepdims=keepdim)
    )
    d = dims[0]
    values, indices = x.max(d, keepdim)
    np.testing.assert_array_equal(indices.numpy(), np.argmax(a, axis=d, keepdims=keepdim))
    np.testing.assert_array_equal(values.numpy(), np.amax(a, axis=d, keepdims=keepdim))
    np.testing.assert_array_equal(x.argmin(d).numpy(), np.argmin(a, axis=d))
    if np.prod([a.shape[i] for i in dims]) > 1:  # else N - 1 = 0: nan
        np.testing.assert_allclose(
            x.var(dims, keepdim=keepdim).numpy(),
            np.var(a, axis=dims, ddof=1, keepdims=keepdim),
            rtol=1e-9,
            atol=1e-9,
        )
    softmax = minitorch.softmax(x, d).numpy()
    np.testing.assert_allclose(softmax.sum(axis=d), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.log(softmax), x.log_softmax(d).numpy(), rtol=1e-9, atol=1e-9)


# ---- scatter_add of whole rows ([Note: adding whole rows] in minitorch/ops/reductions.py) ----


@settings(max_examples=150, deadline=None)
@given(
    rows=st.integers(1, 8),
    columns=st.integers(1, 5),
    count=st.integers(1, 12),
    dtype=st.sampled_from([np.float32, np.float64, np.int64]),
    expanded=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_scatter_add_of_whole_rows_is_numpys_add_at(rows, columns, count, dtype, expanded, seed):
    rng = np.random.default_rng(seed)
    base = (rng.standard_normal((rows, columns + 1)) * 4).astype(dtype)
    index = np.broadcast_to(rng.integers(0, rows, (count, 1)), (count, columns))
    if not expanded:
        index = index.copy()
    src = (rng.standard_normal((count, columns)) * 4).astype(dtype)
    expected = base.copy()
    np.add.at(expected, (index, np.arange(columns)), src)
    got = minitorch.ops.scatter_add(
        minitorch.tensor(base), 0, minitorch.tensor(index), minitorch.tensor(src)
    )
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=1e-5)
    assert got.numpy()[:, columns].tolist() == base[:, columns].tolist()  # past the index


def test_embedding_gradient_adds_repeated_tokens_and_keeps_special_values():
    weight = minitorch.zeros(5, 3, requires_grad=True)
    tokens = minitorch.tensor([[4, 1, 4], [4, 0, 1]])
    g = np.arange(18, dtype=np.float32).reshape(2, 3, 3)
    g[1, 1, 2] = np.nan
    minitorch.nn.functional.embedding(tokens, weight).backward(minitorch.tensor(g))
    expected = np.zeros((5, 3), np.float32)
    np.add.at(expected, tokens.numpy().reshape(-1), g.reshape(-1, 3))
    np.testing.assert_array_equal(weight.grad.numpy(), expected)  # NaN in row 0, row 3 zeros
    base = np.array([[-0.0, 1.0]], np.float32)
    got = minitorch.ops.scatter_add(
        minitorch.tensor(base), 0, minitorch.tensor([[0]]), minitorch.tensor([[2.0]])
    )
    assert np.signbit(got.numpy()[0, 1]) == np.signbit(base[0, 1])
    assert got.numpy().tolist() == [[2.0, 1.0]]
