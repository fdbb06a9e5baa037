"""The pointwise ops where PyTorch fixes a convention that finite differences cannot see.

Derivatives at kinks and ties (relu'(0), abs'(0), maximum's even split, clamp's closed interval),
NaN propagation, dtype rules (comparisons promote before comparing, where promotes its values,
abs keeps ints), numerics (sigmoid's and tanh's tails, erf against math.erf), the Python
operators, and hashing. Expected values are PyTorch's documented results, worked out by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch
from minitorch import autograd
from minitorch.fake import FakeTensorMode, fake_like


def leaf(values, dtype=minitorch.float64) -> minitorch.Tensor:
    return minitorch.tensor(values, dtype=dtype, requires_grad=True)


def grad_of(fn, *inputs) -> list[np.ndarray]:
    """d sum(fn(*inputs)) / d input, for each input."""
    out = fn(*inputs)
    return [g.numpy() for g in autograd.grad(out.sum(), list(inputs))]


# ---- derivatives at kinks and ties ---------------------------------------------------------


def test_relu_and_abs_have_zero_slope_at_zero():
    x = leaf([-2.0, 0.0, 3.0])
    (relu_grad,) = grad_of(minitorch.relu, x)
    (abs_grad,) = grad_of(minitorch.abs, x)
    np.testing.assert_array_equal(relu_grad, [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(abs_grad, [-1.0, 0.0, 1.0])


@pytest.mark.parametrize("op", [minitorch.maximum, minitorch.minimum])
def test_maximum_and_minimum_split_ties_evenly(op):
    a = leaf([1.0, 2.0, 3.0])
    b = leaf([3.0, 2.0, 1.0])
    grad_a, grad_b = grad_of(op, a, b)
    picked_a = [0.0, 0.5, 1.0] if op is minitorch.maximum else [1.0, 0.5, 0.0]
    np.testing.assert_array_equal(grad_a, picked_a)
    np.testing.assert_array_equal(grad_b, 1.0 - np.array(picked_a))


def test_maximum_broadcasts_its_gradient_back():
    a = leaf([[1.0, 5.0], [4.0, 0.0]])
    b = leaf([2.0, 2.0])
    grad_a, grad_b = grad_of(minitorch.maximum, a, b)
    np.testing.assert_array_equal(grad_a, [[0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_array_equal(grad_b, [1.0, 1.0])  # summed over the broadcast rows


def test_clamp_passes_the_gradient_on_the_closed_interval():
    x = leaf([-2.0, -1.0, 0.0, 1.0, 2.0])
    (grad,) = grad_of(lambda t: minitorch.clamp(t, -1.0, 1.0), x)
    np.testing.assert_array_equal(grad, [0.0, 1.0, 1.0, 1.0, 0.0])  # min <= x <= max


def test_clamp_with_tensor_bounds_sends_the_gradient_to_the_bound_that_won():
    x = leaf([-3.0, 0.0, 3.0])
    low = leaf([-1.0, -1.0, -1.0])
    high = leaf([1.0, 1.0, 1.0])
    grad_x, grad_low, grad_high = grad_of(minitorch.clamp, x, low, high)
    np.testing.assert_array_equal(grad_x, [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(grad_low, [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(grad_high, [0.0, 0.0, 1.0])


def test_clamp_with_min_above_max_gives_max():
    x = minitorch.tensor([-5.0, 0.0, 5.0])
    assert minitorch.clamp(x, min=2.0, max=1.0).tolist() == [1.0, 1.0, 1.0]


def test_where_sends_each_value_the_gradient_where_it_was_picked():
    condition = minitorch.tensor([True, False, True])
    a = leaf([1.0, 2.0, 3.0])
    b = leaf(5.0)  # 0-d: broadcast, so its gradient sums the unpicked places
    grad_a, grad_b = grad_of(lambda x, y: minitorch.where(condition, x, y), a, b)
    np.testing.assert_array_equal(grad_a, [1.0, 0.0, 1.0])
    assert grad_b.shape == () and grad_b == 1.0


def test_masked_fill_with_a_tensor_value_gets_its_gradient():
    x = leaf([1.0, 2.0, 3.0])
    value = leaf(0.0)
    mask = minitorch.tensor([True, True, False])
    grad_x, grad_value = grad_of(lambda t, v: t.masked_fill(mask, v), x, value)
    np.testing.assert_array_equal(grad_x, [0.0, 0.0, 1.0])
    assert grad_value == 2.0


@pytest.mark.filterwarnings("ignore:divide by zero", "ignore:invalid value")  # numpy's log(0)
def test_pow_with_base_zero_has_zero_exponent_gradient():
    # d(0**y)/dy = 0**y * log(0) is 0 * -inf; PyTorch takes the limit 0 for y >= 0.
    x = leaf([0.0, 2.0])
    y = leaf([2.0, 3.0])
    grad_x, grad_y = grad_of(minitorch.pow, x, y)
    np.testing.assert_allclose(grad_x, [0.0, 3 * 2.0**2])
    np.testing.assert_allclose(grad_y, [0.0, 2.0**3 * math.log(2.0)])


def test_two_to_the_x():
    x = leaf([0.0, 1.0, 3.0])
    y = 2**x
    assert y.tolist() == [1.0, 2.0, 8.0]
    (grad,) = autograd.grad(y.sum(), [x])
    np.testing.assert_allclose(grad.numpy(), np.array([1.0, 2.0, 8.0]) * math.log(2.0))


# ---- NaN ----------------------------------------------------------------------------------


def test_nan_propagates_through_maximum_minimum_relu_clamp():
    nan = float("nan")
    x = minitorch.tensor([nan, 1.0])
    y = minitorch.tensor([0.0, nan])
    assert np.isnan(minitorch.maximum(x, y).numpy()).all()
    assert np.isnan(minitorch.minimum(x, y).numpy()).all()
    assert math.isnan(minitorch.relu(x)[0].item())
    assert math.isnan(minitorch.clamp(x, -1.0, 1.0)[0].item())
    assert math.isnan(minitorch.abs(x)[0].item())


def test_comparisons_with_nan_are_false_except_ne():
    x = minitorch.tensor([float("nan")])
    results = [x == x, x < x, x <= x, x > x, x >= x]
    assert [r.item() for r in results] == [False] * 5
    assert (x != x).item() is True


# ---- dtypes ---------------------------------------------------------------------------------


def test_comparisons_promote_before_comparing():
    # 2**24 + 1 is not a float32: PyTorch compares int64 with a float in float32, where it
    # rounds to 2**24, so the two are equal (numpy, comparing in float64, would say no).
    big = minitorch.tensor([2**24 + 1])
    assert (big == float(2**24)).item() is True
    # A 0-d float64 tensor does not promote float32 dims: 0.1 is compared as a float32.
    x = minitorch.tensor([0.1])
    assert (x == minitorch.tensor(0.1, dtype=minitorch.float64)).item() is True


@pytest.mark.parametrize(
    "make, dtype",
    [
        (lambda: minitorch.abs(minitorch.tensor([-2, 3])), minitorch.int64),
        (lambda: minitorch.abs(minitorch.tensor([-2, 3], dtype=minitorch.int32)), minitorch.int32),
        (lambda: minitorch.sqrt(minitorch.tensor([4, 9])), minitorch.float32),
        (
            lambda: minitorch.rsqrt(minitorch.tensor([4, 9], dtype=minitorch.int32)),
            minitorch.float32,
        ),
        (lambda: minitorch.reciprocal(minitorch.tensor([2, 4])), minitorch.float32),
        (lambda: minitorch.sigmoid(minitorch.tensor([True, False])), minitorch.float32),
        (lambda: minitorch.relu(minitorch.tensor([-2, 3])), minitorch.int64),
        (lambda: minitorch.tensor([1, 2]) < 1.5, minitorch.bool),
        (
            lambda: minitorch.where(minitorch.tensor([True]), minitorch.tensor([1]), 2.5),
            minitorch.float32,
        ),
        (
            lambda: minitorch.where(
                minitorch.tensor([True]), 1, minitorch.tensor([2.0], dtype=minitorch.float64)
            ),
            minitorch.float64,
        ),
        (lambda: minitorch.clamp(minitorch.tensor([1, 5]), min=2.5), minitorch.float32),
        (lambda: minitorch.clamp(minitorch.tensor([1, 5]), 0, 3), minitorch.int64),
        (
            lambda: minitorch.tensor([1, 5]).masked_fill(minitorch.tensor([True, False]), 2.7),
            minitorch.int64,
        ),
        (lambda: 2 ** minitorch.tensor([1, 2]), minitorch.int64),
        (lambda: 2.0 ** minitorch.tensor([1, 2]), minitorch.float32),
        (lambda: minitorch.tensor([1, 2]) ** 0.5, minitorch.float32),
        (
            lambda: minitorch.maximum(minitorch.tensor([1]), minitorch.tensor([0.5])),
            minitorch.float32,
        ),
    ],
)
def test_result_dtypes_follow_pytorch(make, dtype):
    assert make().dtype is dtype


def test_masked_fill_converts_the_value_to_the_tensors_dtype():
    x = minitorch.tensor([1, 2, 3])
    out = x.masked_fill(minitorch.tensor([True, False, True]), 2.7)
    assert out.tolist() == [2, 2, 2]  # 2.7 truncates to 2, as PyTorch's cast does


def test_integer_powers_with_negative_exponents_follow_pytorch():
    base = minitorch.tensor([2, 1, -1, -1, 0, 3])
    exponent = minitorch.tensor([-1, -3, -3, -2, 2, 2])
    assert (base**exponent).tolist() == [0, 1, -1, 1, 0, 9]


class _ArraysOnlyWhere:
    """numpy, but `where` takes array conditions alone, as cupy's does (a Python bool has no
    `.astype`): the eager kernels run on cupy unchanged, so they must not hand it one."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def where(condition, x, y):
        assert isinstance(condition, np.ndarray), f"where({condition!r}, ...)"
        return np.where(condition, x, y)


