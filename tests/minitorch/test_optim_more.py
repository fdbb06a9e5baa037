"""optim.Adadelta (pytorch/examples' MNIST) and optim.RMSprop (the "Learning PyTorch with
Examples" tutorial) against numpy versions of PyTorch's formulas."""

import numpy as np
import pytest

import minitorch
from minitorch.errors import InvalidArgumentError
from minitorch.nn import Parameter
from minitorch.optim import Adadelta, RMSprop


def numpy_adadelta(theta, grads, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    """θ after each step of PyTorch's Adadelta."""
    u = np.zeros_like(theta)
    acc = np.zeros_like(theta)
    out = []
    for g in grads:
        g = (-g if maximize else g) + weight_decay * theta
        u = rho * u + (1 - rho) * g**2
        delta = np.sqrt(acc + eps) / np.sqrt(u + eps) * g
        acc = rho * acc + (1 - rho) * delta**2
        theta = theta - lr * delta
        out.append(theta)
    return out


def numpy_rmsprop(
    theta,
    grads,
    lr=1e-2,
    alpha=0.99,
    eps=1e-8,
    weight_decay=0.0,
    momentum=0.0,
    centered=False,
    maximize=False,
):
    """θ after each step of PyTorch's RMSprop."""
    v, g_avg, b = np.zeros_like(theta), np.zeros_like(theta), np.zeros_like(theta)
    out = []
    for g in grads:
        g = (-g if maximize else g) + weight_decay * theta
        v = alpha * v + (1 - alpha) * g**2
        if centered:
            g_avg = alpha * g_avg + (1 - alpha) * g
            avg = np.sqrt(v - g_avg**2) + eps
        else:
            avg = np.sqrt(v) + eps
        if momentum > 0:
            b = momentum * b + g / avg
            theta = theta - lr * b
        else:
            theta = theta - lr * g / avg
        out.append(theta)
    return out


CASES = [
    (Adadelta, numpy_adadelta, dict()),
    (Adadelta, numpy_adadelta, dict(lr=0.5, rho=0.95)),
    (Adadelta, numpy_adadelta, dict(eps=1e-3, weight_decay=0.1)),
    (Adadelta, numpy_adadelta, dict(maximize=True)),
    (RMSprop, numpy_rmsprop, dict()),
    (RMSprop, numpy_rmsprop, dict(lr=1e-3, alpha=0.9)),
    (RMSprop, numpy_rmsprop, dict(momentum=0.9, weight_decay=0.1)),
    (RMSprop, numpy_rmsprop, dict(centered=True, momentum=0.5, maximize=True)),
]


@pytest.mark.parametrize("method, formula, hyper", CASES, ids=lambda c: str(c))
def test_matches_formula(method, formula, hyper):
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(3, 4))
    grads = [rng.normal(size=(3, 4)) * scale for scale in (1.0, 0.1, 3.0, 1.0)]
    p = Parameter(minitorch.tensor(theta))
    opt = method([p], **hyper)
    for g, want in zip(grads, formula(theta, grads, **hyper)):
        p.grad = minitorch.tensor(g)
        opt.step()
        np.testing.assert_allclose(p.detach().numpy(), want, rtol=1e-12)


def test_adadelta_state_round_trips_and_bad_rho_is_refused():
    p = Parameter(minitorch.ones(2))
    opt = Adadelta([p])
    p.grad = minitorch.ones(2)
    opt.step()
    other = Adadelta([p])
    other.load_state_dict(opt.state_dict())
    assert other.state_dict()["state"][0]["step"] == 1
    with pytest.raises(InvalidArgumentError, match="rho"):
        Adadelta([p], rho=1.5)
    with pytest.raises(InvalidArgumentError, match="alpha"):
        RMSprop([p], alpha=-1)
