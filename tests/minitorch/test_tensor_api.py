"""The tensor API real scripts use, beyond what the op samples check: split/chunk as views,
sort/max/topk as named pairs, isclose with NaN and infinities, log1p/expm1 near 0, norm's
options, tril/triu's errors, `.data`, `.type()`, `f"{loss:.4f}"`, testing.assert_close; and
the same functions compiled, against eager.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from minitorch.errors import ArgumentTypeError, DTypeError, MinitorchError, ShapeError
from minitorch.testing import CloseError, assert_close

# ---- split and chunk -------------------------------------------------------------------------


def test_split_pieces_are_views_a_write_reaches_the_base():
    x = minitorch.zeros(4, 6)
    first, second = x.split(3, dim=1)
    second[0, 0] = 5.0
    assert x[0, 3].item() == 5.0 and first.shape == (4, 3)
    assert first.data_ptr() == x.data_ptr()


def test_split_and_chunk_sizes_follow_pytorch():
    x = minitorch.arange(10)
    assert [p.tolist() for p in minitorch.split(x, 4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [len(p) for p in x.split([1, 0, 9])] == [1, 0, 9]
    assert [len(p) for p in x.chunk(4)] == [3, 3, 3, 1]
    assert [len(p) for p in minitorch.arange(5).chunk(4)] == [2, 2, 1]  # fewer than asked
    assert [len(p) for p in minitorch.zeros(0).chunk(3)] == [0, 0, 0]
    with pytest.raises(ShapeError, match="sum exactly to 10"):
        x.split([3, 3])
    with pytest.raises(ShapeError, match="greater than 0"):
        x.chunk(0)


def test_gradients_flow_back_through_split_pieces():
    x = minitorch.randn(3, 4, requires_grad=True)
    a, b = x.split(2, dim=1)
    (a * 2 + b * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[2, 2, 3, 3]] * 3)


# ---- (values, indices) pairs -----------------------------------------------------------------


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda x: x.max(dim=1), "max"),
        (lambda x: minitorch.min(x, 0), "min"),
        (lambda x: x.topk(2), "topk"),
        (lambda x: x.sort(descending=True), "sort"),
    ],
)
def test_max_min_topk_sort_return_named_pairs(call, name):
    out = call(minitorch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]]))
    values, indices = out
    assert type(out).__name__ == name and out.values is values and out.indices is indices
    assert out[0] is values and indices.dtype is minitorch.int64


def test_sort_is_stable_and_puts_nan_last_as_pytorch_does():
    x = minitorch.tensor([2.0, float("nan"), 1.0, 2.0, -1.0])
    values, indices = minitorch.sort(x)
    assert indices.tolist() == [4, 2, 0, 3, 1]
    assert math.isnan(values[-1].item())
    assert minitorch.sort(x, descending=True).indices.tolist() == [1, 0, 3, 2, 4]
    assert x.argsort().tolist() == [4, 2, 0, 3, 1]
    with pytest.raises(DTypeError, match="bool"):
        minitorch.sort(minitorch.tensor([True, False]))


# ---- isclose, allclose -----------------------------------------------------------------------


def test_isclose_handles_nan_and_infinities_as_pytorch():
    inf, nan = float("inf"), float("nan")
    a = minitorch.tensor([1.0, inf, -inf, inf, nan, 1.0, 5.0])
    b = minitorch.tensor([1.0 + 1e-6, inf, -inf, -inf, nan, inf, inf])
    assert minitorch.isclose(a, b).tolist() == [True, True, True, False, False, False, False]
    assert a.isclose(b, equal_nan=True).tolist()[4] is True


def test_allclose_is_a_python_bool_with_pytorchs_defaults():
    x = minitorch.tensor([1.0, 100.0])
    assert minitorch.allclose(x, x + 0.5e-5 * x) is True  # within rtol=1e-5
    assert x.allclose(x + 2e-5 * x) is False
    assert minitorch.allclose(minitorch.zeros(0), minitorch.zeros(0)) is True
    with pytest.raises(DTypeError, match="same dtype"):
        minitorch.isclose(x, x.double())


# ---- log1p, expm1, norm, tril --------------------------------------------------------------


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64], ids=str)
def test_log1p_and_expm1_keep_every_digit_of_a_tiny_input(compiled, dtype):
    tiny = np.array([1e-10, -3e-9, 1e-20, 0.5], dtype=dtype.np)

    def both(x):
        return minitorch.log1p(x), x.expm1()

    fn = minitorch.compile(both, fullgraph=True) if compiled else both
    log1p, expm1 = fn(minitorch.tensor(tiny))
    np.testing.assert_allclose(
        log1p.numpy(), np.log1p(tiny), rtol=2e-7 if dtype.itemsize == 4 else 1e-15
    )
    np.testing.assert_allclose(
        expm1.numpy(), np.expm1(tiny), rtol=2e-7 if dtype.itemsize == 4 else 1e-15
    )


def test_norm_defaults_dims_and_dtype_follow_pytorch():
    x = minitorch.tensor([[3.0, -4.0], [0.0, 12.0]])
    a = x.numpy()
    assert x.norm().item() == pytest.approx(13.0)  # 'fro' over every element
    np.testing.assert_allclose(minitorch.norm(x, dim=1).numpy(), np.linalg.norm(a, axis=1))
    np.testing.assert_allclose(x.norm(p=1, dim=0, keepdim=True).numpy(), [[3.0, 16.0]])
    assert x.norm(p=float("inf")).item() == 12.0 and x.norm(p=0).item() == 3.0
    assert x.norm(dtype=minitorch.float64).dtype is minitorch.float64
    with pytest.raises(DTypeError, match="floating point"):
        minitorch.norm(minitorch.tensor([1, 2]))
    with pytest.raises(MinitorchError, match="nuclear"):
        x.norm(p="nuc")


def test_norm_gradient_is_x_over_the_norm():
    x = minitorch.tensor([3.0, 4.0], requires_grad=True)
    x.norm().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.6, 0.8], rtol=1e-6)


@pytest.mark.parametrize("p", [2, 3, "fro"])
def test_norm_gradient_is_zero_where_the_norm_is_zero(p):
    # PyTorch's: 0, not the NaN of sqrt'(0) * 0; other rows keep theirs
    x = minitorch.tensor([[3.0, 4.0], [0.0, 0.0]], requires_grad=True)
    x.norm(p=p, dim=1).sum().backward()
    grad = x.grad.numpy()
    assert np.all(np.isfinite(grad)) and grad[1].tolist() == [0.0, 0.0]
    assert grad[0].tolist() != [0.0, 0.0]


def test_tril_and_triu_need_a_matrix_and_keep_the_dtype():
    with pytest.raises(ShapeError, match="at least 2 dimensions"):
        minitorch.tril(minitorch.ones(3))
    mask = minitorch.ones(3, 3, dtype=minitorch.bool).tril()
    assert mask.dtype is minitorch.bool and mask.tolist() == np.tri(3, dtype=bool).tolist()
    assert minitorch.ones(2, 2).triu(diagonal=1).tolist() == [[0.0, 1.0], [0.0, 0.0]]


# ---- .data, .type(), __format__ --------------------------------------------------------------


def test_data_shares_memory_outside_autograd_and_can_be_replaced():
    w = minitorch.ones(3, requires_grad=True)
    d = w.data
    assert not d.requires_grad and d.grad_fn is None and type(d) is minitorch.Tensor
    d.mul_(2.0)  # an update behind autograd's back, as optimizers once did
    assert w.tolist() == [2.0, 2.0, 2.0] and w._version == 0
    w.data = minitorch.zeros(2)
    assert w.tolist() == [0.0, 0.0] and w.requires_grad and w.is_leaf
    with pytest.raises(ArgumentTypeError, match="has to be a tensor"):
        w.data = [1.0]


def test_parameter_data_is_a_plain_tensor():
    p = minitorch.nn.Linear(2, 2).weight
    assert type(p.data) is minitorch.Tensor and p.data.data_ptr() == p.data_ptr()


@pytest.mark.parametrize(
    "dtype, name",
    [
        (minitorch.float32, "torch.FloatTensor"),
        (minitorch.float64, "torch.DoubleTensor"),
        (minitorch.int32, "torch.IntTensor"),
        (minitorch.int64, "torch.LongTensor"),
        (minitorch.bool, "torch.BoolTensor"),
    ],
)
def test_type_names_the_tensor_as_pytorch_and_converts(dtype, name):
    x = minitorch.zeros(2, dtype=dtype)
    assert x.type() == name
    assert minitorch.zeros(2).type(name).dtype is dtype
    assert minitorch.zeros(2).type(dtype).dtype is dtype


def test_type_refuses_an_unknown_name():
    with pytest.raises(DTypeError, match="invalid type"):
        minitorch.zeros(2).type("torch.ComplexFloatTensor")
    assert minitorch.zeros(2).type("torch.HalfTensor").dtype is minitorch.float16


def test_format_spec_works_on_0d_tensors_and_is_refused_otherwise():
    loss = minitorch.tensor(0.123456)
    assert f"{loss:.4f}" == "0.1235" and f"{minitorch.tensor(7):>3}" == "  7"
    assert f"{minitorch.ones(2)}" == str(minitorch.ones(2))
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{minitorch.ones(1):.2f}"  # noqa: B018 - one element, but not 0-d: PyTorch refuses


# ---- testing.assert_close --------------------------------------------------------------------


def test_assert_close_uses_the_dtypes_tolerances():
    x = minitorch.tensor([1.0, 2.0])
    assert_close(x, x + 1e-6)  # float32: atol 1e-5
    with pytest.raises(AssertionError):
        assert_close(x.double(), x.double() + 1e-6)  # float64: 1e-7
    with pytest.raises(CloseError, match="Tensor-likes are not equal"):
        assert_close(minitorch.tensor([1, 2]), minitorch.tensor([1, 3]))


def test_assert_close_message_says_what_differs_as_pytorch():
    with pytest.raises(AssertionError) as info:
        assert_close(minitorch.tensor([1.0, 1.5, 1.0]), minitorch.ones(3))
    message = str(info.value)
    assert message.startswith("Tensor-likes are not close!")
    assert "Mismatched elements: 1 / 3 (33.3%)" in message
    assert "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)" in message
    with pytest.raises(AssertionError, match="attribute 'dtype'"):
        assert_close(minitorch.ones(2), minitorch.ones(2).double())
    with pytest.raises(AssertionError, match="attribute 'shape'"):
        assert_close(minitorch.ones(2), minitorch.ones(3))
    assert_close(minitorch.ones(2), minitorch.ones(2).double(), check_dtype=False)


def test_assert_close_walks_containers_and_compares_scalars():
    assert_close({"a": [minitorch.ones(2), 1.0]}, {"a": [minitorch.ones(2), 1.0]})
    with pytest.raises(AssertionError, match=r"item \['a'\]\[1\]"):
        assert_close({"a": [minitorch.ones(2), 1.0]}, {"a": [minitorch.ones(2), 1.5]})
    with pytest.raises(AssertionError, match="length"):
        assert_close([1, 2], [1])
    nan = minitorch.tensor([float("nan")])
    with pytest.raises(AssertionError):
        assert_close(nan, nan)
    assert_close(nan, nan, equal_nan=True)
    assert_close(1.0, 1.05, rtol=0.1, atol=0.0)
    with pytest.raises(ArgumentTypeError, match="Both 'rtol' and 'atol'"):
        assert_close(1.0, 1.0, rtol=0.1)
    with pytest.raises(AssertionError, match="custom"):
        assert_close(1, 2, msg="custom")


# ---- compiled against eager ------------------------------------------------------------------


def causal_attention(x, w):
    """nanoGPT's shape: qkv split from one projection, a tril mask, softmax over the past."""
    q, k, v = (x @ w).split(x.shape[-1], dim=2)
    att = q @ k.transpose(-2, -1) * x.shape[-1] ** -0.5
    future = att.tril().eq(0.0)
    att = att.masked_fill(future, float("-inf")).softmax(dim=-1)
    return att @ v