def test_a_number_to_an_integer_tensor_power_runs_on_cupys_where():
    """2 ** t with t an int tensor (found on a GPU: cupy refused `where(2 == 1, ...)`)."""
    from minitorch.ops.pointwise_kernels import power

    exponent = np.array([-2, 0, 1, 3], dtype=np.int32)
    assert power(_ArraysOnlyWhere(), 2, exponent).tolist() == [0, 1, 2, 8]
    assert power(_ArraysOnlyWhere(), -1, exponent).tolist() == [1, 1, -1, -1]


# ---- numerics -------------------------------------------------------------------------------


def test_sigmoid_keeps_its_tails_and_its_gradient_finite():
    x = leaf([-800.0, -100.0, 0.0, 100.0, 800.0])
    y = minitorch.sigmoid(x)
    np.testing.assert_allclose(y.detach().numpy(), [0.0, math.exp(-100), 0.5, 1.0, 1.0], rtol=1e-15)
    (grad,) = autograd.grad(y.sum(), [x])
    assert np.isfinite(grad.numpy()).all()
    x32 = leaf([-100.0, 100.0], dtype=minitorch.float32)  # e^100 overflows float32
    (grad32,) = autograd.grad(minitorch.sigmoid(x32).sum(), [x32])
    assert np.isfinite(grad32.numpy()).all()


