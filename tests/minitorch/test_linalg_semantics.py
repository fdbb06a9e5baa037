"""Matrix products beyond the op-table samples: operators, errors, the ops a product becomes,
and torch.matmul's shape rules against numpy over random shapes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from tracer.aot import make_fx


def test_matmul_operator():
    a = minitorch.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = minitorch.tensor([1.0, -1.0])
    assert (a @ b).tolist() == [-1.0, -1.0]
    assert (b @ a).tolist() == [-2.0, -2.0]
    assert (a @ a).tolist() == a.matmul(a).tolist() == a.mm(a).tolist() == [[7, 10], [15, 22]]
    assert (b @ b).shape == ()
    with pytest.raises(TypeError):
        2.0 @ a  # no product of a number with a matrix, as in PyTorch
    with pytest.raises(TypeError):
        a @ 2.0


def test_bmm():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 4, 5))
    out = minitorch.tensor(a).bmm(minitorch.tensor(b))
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-6)


@pytest.mark.parametrize(
    "op, a, b, message",
    [
        ("mm", (2, 3), (4, 5), r"mm: shapes \(2, 3\) and \(4, 5\) cannot be multiplied \(3 != 4\)"),
        ("mm", (2, 3, 4), (4, 5), r"mm: expected two 2-d tensors, got shapes \(2, 3, 4\) and"),
        ("mm", (3,), (3, 2), r"mm: expected two 2-d tensors, got shapes \(3,\) and \(3, 2\)"),
        (
            "bmm",
            (2, 3, 4),
            (3, 4, 5),
            r"bmm: batch sizes differ: shapes \(2, 3, 4\) and \(3, 4, 5\)",
        ),
        ("bmm", (2, 3, 4), (2, 5, 5), r"bmm: shapes \(2, 3, 4\) and \(2, 5, 5\) cannot be"),
        ("bmm", (3, 4), (4, 5), r"bmm: expected two 3-d tensors"),
        ("matmul", (2, 3), (4,), r"matmul: shapes \(2, 3\) and \(4,\) cannot be multiplied"),
        ("matmul", (), (3,), r"matmul: both arguments need at least 1 dim"),
        ("matmul", (2, 2, 3), (3, 3, 1), r"matmul: shapes \(2,\) and \(3,\) cannot be broadcast"),
    ],
)
def test_shape_errors_name_the_op_and_both_shapes(op, a, b, message):
    with pytest.raises(minitorch.ShapeError, match=message):
        getattr(minitorch, op)(minitorch.ones(a), minitorch.ones(b))


def test_dtype_errors():
    with pytest.raises(minitorch.DTypeError, match=r"mm: .*same dtype, got float32 and float64"):
        minitorch.mm(minitorch.ones(2, 2), minitorch.ones(2, 2, dtype=minitorch.float64))
    with pytest.raises(minitorch.DTypeError, match=r"matmul: .*float32 and int64"):
        minitorch.ones(2, 2) @ minitorch.tensor([1, 2])
    with pytest.raises(minitorch.DTypeError, match=r"bool"):
        minitorch.tensor([True]) @ minitorch.tensor([True])
    with pytest.raises(minitorch.DTypeError, match=r"matmul\(\): expected a Tensor"):
        minitorch.matmul(minitorch.ones(2), [1.0, 2.0])


def _products(fn, *shapes) -> list[str]:
    gm = make_fx(fn)(*(minitorch.ones(s) for s in shapes))
    return [n.target.name for n in gm.graph.nodes if n.op == "call_function"]


def test_what_a_product_becomes():
    # A Linear layer on a batch of sequences: the batch folds into the rows of one mm.
    assert _products(lambda x, w: x @ w, (4, 5, 3), (3, 2)) == ["reshape", "mm", "reshape"]
    assert _products(lambda x, w: x @ w, (4, 3), (3, 2)) == ["mm"]
    assert _products(lambda x, w: x @ w, (4, 2, 3), (4, 3, 2)) == ["bmm"]
    # Broadcast batch dims expand, then flatten into one batch dim.
    assert _products(lambda x, w: x @ w, (2, 1, 2, 3), (5, 3, 2)) == [
        "expand",
        "reshape",
        "expand",
        "reshape",
        "bmm",
        "reshape",
    ]


def test_gradients_of_a_broadcast_batched_product():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 2))
    ta = minitorch.tensor(a, requires_grad=True)
    tb = minitorch.tensor(b, requires_grad=True)
    (ta @ tb).sum().backward()
    g = np.ones((2, 5, 3, 2))
    np.testing.assert_allclose(ta.grad.numpy(), (g @ np.swapaxes(b, -1, -2)).sum(1, keepdims=True))
    np.testing.assert_allclose(tb.grad.numpy(), (np.swapaxes(a, -1, -2) @ g).sum(0))


_SIDE = st.integers(1, 3)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_matmul_shapes_match_numpy(data):
    n, k, m = data.draw(_SIDE), data.draw(_SIDE), data.draw(_SIDE)
    batch_a = tuple(data.draw(st.lists(st.sampled_from([1, 2]), max_size=2)))
    batch_b = tuple(data.draw(st.lists(st.sampled_from([1, 2]), max_size=2)))
    shape_a = data.draw(st.sampled_from([(k,), batch_a + (n, k)]))
    shape_b = data.draw(st.sampled_from([(k,), batch_b + (k, m)]))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    out = minitorch.tensor(a) @ minitorch.tensor(b)
    expected = np.matmul(a, b)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)
