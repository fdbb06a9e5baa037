"""optim.Adadelta (pytorch/examples' MNIST optimizer) against numpy's PyTorch formula."""

import numpy as np
import pytest

import minitorch
from minitorch.errors import InvalidArgumentError
from minitorch.nn import Parameter
from minitorch.optim import Adadelta


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


@pytest.mark.parametrize("hyper", [
    dict(), dict(lr=0.5, rho=0.95), dict(eps=1e-3, weight_decay=0.1), dict(maximize=True),
], ids=str)
def test_adadelta_matches_formula(hyper):
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(3, 4))
    grads = [rng.normal(size=(3, 4)) * scale for scale in (1.0, 0.1, 3.0, 1.0)]
    p = Parameter(minitorch.tensor(theta))
    opt = Adadelta([p], **hyper)
    for g, want in zip(grads, numpy_adadelta(theta, grads, **hyper)):
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
