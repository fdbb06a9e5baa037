"""Bad input raises a minitorch error that names the op the user called, at the user's line.

Each case is a call PyTorch refuses, with the exception minitorch must raise: a MinitorchError
subclass that is also the builtin a Python user would expect (a ValueError for a bad shape, a
TypeError for a wrong type, a MemoryError for an allocation too large). numpy's own errors
(ValueError `negative dimensions are not allowed`, OverflowError, MemoryError, AttributeError)
must not escape, and nothing may be silently accepted (`randn(dtype=int64)` used to round
normal samples to integers). The second half checks that the valid input next to each case
still gives PyTorch's (or numpy's) answer.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch as M
import minitorch.nn.functional as F
from minitorch.errors import (
    ArgumentTypeError,
    DTypeError,
    IndexOutOfRangeError,
    InvalidArgumentError,
    MinitorchError,
    OutOfMemoryError,
    ShapeError,
)


def _set_grad(t, g):
    t.grad = g


def _write(t, key, value):
    t[key] = value


_BOOL3 = M.tensor([True, False, True])

# (id, the bad call, the error it must raise, the op its message must name)
CASES = [
    # factories: sizes, dtypes, memory ([Note: checking a factory's arguments])
    ("zeros-negative", lambda: M.zeros(-1, 3), ShapeError, "zeros()"),
    ("ones-negative", lambda: M.ones(-1), ShapeError, "ones()"),
    ("empty-negative", lambda: M.empty(2, -3), ShapeError, "empty()"),
    ("full-negative", lambda: M.full((-2,), 1.0), ShapeError, "full()"),
    ("rand-negative", lambda: M.rand(-1), ShapeError, "rand()"),
    ("randn-negative", lambda: M.randn(2, -1), ShapeError, "randn()"),
    ("randint-negative", lambda: M.randint(0, 3, (-1,)), ShapeError, "randint()"),
    ("zeros-float-size", lambda: M.zeros(2.5), ArgumentTypeError, "zeros()"),
    ("zeros-none-size", lambda: M.zeros((2, None)), ArgumentTypeError, "zeros()"),
    ("zeros-str-dtype", lambda: M.zeros(2, dtype="float32"), ArgumentTypeError, "zeros()"),
    ("from-numpy-scalar", lambda: M.from_numpy(np.float32(1.0)), ArgumentTypeError, "from_numpy()"),
    ("full-int-size", lambda: M.full(3, 1.0), ArgumentTypeError, "full()"),
    ("full-str-value", lambda: M.full((2,), "a"), ArgumentTypeError, "full()"),
    ("full-overflow", lambda: M.full((2,), 2**70), InvalidArgumentError, "full()"),
    ("zeros-huge", lambda: M.zeros(10**7, 10**7), OutOfMemoryError, "zeros()"),
    ("ones-beyond-address-space", lambda: M.ones(2**62, 2**62), OutOfMemoryError, "ones()"),
    ("mul-huge-result", lambda: M.ones(300_000, 1) * M.ones(1, 300_000), OutOfMemoryError, "mul:"),
    ("arange-huge", lambda: M.arange(10**13), OutOfMemoryError, "arange()"),
    ("arange-zero-step", lambda: M.arange(0, 10, 0), InvalidArgumentError, "arange()"),
    ("arange-wrong-sign", lambda: M.arange(10, 0), InvalidArgumentError, "arange()"),
    ("arange-nan", lambda: M.arange(float("nan")), InvalidArgumentError, "arange()"),
    ("randn-int", lambda: M.randn(3, dtype=M.int64), DTypeError, "randn()"),
    ("rand-bool", lambda: M.rand(3, dtype=M.bool), DTypeError, "rand()"),
    ("randn_like-int", lambda: M.randn_like(M.zeros(3, dtype=M.int64)), DTypeError, "randn_like()"),
    ("rand_like-int", lambda: M.rand_like(M.zeros(3, dtype=M.int32)), DTypeError, "rand_like()"),
    ("zeros_like-number", lambda: M.zeros_like(3), DTypeError, "zeros_like()"),
    ("randint-overflow", lambda: M.randint(0, 2**70, (2,)), InvalidArgumentError, "randint()"),
    # tensor(data)
    ("tensor-overflow", lambda: M.tensor([2**63]), InvalidArgumentError, "tensor()"),
    ("tensor-underflow", lambda: M.tensor([-(2**63) - 1]), InvalidArgumentError, "tensor()"),
    (
        "tensor-int32-overflow",
        lambda: M.tensor([2**40], dtype=M.int32),
        InvalidArgumentError,
        "tensor()",
    ),
    ("tensor-ragged", lambda: M.tensor([[1, 2], [3]]), ShapeError, "tensor()"),
    ("tensor-ragged-deep", lambda: M.tensor([[[1], [2]], [[1], 2]]), ShapeError, "tensor()"),
    ("tensor-str", lambda: M.tensor("abc"), DTypeError, "tensor()"),
    ("tensor-none", lambda: M.tensor([1, None]), DTypeError, "tensor()"),
    ("tensor-tensors", lambda: M.tensor([M.zeros(2), M.zeros(2)]), ShapeError, "tensor()"),
    ("tensor-str-dtype", lambda: M.tensor([1], dtype="int64"), ArgumentTypeError, "tensor()"),
    # views
    ("view-negative", lambda: M.zeros(6).view(-2, -3), ShapeError, "view"),
    ("reshape-negative", lambda: M.zeros(6).reshape(-2, 3), ShapeError, "reshape"),
    ("reshape-float", lambda: M.zeros(6).reshape(2.0, 3), ArgumentTypeError, "reshape"),
    ("expand-negative", lambda: M.zeros(1, 3).expand(-2, 3), ShapeError, "expand"),
    # grad assignment
    ("grad-shape", lambda: _set_grad(M.zeros(3), M.zeros(4)), ShapeError, "assigned grad"),
    (
        "grad-dtype",
        lambda: _set_grad(M.zeros(3), M.zeros(3, dtype=M.float64)),
        DTypeError,
        "assigned grad",
    ),
    ("grad-number", lambda: _set_grad(M.zeros(3), 3.0), ArgumentTypeError, "assigned grad"),
    # messages name the op the user called, not the ops it runs
    (
        "cross_entropy-target",
        lambda: F.cross_entropy(M.randn(2, 3), M.tensor([0, 5])),
        IndexOutOfRangeError,
        "cross_entropy",
    ),
    (
        "cross_entropy-weight",
        lambda: F.cross_entropy(M.randn(2, 3), M.tensor([0, 1]), weight=M.ones(4)),
        ShapeError,
        "cross_entropy",
    ),
    (
        "nll_loss-target",
        lambda: F.nll_loss(M.randn(2, 3), M.tensor([-1, 0])),
        IndexOutOfRangeError,
        "nll_loss",
    ),
    ("copy_-shape", lambda: M.zeros(3).copy_(M.zeros(4)), ShapeError, "copy_"),
    (
        "setitem-shape",
        lambda: _write(M.zeros(3), slice(0, 2), M.zeros(3)),
        ShapeError,
        "__setitem__",
    ),
    ("linear-shapes", lambda: F.linear(M.zeros(2, 3), M.zeros(4, 5)), ShapeError, "linear"),
    (
        "linear-bias",
        lambda: F.linear(M.zeros(2, 3), M.zeros(4, 3), M.zeros(5)),
        ShapeError,
        "linear",
    ),
    (
        "conv2d-bias",
        lambda: F.conv2d(M.zeros(3, 5, 5), M.zeros(2, 3, 3, 3), M.zeros(3)),
        ShapeError,
        "conv2d",
    ),
    ("mse_loss-shapes", lambda: F.mse_loss(M.zeros(2), M.zeros(3)), ShapeError, "mse_loss"),
    (
        "batch_norm-stats",
        lambda: F.batch_norm(M.zeros(2, 3), M.zeros(4), M.ones(4)),
        ShapeError,
        "batch_norm",
    ),
    (
        "layer_norm-weight",
        lambda: F.layer_norm(M.zeros(2, 3), (3,), M.ones(4)),
        ShapeError,
        "layer_norm",
    ),
    (
        "clamp-overflow",
        lambda: M.zeros(3, dtype=M.int64).clamp(0, 2**70),
        InvalidArgumentError,
        "clamp",
    ),
    (
        "masked_fill-str",
        lambda: M.zeros(3).masked_fill(_BOOL3, "a"),
        ArgumentTypeError,
        "masked_fill",
    ),
    # writes into an expanded tensor, whose elements share memory
    (
        "expanded-setitem",
        lambda: _write(M.zeros(3).expand(4, 3), 0, 1.0),
        MinitorchError,
        "__setitem__",
    ),
    (
        "expanded-copy_",
        lambda: M.zeros(3).expand(4, 3).copy_(M.ones(4, 3)),
        MinitorchError,
        "copy_",
    ),
    ("expanded-fill_", lambda: M.zeros(3).expand(4, 3).fill_(1), MinitorchError, "fill_"),
    ("expanded-add_", lambda: M.zeros(3).expand(4, 3).add_(1), MinitorchError, "add_"),
    # operands, scalars, dims and dtypes
    ("add-str", lambda: M.add(M.zeros(3), "a"), ArgumentTypeError, "add"),
    ("pow-str", lambda: M.zeros(3).pow("a"), ArgumentTypeError, "pow"),
    ("where-none", lambda: M.where(_BOOL3, M.zeros(3), None), ArgumentTypeError, "where"),
    ("copy_-none", lambda: M.zeros(3).copy_(None), ArgumentTypeError, "copy_"),
    ("int64-add-overflow", lambda: M.zeros(3, dtype=M.int64) + 2**63, InvalidArgumentError, "add"),
    ("int32-mul-overflow", lambda: 2**40 * M.zeros(3, dtype=M.int32), InvalidArgumentError, "mul"),
    (
        "fill_-overflow",
        lambda: M.zeros(3, dtype=M.int64).fill_(2**70),
        InvalidArgumentError,
        "fill_",
    ),
    ("bool-sub", lambda: _BOOL3 - _BOOL3, DTypeError, "sub"),
    ("sum-float-dim", lambda: M.zeros(3).sum(dim=1.0), ArgumentTypeError, "sum"),
    ("unsqueeze-float-dim", lambda: M.zeros(3).unsqueeze(1.0), ArgumentTypeError, "unsqueeze"),
    ("topk-float-k", lambda: M.zeros(3).topk(1.5), ArgumentTypeError, "topk"),
    ("sum-str-dtype", lambda: M.zeros(3).sum(dtype="float64"), ArgumentTypeError, "sum"),
    ("to-str-dtype", lambda: M.zeros(3).to(dtype="float64"), ArgumentTypeError, "to()"),
    (
        "backward-str",
        lambda: M.ones(3, requires_grad=True).exp().backward("a"),
        ArgumentTypeError,
        "backward()",
    ),
    (
        "requires_grad_-str",
        lambda: M.zeros(3).requires_grad_("yes"),
        ArgumentTypeError,
        "requires_grad_()",
    ),
    ("sum-repeated-dim", lambda: M.zeros(2, 3).sum((0, -2)), ShapeError, "sum"),
    ("embedding-str-weight", lambda: F.embedding(M.tensor([1]), "w"), DTypeError, "embedding"),
    ("dropout-str-p", lambda: F.dropout(M.zeros(3), p="a"), ArgumentTypeError, "dropout"),
    ("manual_seed-str", lambda: M.manual_seed("a"), ArgumentTypeError, "manual_seed()"),
    ("item-many", lambda: M.zeros(3).item(), MinitorchError, "item()"),
    ("bool-many", lambda: bool(M.zeros(3)), MinitorchError, "item()"),
    (
        "numpy-requires-grad",
        lambda: M.zeros(3, requires_grad=True).numpy(),
        MinitorchError,
        "numpy()",
    ),
]


@pytest.mark.parametrize(("call", "error", "op"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_a_minitorch_error_naming_the_op(call, error, op):
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, MinitorchError)
    message = str(info.value)
    assert op in message
    assert "test_bad_input.py" in message  # the user's line


def test_out_of_memory_is_a_memory_error_and_a_runtime_error():
    """numpy raised MemoryError, PyTorch raises RuntimeError: code catching either works."""
    with pytest.raises(MemoryError, match=r"400000000000000 bytes.*\(10000000, 10000000\)"):
        M.zeros(10**7, 10**7)
    with pytest.raises(RuntimeError):
        M.zeros(10**7, 10**7)


# ---- the valid input next to each case keeps its answer ----------------------------------


@pytest.mark.parametrize(
    "args", [(5,), (2, 9), (0, 10, 3), (10, 0, -3), (0, 1, 0.25), (1.5, 4), (3, 3), (-2, 2, 0.5)]
)
def test_arange_matches_numpy(args):
    expected = np.arange(*args)
    got = M.arange(*args)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
    assert got.dtype is (M.int64 if expected.dtype.kind == "i" else M.float32)


@pytest.mark.parametrize(
    "data",
    [[-(2**63)], [2**63 - 1], [[1, 2], [3, 4]], [], [[], []], [True, 2], [1, 2.5], range(3), 7],
)
def test_tensor_of_valid_data_matches_numpy(data):
    expected = np.asarray(data)
    got = M.tensor(data)
    assert tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected.astype(got.dtype.np))


def test_tensor_of_one_element_tensors():
    assert M.tensor([M.tensor(1.5), M.tensor([2.5])]).tolist() == [1.5, 2.5]


def test_sizes_accept_what_has_index():
    assert M.zeros(np.int64(2), M.tensor(3)).shape == (2, 3)
    assert M.zeros(6).view(np.int64(2), -1).shape == (2, 3)
    assert M.zeros(()).shape == () and M.zeros(0, 3).shape == (0, 3)


def test_any_int_seeds_and_repeats():
    """PyTorch takes a negative seed too (modulo 2**64)."""
    M.manual_seed(-1)
    first = M.rand(3).tolist()
    M.manual_seed(-1)
    assert M.rand(3).tolist() == first


def test_random_float_dtypes_are_kept():
    assert M.randn(2, dtype=M.float64).dtype is M.float64
    assert M.rand_like(M.zeros(2, dtype=M.float64)).dtype is M.float64


def test_grad_of_the_right_kind_is_assigned():
    t = M.zeros(3, requires_grad=True)
    t.grad = M.ones(3)
    assert t.grad.tolist() == [1.0, 1.0, 1.0]
    t.grad = None
    assert t.grad is None


def test_int_scalars_that_fit_are_exact():
    big = 2**63 - 1
    assert (M.zeros(1, dtype=M.int64) + big).item() == big
    assert (M.zeros(1) + 2**70).item() == pytest.approx(float(2**70), rel=1e-6)


def test_cross_entropy_ignore_index_still_ignored():
    """A target equal to ignore_index is not out of bounds; the loss averages the others."""
    logits = M.tensor([[1.0, 2.0, 3.0], [0.5, 0.1, 0.2]])
    got = F.cross_entropy(logits, M.tensor([2, -100]))
    log_p = logits.numpy()[0] - np.log(np.exp(logits.numpy()[0]).sum())
    assert got.item() == pytest.approx(-log_p[2], rel=1e-6)


def test_linear_takes_a_broadcastable_bias():
    """PyTorch adds any bias that broadcasts to the output (a 0-d one, say)."""
    x, w = M.randn(2, 3), M.randn(4, 3)
    got = F.linear(x, w, M.tensor(1.5))
    np.testing.assert_allclose(got.numpy(), x.numpy() @ w.numpy().T + 1.5, rtol=1e-5)