def test_tanh_keeps_the_digits_of_small_inputs():
    x = minitorch.tensor([1e-8, -1e-20], dtype=minitorch.float32)
    np.testing.assert_allclose(minitorch.tanh(x).numpy(), [1e-8, -1e-20], rtol=1e-7)


def test_erf_matches_math_erf_to_the_last_bits():
    values = np.concatenate([np.linspace(-7.0, 7.0, 2001), [0.0, -0.0, 1e-300, 1.999999, 2.0]])
    expected = np.array([math.erf(v) for v in values])
    got64 = minitorch.erf(minitorch.tensor(values, dtype=minitorch.float64)).numpy()
    np.testing.assert_allclose(got64, expected, rtol=4e-16, atol=0)
    got32 = minitorch.erf(minitorch.tensor(values)).numpy()
    expected32 = np.array([math.erf(v) for v in values.astype(np.float32)])
    ulps = np.abs(got32 - expected32) / np.spacing(np.abs(expected32).astype(np.float32))
    assert ulps.max() <= 1.0


def test_erf_at_the_ends():
    x = minitorch.tensor([float("-inf"), float("inf"), float("nan"), -0.0])
    got = minitorch.erf(x).numpy()
    assert got[0] == -1.0 and got[1] == 1.0 and math.isnan(got[2])
    assert got[3] == 0.0 and math.copysign(1.0, got[3]) == -1.0  # erf(-0) = -0


def test_gelu_and_silu():
    values = np.array([-3.0, -0.5, 0.0, 0.5, 3.0])
    x = minitorch.tensor(values, dtype=minitorch.float64)
    exact = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in values]
    approx = 0.5 * values * (1 + np.tanh(math.sqrt(2 / math.pi) * (values + 0.044715 * values**3)))
    np.testing.assert_allclose(minitorch.ops.gelu(x).numpy(), exact, rtol=1e-15)
    np.testing.assert_allclose(minitorch.ops.gelu(x, approximate="tanh").numpy(), approx)
    np.testing.assert_allclose(minitorch.ops.silu(x).numpy(), values / (1 + np.exp(-values)))


def test_abs_of_negative_zero_is_positive_zero():
    assert math.copysign(1.0, minitorch.abs(minitorch.tensor([-0.0]))[0].item()) == 1.0


# ---- operators and methods -----------------------------------------------------------------


