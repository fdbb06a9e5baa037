"""The elementwise losses against numpy references written from PyTorch's documentation:
l1, smooth_l1 (beta), huber (delta), binary_cross_entropy (weight, the -100 log floor) and
binary_cross_entropy_with_logits (pos_weight, weight, stable for any logit), with their
gradients by finite differences, reductions, errors and layer classes."""

from __future__ import annotations

import numpy as np
import pytest
from nn_testing import check_gradients, t

import minitorch
from minitorch import MinitorchError, ShapeError, nn

F = nn.functional
RNG = np.random.default_rng(5)
REDUCE = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}


def _np_smooth_l1(d, beta):
    return np.where(np.abs(d) < beta, 0.5 * d**2 / beta, np.abs(d) - 0.5 * beta)


def _np_huber(d, delta):
    return np.where(np.abs(d) < delta, 0.5 * d**2, delta * (np.abs(d) - 0.5 * delta))


def _np_bce(p, y, w=1.0):
    return -w * (y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log1p(-p), -100))


def _np_bce_logits(x, y, w=1.0, pos_weight=1.0):
    log_sigmoid, log_one_minus = -np.logaddexp(0, -x), -np.logaddexp(0, x)
    return -w * (pos_weight * y * log_sigmoid + (1 - y) * log_one_minus)


REGRESSION = {
    "l1": (lambda a, b, **kw: F.l1_loss(a, b, **kw), lambda d: np.abs(d)),
    "smooth_l1": (
        lambda a, b, **kw: F.smooth_l1_loss(a, b, beta=0.7, **kw),
        lambda d: _np_smooth_l1(d, 0.7),
    ),
    "huber": (lambda a, b, **kw: F.huber_loss(a, b, delta=0.7, **kw), lambda d: _np_huber(d, 0.7)),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(REGRESSION))
def test_regression_losses_match_numpy(name, reduction):
    fn, ref = REGRESSION[name]
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    out = fn(t(a), t(b), reduction=reduction)
    np.testing.assert_allclose(out.numpy(), REDUCE[reduction](ref(a - b)), rtol=1e-12)
    check_gradients(
        lambda x, y: fn(x, y, reduction=reduction),
        lambda x, y: np.asarray(REDUCE[reduction](ref(x - y))),
        [a, b],
    )


def test_smooth_l1_and_huber_relations_and_errors():
    a, b = RNG.normal(size=5), RNG.normal(size=5)
    l1 = F.l1_loss(t(a), t(b), reduction="none").numpy()
    np.testing.assert_allclose(F.smooth_l1_loss(t(a), t(b), beta=0.0, reduction="none").numpy(), l1)
    huber = F.huber_loss(t(a), t(b), delta=2.0, reduction="none").numpy()
    smooth = F.smooth_l1_loss(t(a), t(b), beta=2.0, reduction="none").numpy()
    np.testing.assert_allclose(huber, 2.0 * smooth, rtol=1e-12)
    with pytest.raises(ValueError, match="negative values for beta"):
        F.smooth_l1_loss(t(a), t(b), beta=-1.0)
    with pytest.raises(ValueError, match="non-positive values for delta"):
        F.huber_loss(t(a), t(b), delta=0.0)
    assert F.l1_loss(t(a), t(b), size_average=False).item() == pytest.approx(l1.sum())
    with pytest.warns(UserWarning, match="different to the input size"):
        F.l1_loss(t(a), minitorch.zeros(1))
    with pytest.raises(ShapeError):
        F.l1_loss(t(a), minitorch.zeros(4))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_matches_numpy(reduction):
    p, y = RNG.uniform(0.05, 0.95, size=(4, 3)), RNG.uniform(size=(4, 3))
    w = RNG.uniform(0.5, 2, size=(3,))
    out = F.binary_cross_entropy(t(p), t(y), weight=t(w), reduction=reduction)
    np.testing.assert_allclose(out.numpy(), REDUCE[reduction](_np_bce(p, y, w)), rtol=1e-12)
    check_gradients(
        lambda p, y: F.binary_cross_entropy(p, y, reduction=reduction),
        lambda p, y: np.asarray(REDUCE[reduction](_np_bce(p, y))),
        [p, y],
    )


