"""The factories and samplers real scripts call, held to numpy and to PyTorch's documented
behaviour: eye, linspace, the *_like factories, randint's two forms, Generator, randperm,
multinomial; and the small modules around them: dtype aliases, minitorch.cuda, inference_mode.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.errors import ArgumentTypeError, DTypeError, InvalidArgumentError, ShapeError

# ---- eye and linspace ------------------------------------------------------------------------


@pytest.mark.parametrize("args", [(3,), (2, 4), (4, 2), (0,), (1, 0)])
def test_eye_is_numpys_identity_in_float32(args):
    x = minitorch.eye(*args)
    assert x.dtype is minitorch.float32
    np.testing.assert_array_equal(x.numpy(), np.eye(*args))


def test_eye_takes_a_dtype_and_requires_grad_and_refuses_a_negative_size():
    assert minitorch.eye(2, dtype=minitorch.int64).dtype is minitorch.int64
    assert minitorch.eye(2, requires_grad=True).requires_grad
    with pytest.raises(ShapeError, match="eye"):
        minitorch.eye(-1)


@pytest.mark.parametrize(
    "start, end, steps", [(0, 1, 5), (-3.5, 2, 7), (2, -2, 4), (1, 1, 1), (0, 10, 0), (0, 1, 1)]
)
def test_linspace_matches_numpy(start, end, steps):
    x = minitorch.linspace(start, end, steps)
    assert x.dtype is minitorch.float32 and x.shape == (steps,)
    np.testing.assert_allclose(x.numpy(), np.linspace(start, end, steps), rtol=1e-6, atol=1e-7)


def test_linspace_into_an_integer_dtype_truncates_as_pytorch_does():
    x = minitorch.linspace(0, 10, 4, dtype=minitorch.int64)
    assert x.tolist() == [0, 3, 6, 10]  # 0, 3.33, 6.67, 10 truncated (PyTorch's result)


def test_linspace_needs_an_int_number_of_steps_of_at_least_zero():
    with pytest.raises(ArgumentTypeError, match="steps"):
        minitorch.linspace(0, 1, 2.5)
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        minitorch.linspace(0, 1, -1)


# ---- like another tensor ---------------------------------------------------------------------


def test_full_like_and_empty_like_take_shape_dtype_and_device_from_the_tensor():
    x = minitorch.ones(2, 3, dtype=minitorch.int64)
    full = minitorch.full_like(x, 7)
    assert full.dtype is minitorch.int64 and full.tolist() == [[7] * 3] * 2
    assert minitorch.full_like(x, 2.7).tolist() == [[2] * 3] * 2  # converted to x's dtype
    half = minitorch.full_like(x, 0.5, dtype=minitorch.float64)
    assert half.dtype is minitorch.float64 and half.tolist() == [[0.5] * 3] * 2
    empty = minitorch.empty_like(x)
    assert empty.shape == (2, 3) and empty.dtype is minitorch.int64
    assert minitorch.empty_like(x, dtype=minitorch.float32).dtype is minitorch.float32


def test_the_like_factories_refuse_a_non_tensor():
    for make in (minitorch.full_like, minitorch.randint_like):
        with pytest.raises(DTypeError, match="expected a Tensor"):
            make([1, 2], 3)
    with pytest.raises(DTypeError, match="empty_like"):
        minitorch.empty_like(3)


def test_randint_like_draws_in_the_tensors_shape_and_dtype():
    x = minitorch.zeros(50, 4, dtype=minitorch.int32)
    low_high = minitorch.randint_like(x, -2, 3)
    only_high = minitorch.randint_like(x, 5)
    assert low_high.dtype is minitorch.int32 and low_high.shape == (50, 4)
    assert set(np.unique(low_high.numpy())) == {-2, -1, 0, 1, 2}
    assert set(np.unique(only_high.numpy())) == {0, 1, 2, 3, 4}
    assert minitorch.randint_like(minitorch.zeros(3), 4).dtype is minitorch.float32


# ---- randint ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, low, high, shape",
    [
        (
            lambda: minitorch.randint(10, size=(200,)),
            0,
            10,
            (200,),
        ),  # PyTorch's randint(high, size=)
        (lambda: minitorch.randint(10, (200,)), 0, 10, (200,)),
        (lambda: minitorch.randint(-5, 5, (20, 10)), -5, 5, (20, 10)),
        (lambda: minitorch.randint(low=3, high=6, size=(200,)), 3, 6, (200,)),
        (lambda: minitorch.randint(high=4, size=[200]), 0, 4, (200,)),
    ],
)
def test_randint_accepts_each_of_pytorchs_forms(call, low, high, shape):
    x = call()
    assert x.dtype is minitorch.int64 and x.shape == shape
    assert set(np.unique(x.numpy())) == set(range(low, high))  # every value, nothing else


def test_randint_refuses_an_empty_range_a_float_bound_and_a_missing_size():
    with pytest.raises(InvalidArgumentError, match="low < high"):
        minitorch.randint(5, 5, (2,))
    with pytest.raises(ArgumentTypeError, match="high must be an int"):
        minitorch.randint(0, 2.5, (2,))
    with pytest.raises(InvalidArgumentError, match="size"):
        minitorch.randint(10)
    with pytest.raises(DTypeError, match="floating point"):
        minitorch.randint(10, (2,), requires_grad=True)


# ---- generators ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "draw",
    [
        lambda g: minitorch.rand(5, generator=g),
        lambda g: minitorch.randn(2, 3, generator=g),
        lambda g: minitorch.randint(0, 100, (6,), generator=g),
        lambda g: minitorch.randperm(8, generator=g),
        lambda g: minitorch.multinomial(minitorch.ones(5), 3, generator=g),
        lambda g: minitorch.randint_like(minitorch.zeros(4), 9, generator=g),
    ],
)
def test_a_seeded_generator_repeats_and_leaves_the_default_stream_alone(draw):
    g = minitorch.Generator().manual_seed(123)
    minitorch.manual_seed(0)
    first = draw(g)
    default_after_one = minitorch.rand(3)
    g.manual_seed(123)
    minitorch.manual_seed(0)
    again = draw(g)
    assert first.tolist() == again.tolist()
    assert minitorch.rand(3).tolist() == default_after_one.tolist()  # the default did not move
    assert g.initial_seed() == 123


def test_a_generator_must_be_a_generator():
    with pytest.raises(ArgumentTypeError, match="generator"):
        minitorch.rand(2, generator=np.random.default_rng(0))
    with pytest.raises(ArgumentTypeError, match="seed"):
        minitorch.Generator().manual_seed(1.5)


# ---- randperm and multinomial ----------------------------------------------------------------


def test_randperm_is_a_permutation_in_the_asked_dtype():
    x = minitorch.randperm(50)
    assert x.dtype is minitorch.int64 and sorted(x.tolist()) == list(range(50))
    assert minitorch.randperm(0).shape == (0,)
    assert minitorch.randperm(3, dtype=minitorch.int32).dtype is minitorch.int32
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        minitorch.randperm(-1)


def test_multinomial_with_replacement_draws_in_proportion_to_the_weights():
    weights = minitorch.tensor([[1.0, 0.0, 3.0], [0.0, 2.0, 2.0]])
    draws = minitorch.multinomial(
        weights, 20000, replacement=True, generator=minitorch.Generator().manual_seed(0)
    )
    assert draws.dtype is minitorch.int64 and draws.shape == (2, 20000)
    for row, w in zip(draws.numpy(), weights.numpy()):
        freq = np.bincount(row, minlength=3) / row.size
        np.testing.assert_allclose(freq, w / w.sum(), atol=0.02)  # ~6 sigma


def test_multinomial_without_replacement_never_repeats_and_picks_heavy_classes_first():
    weights = minitorch.tensor([1.0, 1000.0, 0.0, 1.0])
    picks = [minitorch.multinomial(weights, 3).tolist() for _ in range(200)]
    assert all(len(set(p)) == 3 for p in picks)
    assert sum(p[0] == 1 for p in picks) > 190  # P(first pick is class 1) = 1000 / 1002
    assert all(2 not in p[:2] for p in picks)  # the zero weight comes only after the others
    assert minitorch.multinomial(weights, 1).shape == (1,)


@pytest.mark.parametrize(
    "weights, n, replacement, error, match",
    [
        (minitorch.tensor([1, 2]), 1, False, DTypeError, "floating-point"),
        (minitorch.ones(2, 2, 2), 1, False, ShapeError, "1 or 2 dim"),
        (minitorch.ones(3), 0, True, InvalidArgumentError, "n_sample <= 0"),
        (minitorch.ones(3), 4, False, InvalidArgumentError, "without replacement"),
        (minitorch.tensor([1.0, -1.0]), 1, True, InvalidArgumentError, "element < 0"),
        (minitorch.tensor([1.0, float("nan")]), 1, True, InvalidArgumentError, "nan"),
        (minitorch.zeros(3), 1, True, InvalidArgumentError, "sum of probabilities"),
    ],
)
def test_multinomial_refuses_what_pytorch_refuses(weights, n, replacement, error, match):
    with pytest.raises(error, match=match):
        minitorch.multinomial(weights, n, replacement)


# ---- dtype aliases, cuda, inference_mode -----------------------------------------------------


def test_the_dtype_aliases_are_the_same_objects():
    assert minitorch.long is minitorch.int64 and minitorch.int is minitorch.int32
    assert minitorch.float is minitorch.float32 and minitorch.double is minitorch.float64
    assert minitorch.zeros(2, dtype=minitorch.long).dtype is minitorch.int64
    assert minitorch.half is minitorch.float16


def test_cuda_answers_as_pytorch_on_this_machine():
    from minitorch.device import cuda_is_available

    available = cuda_is_available()
    assert minitorch.cuda.is_available() is available
    assert (minitorch.cuda.device_count() > 0) is available
    assert minitorch.cuda.current_device() == 0
    minitorch.manual_seed(5)
    expected = minitorch.rand(3).tolist()
    minitorch.manual_seed(5)
    minitorch.cuda.manual_seed_all(7)
    minitorch.cuda.manual_seed(7)
    minitorch.cuda.synchronize()
    if not available:  # ignored without CUDA: the CPU stream is untouched
        assert minitorch.rand(3).tolist() == expected
    with pytest.raises(ArgumentTypeError, match="seed"):
        minitorch.cuda.manual_seed("0")


def test_inference_mode_records_nothing_as_a_block_and_as_a_decorator():
    w = minitorch.ones(2, requires_grad=True)
    with minitorch.inference_mode():
        assert not (w * 2).requires_grad
    assert minitorch.is_grad_enabled()

    @minitorch.inference_mode
    def bare():
        return w * 2

    @minitorch.inference_mode()
    def called():
        return w * 2

    @minitorch.inference_mode(False)
    def off():
        return w * 2

    assert not bare().requires_grad and not called().requires_grad
    assert off().requires_grad
    with minitorch.inference_mode(False):
        assert (w * 2).requires_grad