def test_python_operators_on_either_side():
    x = minitorch.tensor([1.0, 2.0, 3.0])
    assert (x == 2).tolist() == [False, True, False]
    assert (x != 2).tolist() == [True, False, True]
    assert (x < 2).tolist() == [True, False, False]
    assert (x <= 2).tolist() == [True, True, False]
    assert (x > 2).tolist() == [False, False, True]
    assert (x >= 2).tolist() == [False, True, True]
    assert (2 < x).tolist() == [False, False, True]  # Python turns it into x > 2
    assert (2**x).tolist() == [2.0, 4.0, 8.0]
    assert abs(-x).tolist() == [1.0, 2.0, 3.0]


def test_methods_match_functions():
    x = minitorch.tensor([-1.5, 0.25, 2.0])
    y = minitorch.tensor([0.5, 0.5, 0.5])
    mask = x > 0
    pairs = [
        (x.abs(), minitorch.abs(x)),
        (x.relu(), minitorch.relu(x)),
        (x.sigmoid(), minitorch.sigmoid(x)),
        (x.tanh(), minitorch.tanh(x)),
        (x.erf(), minitorch.erf(x)),
        (y.sqrt(), minitorch.sqrt(y)),
        (y.rsqrt(), minitorch.rsqrt(y)),
        (x.reciprocal(), minitorch.reciprocal(x)),
        (x.maximum(y), minitorch.maximum(x, y)),
        (x.minimum(y), minitorch.minimum(x, y)),
        (x.clamp(max=1.0), minitorch.clamp(x, max=1.0)),
        (x.clip(-1, 1), minitorch.clip(x, -1, 1)),
        (x.where(mask, y), minitorch.where(mask, x, y)),
        (x.masked_fill(mask, 0.0), minitorch.masked_fill(x, mask, 0.0)),
        (x.eq(y), minitorch.eq(x, y)),
        (x.ne(y), minitorch.ne(x, y)),
        (x.lt(y), minitorch.lt(x, y)),
        (x.le(y), minitorch.le(x, y)),
        (x.gt(y), minitorch.gt(x, y)),
        (x.ge(y), minitorch.ge(x, y)),
        (y.pow(x), minitorch.pow(y, x)),
    ]
    for method, function in pairs:
        assert method.dtype is function.dtype
        np.testing.assert_array_equal(method.numpy(), function.numpy())


def test_tensors_stay_hashable_by_identity():
    a, b = minitorch.tensor([1.0]), minitorch.tensor([1.0])
    table = {a: "a", b: "b"}
    assert table[a] == "a" and table[b] == "b" and len({a, b, a}) == 2
    assert (a == None) is False and (a != "text") is True  # noqa: E711 - the operator is the point


def test_comparison_results_are_not_differentiable():
    x = leaf([1.0, 2.0])
    mask = x > 1.5
    assert mask.dtype is minitorch.bool and not mask.requires_grad and mask.grad_fn is None


def test_composites_trace_with_fake_tensors():
    x = minitorch.randn(2, 3)
    with FakeTensorMode():
        fake = fake_like(x)
        out = minitorch.clamp(fake, min=0.0).masked_fill(fake > 1, 0.5)
        mask = fake >= minitorch.zeros(3)
    assert (tuple(out.shape), out.dtype) == ((2, 3), minitorch.float32)
    assert mask.dtype is minitorch.bool


# ---- property tests -------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_where_and_comparisons_broadcast_like_numpy(data):
    (cond_shape, shape, other_shape), _ = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3)
    )
    a = data.draw(hnp.arrays(np.float64, shape, elements=st.integers(-3, 3).map(float)))
    b = data.draw(hnp.arrays(np.float64, other_shape, elements=st.integers(-3, 3).map(float)))
    c = data.draw(hnp.arrays(np.bool_, cond_shape))
    ta, tb, tc = (minitorch.tensor(v) for v in (a, b, c))
    np.testing.assert_array_equal(minitorch.where(tc, ta, tb).numpy(), np.where(c, a, b))
    np.testing.assert_array_equal((ta <= tb).numpy(), a <= b)
    np.testing.assert_array_equal(minitorch.maximum(ta, tb).numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(
        minitorch.clamp(ta, tb, 1.0).numpy(), np.minimum(np.maximum(a, b), 1.0)
    )


def test_a_numpy_float_scalar_is_a_python_float():
    """np.float64 subclasses float: it promotes like one (it was a KeyError)."""
    x = minitorch.ones(3, dtype=minitorch.float32)
    out = x + np.float64(1.5)
    assert out.dtype is minitorch.float32
    np.testing.assert_array_equal(out.numpy(), np.full(3, 2.5, dtype=np.float32))