def test_binary_cross_entropy_floors_each_log_at_minus_100():
    p = minitorch.tensor([0.0, 1.0, 0.0, 1.0, 1e-50], dtype=minitorch.float64, requires_grad=True)
    y = minitorch.tensor([1.0, 0.0, 0.0, 1.0, 1.0], dtype=minitorch.float64)
    loss = F.binary_cross_entropy(p, y, reduction="none")
    np.testing.assert_array_equal(loss.detach().numpy(), [100.0, 100.0, 0.0, 0.0, 100.0])
    loss.sum().backward()
    assert np.isfinite(p.grad.numpy()).all()


def test_binary_cross_entropy_errors():
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.binary_cross_entropy(minitorch.tensor([0.5, 1.5]), minitorch.tensor([0.0, 1.0]))
    with pytest.raises(ShapeError, match="must be the same as input size"):
        F.binary_cross_entropy(minitorch.tensor([0.5, 0.5]), minitorch.tensor([1.0]))
    with pytest.raises(MinitorchError, match="not a valid value for reduction"):
        F.binary_cross_entropy(minitorch.tensor([0.5]), minitorch.tensor([1.0]), reduction="x")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_with_logits_matches_numpy(reduction):
    x, y = RNG.normal(scale=3, size=(4, 3)), RNG.uniform(size=(4, 3))
    w, pos = RNG.uniform(0.5, 2, size=(4, 1)), RNG.uniform(0.5, 3, size=(3,))
    out = F.binary_cross_entropy_with_logits(
        t(x), t(y), weight=t(w), pos_weight=t(pos), reduction=reduction
    )
    np.testing.assert_allclose(
        out.numpy(), REDUCE[reduction](_np_bce_logits(x, y, w, pos)), rtol=1e-12
    )
    check_gradients(
        lambda x, y, pos: F.binary_cross_entropy_with_logits(
            x, y, pos_weight=pos, reduction=reduction
        ),
        lambda x, y, pos: np.asarray(REDUCE[reduction](_np_bce_logits(x, y, 1.0, pos))),
        [x, y, pos],
    )


def test_binary_cross_entropy_with_logits_is_stable_and_exact_at_zero():
    # Logits far out either way: no overflow; at 0 the gradient is sigmoid(0) - y, which a
    # formula built from |x| and max(-x, 0) gets wrong.
    x = np.array([-800.0, -40.0, 0.0, 0.0, 40.0, 800.0])
    y = np.array([1.0, 0.0, 1.0, 0.3, 1.0, 0.0])
    for dtype in (minitorch.float32, minitorch.float64):
        logits = minitorch.tensor(x, dtype=dtype, requires_grad=True)
        loss = F.binary_cross_entropy_with_logits(
            logits, minitorch.tensor(y, dtype=dtype), reduction="none"
        )
        assert loss.dtype is dtype
        # atol: log(1 + e^-40) rounds to 0 where PyTorch's log1p keeps 4e-18.
        np.testing.assert_allclose(
            loss.detach().numpy(), _np_bce_logits(x, y), rtol=1e-6, atol=1e-15
        )
        loss.sum().backward()
        sigmoid = np.exp(-np.logaddexp(0, -x))
        np.testing.assert_allclose(logits.grad.numpy(), sigmoid - y, rtol=1e-6, atol=1e-15)


def test_binary_loss_layers():
    x, y = RNG.normal(size=(2, 3)), RNG.uniform(size=(2, 3))
    pos = RNG.uniform(0.5, 2, size=(3,))
    layer = nn.BCEWithLogitsLoss(pos_weight=t(pos), reduction="sum")
    assert list(layer.state_dict()) == ["pos_weight"]
    np.testing.assert_allclose(
        layer(t(x), t(y)).numpy(), _np_bce_logits(x, y, 1.0, pos).sum(), rtol=1e-12
    )
    p = 1 / (1 + np.exp(-x))
    w = RNG.uniform(size=(2, 3))
    np.testing.assert_allclose(
        nn.BCELoss(weight=t(w))(t(p), t(y)).numpy(), _np_bce(p, y, w).mean(), rtol=1e-12
    )
    assert nn.L1Loss(reduction="none")(t(x), t(y)).shape == (2, 3)
    assert nn.SmoothL1Loss(beta=0.5).beta == 0.5 and nn.HuberLoss(delta=2.0).delta == 2.0
    np.testing.assert_allclose(
        nn.SmoothL1Loss(beta=0.5)(t(x), t(y)).numpy(), _np_smooth_l1(x - y, 0.5).mean(), rtol=1e-12
    )
    np.testing.assert_allclose(
        nn.HuberLoss(delta=2.0)(t(x), t(y)).numpy(), _np_huber(x - y, 2.0).mean(), rtol=1e-12
    )
