"""Losses against numpy: MSELoss, NLLLoss, CrossEntropyLoss (weights, ignore_index,
reductions, label smoothing, probability targets, extra dims), with their gradients."""

from __future__ import annotations

import numpy as np
import pytest
from nn_testing import check_gradients, t

import minitorch
from minitorch import DTypeError, MinitorchError, ShapeError, nn

F = nn.functional
RNG = np.random.default_rng(1)


def _np_log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _np_cross_entropy(
    x, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0
):
    """PyTorch's documented formula for class-index targets, sample by sample."""
    shape = np.shape(target)
    x = x if x.ndim > 1 else x[None]
    target = np.asarray(target).reshape(x.shape[0], *x.shape[2:])
    classes = x.shape[1]
    log_p = _np_log_softmax(x, 1)
    w = np.ones(classes) if weight is None else weight
    losses, weights = [], []
    for n in range(x.shape[0]):
        for pos in np.ndindex(x.shape[2:]):
            y = target[(n, *pos)]
            if y == ignore_index:
                losses.append(0.0)
                weights.append(0.0)
                continue
            lp = log_p[(n, slice(None), *pos)]
            q = np.full(classes, label_smoothing / classes)
            q[y] += 1 - label_smoothing
            losses.append(-np.sum(w * lp * q))
            weights.append(w[y])
    losses = np.array(losses)
    if reduction == "none":
        return losses.reshape(shape)
    return losses.sum() if reduction == "sum" else losses.sum() / np.sum(weights)


# ---- MSE -------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    squares = (a - b) ** 2
    expected = {"mean": squares.mean(), "sum": squares.sum(), "none": squares}[reduction]
    out = nn.MSELoss(reduction=reduction)(t(a), t(b))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    check_gradients(
        lambda a, b: F.mse_loss(a, b, reduction=reduction),
        lambda a, b: np.asarray(
            {"mean": ((a - b) ** 2).mean(), "sum": ((a - b) ** 2).sum(), "none": (a - b) ** 2}[
                reduction
            ]
        ),
        [a, b],
    )


def test_mse_loss_legacy_flags_and_bad_reduction():
    a, b = minitorch.ones(2), minitorch.zeros(2)
    assert F.mse_loss(a, b, size_average=False).item() == 2.0
    assert F.mse_loss(a, b, reduce=False).shape == (2,)
    with pytest.raises(MinitorchError, match="not a valid value for reduction"):
        nn.MSELoss(reduction="avg")


# ---- cross entropy ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"reduction": "sum"},
        {"reduction": "none"},
        {"weight": np.array([0.2, 1.0, 3.0, 0.5])},
        {"ignore_index": 2},
        {"weight": np.array([0.2, 1.0, 3.0, 0.5]), "ignore_index": 1, "reduction": "mean"},
        {"label_smoothing": 0.1},
        {"label_smoothing": 0.2, "weight": np.array([0.2, 1.0, 3.0, 0.5]), "ignore_index": 0},
        {"label_smoothing": 0.3, "reduction": "none"},
    ],
)
def test_cross_entropy_matches_pytorch_formula(kwargs):
    x = RNG.normal(size=(6, 4)) * 3
    target = np.array([0, 1, 2, 3, 2, 1])
    expected = _np_cross_entropy(x, target, **kwargs)
    weight = kwargs.get("weight")
    loss = nn.CrossEntropyLoss(**{**kwargs, "weight": None if weight is None else t(weight)})
    out = loss(t(x), minitorch.tensor(target))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    check_gradients(
        lambda x: F.cross_entropy(
            x,
            minitorch.tensor(target),
            **{**kwargs, "weight": None if weight is None else t(weight)},
        ),
        lambda x: np.asarray(_np_cross_entropy(x, target, **kwargs)),
        [x],
    )


def test_cross_entropy_with_extra_dims_and_one_unbatched_sample():
    x = RNG.normal(size=(2, 3, 4, 5))  # (N, C, d1, d2)
    target = RNG.integers(0, 3, size=(2, 4, 5))
    out = F.cross_entropy(t(x), minitorch.tensor(target), reduction="none")
    np.testing.assert_allclose(
        out.numpy(), _np_cross_entropy(x, target, reduction="none"), rtol=1e-10
    )
    single = RNG.normal(size=4)
    np.testing.assert_allclose(
        F.cross_entropy(t(single), minitorch.tensor(2)).numpy(),
        -_np_log_softmax(single, 0)[2],
        rtol=1e-12,
    )


def test_cross_entropy_with_probability_targets():
    x = RNG.normal(size=(3, 5))
    p = RNG.uniform(size=(3, 5))
    p /= p.sum(1, keepdims=True)
    expected = -(p * _np_log_softmax(x, 1)).sum(1).mean()
    np.testing.assert_allclose(F.cross_entropy(t(x), t(p)).numpy(), expected, rtol=1e-12)
    smoothed = p * 0.8 + 0.2 / 5
    np.testing.assert_allclose(
        F.cross_entropy(t(x), t(p), label_smoothing=0.2).numpy(),
        -(smoothed * _np_log_softmax(x, 1)).sum(1).mean(),
        rtol=1e-12,
    )


def test_cross_entropy_is_stable_for_large_logits():
    out = F.cross_entropy(
        minitorch.tensor([[1000.0, 0.0], [0.0, -1000.0]]), minitorch.tensor([1, 0])
    )
    np.testing.assert_allclose(out.item(), 500.0, rtol=1e-6)


def test_cross_entropy_errors_name_shapes_and_dtypes():
    x = minitorch.randn(3, 4)
    with pytest.raises(ShapeError, match=r"\(3, 4\).*\(3,\).*\(2,\)"):
        F.cross_entropy(x, minitorch.tensor([0, 1]))
    with pytest.raises(DTypeError, match="float32|bool"):
        F.nll_loss(x, minitorch.tensor([True, False, True]))
    with pytest.raises(ShapeError, match=r"\(3, 5\).*\(3, 4\)"):
        F.cross_entropy(x, minitorch.rand(3, 5))


# ---- NLL -------------------------------------------------------------------------------------


def test_nll_loss_picks_the_target_log_probability():
    log_p = _np_log_softmax(RNG.normal(size=(4, 3)), 1)
    target = np.array([2, 0, -100, 1])
    picked = -log_p[[0, 1, 3], [2, 0, 1]]
    np.testing.assert_allclose(
        nn.NLLLoss()(t(log_p), minitorch.tensor(target)).numpy(), picked.mean(), rtol=1e-12
    )
    none = F.nll_loss(t(log_p), minitorch.tensor(target), reduction="none").numpy()
    np.testing.assert_allclose(none, [picked[0], picked[1], 0.0, picked[2]], rtol=1e-12)