def tensor_methods(x):
    left, right = x.chunk(2, dim=-1)
    # NOTE: not x.sort(): capture takes tensor results only, and sort returns a pair (the op
    # itself compiles: tests/minitorch/test_op_coverage.py)
    rolled = minitorch.roll(left, 1, -1) * right  # (..., 3)
    return (
        rolled.sum(-1, keepdim=True)
        + x.norm(dim=-1, keepdim=True)
        + minitorch.log1p(x.abs())
        + (x * 0.1).expm1()
        + x.triu(1)
    )


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (causal_attention, [(2, 5, 4), (4, 12)]),
        (tensor_methods, [(3, 6, 6)]),
    ],
)
def test_compiled_equals_eager_values_and_gradients(fn, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, size=s).astype(np.float32) for s in shapes]
    eager_in = [minitorch.tensor(a, requires_grad=True) for a in arrays]
    compiled_in = [minitorch.tensor(a, requires_grad=True) for a in arrays]
    expected = fn(*eager_in)
    got = minitorch.compile(fn, fullgraph=True)(*compiled_in)
    assert_close(got, expected, rtol=1e-5, atol=1e-5)
    expected.sum().backward()
    got.sum().backward()
    for e, c in zip(eager_in, compiled_in, strict=True):
        assert_close(c.grad, e.grad, rtol=1e-4, atol=1e-5)
