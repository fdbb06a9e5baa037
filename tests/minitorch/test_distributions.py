"""torch.distributions: Normal, Bernoulli, Categorical against their formulas (numpy), sample
statistics, the reparameterised gradient, finite differences, shapes and PyTorch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from minitorch.distributions import Bernoulli, Categorical, Distribution, Normal

RNG = np.random.default_rng(0)


def t(array, requires_grad: bool = False):
    return minitorch.tensor(np.asarray(array), requires_grad=requires_grad)


def finite_difference(f, a: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d sum(f(a)) / da by central differences."""
    grad = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (np.sum(f(up)) - np.sum(f(down))) / (2 * eps)
    return grad


# ---- Normal ------------------------------------------------------------------------------


def np_normal_log_prob(x, loc, scale):
    return -((x - loc) ** 2) / (2 * scale**2) - np.log(scale) - 0.5 * np.log(2 * np.pi)


def test_normal_formulas_shapes_and_gradients():
    loc, scale = RNG.standard_normal(3), RNG.uniform(0.5, 2.0, 3)
    x = RNG.standard_normal((2, 3))
    dist = Normal(t(loc, True), t(scale, True))
    assert dist.batch_shape == (3,) and dist.event_shape == ()
    np.testing.assert_allclose(
        dist.log_prob(t(x)).detach().numpy(), np_normal_log_prob(x, loc, scale), rtol=1e-12
    )
    np.testing.assert_allclose(
        dist.entropy().detach().numpy(), 0.5 + 0.5 * np.log(2 * np.pi) + np.log(scale), rtol=1e-12
    )
    np.testing.assert_allclose(
        dist.cdf(t(x)).detach().numpy(),
        np.vectorize(lambda v, m, s: 0.5 * (1 + math.erf((v - m) / (s * math.sqrt(2)))))(
            x, loc, scale
        ),
        rtol=1e-12,
    )
    assert dist.mean is dist.loc and dist.stddev is dist.scale
    np.testing.assert_allclose(dist.variance.detach().numpy(), scale**2)
    loc_grad, scale_grad = minitorch.autograd.grad(
        dist.log_prob(t(x)).sum(), [dist.loc, dist.scale]
    )
    np.testing.assert_allclose(
        loc_grad.numpy(),
        finite_difference(lambda m: np_normal_log_prob(x, m, scale), loc),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        scale_grad.numpy(),
        finite_difference(lambda s: np_normal_log_prob(x, loc, s), scale),
        rtol=1e-6,
    )


def test_normal_samples_and_the_reparameterised_gradient():
    minitorch.manual_seed(0)
    loc = minitorch.tensor([1.0, -2.0], requires_grad=True)
    scale = minitorch.tensor([0.5, 3.0], requires_grad=True)
    dist = Normal(loc, scale)
    draws = dist.sample((20000,))
    assert tuple(draws.shape) == (20000, 2) and not draws.requires_grad
    np.testing.assert_allclose(draws.numpy().mean(0), [1.0, -2.0], atol=0.06)
    np.testing.assert_allclose(draws.numpy().std(0), [0.5, 3.0], rtol=0.03)
    r = dist.rsample((5,))
    assert r.requires_grad and tuple(r.shape) == (5, 2)
    loc_grad, scale_grad = minitorch.autograd.grad(r.sum(), [loc, scale])
    np.testing.assert_allclose(loc_grad.numpy(), [5.0, 5.0])  # d(loc + eps scale)/d loc
    eps = (r.detach().numpy() - [1.0, -2.0]) / [0.5, 3.0]
    np.testing.assert_allclose(scale_grad.numpy(), eps.sum(0), rtol=1e-5)


def test_normal_takes_numbers_and_checks_its_scale():
    dist = Normal(0.0, 1.0)
    assert dist.loc.dtype is minitorch.float32 and dist.batch_shape == ()
    assert tuple(dist.sample().shape) == () and tuple(dist.sample((2, 3)).shape) == (2, 3)
    assert repr(dist) == "Normal(loc: 0.0, scale: 1.0)"
    assert Normal(minitorch.zeros(2, dtype=minitorch.float64), 1.0).scale.dtype is minitorch.float64
    with pytest.raises(ValueError, match="scale .* to satisfy the constraint GreaterThan"):
        Normal(0.0, minitorch.tensor([1.0, 0.0]))
    Normal(0.0, minitorch.tensor([1.0, 0.0]), validate_args=False)  # allowed, unchecked


# ---- Bernoulli ---------------------------------------------------------------------------


def test_bernoulli_probs_and_logits_agree_with_the_formulas():
    p = np.array([0.1, 0.5, 0.9])
    logits = np.log(p / (1 - p))
    for dist in (Bernoulli(probs=t(p)), Bernoulli(logits=t(logits))):
        np.testing.assert_allclose(dist.probs.numpy(), p, rtol=1e-9)
        np.testing.assert_allclose(dist.logits.numpy(), logits, rtol=1e-9, atol=1e-12)
        x = np.array([1.0, 0.0, 1.0])
        np.testing.assert_allclose(
            dist.log_prob(t(x)).numpy(), x * np.log(p) + (1 - x) * np.log(1 - p), rtol=1e-9
        )
        np.testing.assert_allclose(
            dist.entropy().numpy(), -(p * np.log(p) + (1 - p) * np.log(1 - p)), rtol=1e-9
        )
        np.testing.assert_allclose(dist.variance.numpy(), p * (1 - p), rtol=1e-9)
    big = Bernoulli(logits=minitorch.tensor([100.0, -100.0]))  # no overflow
    assert np.all(np.isfinite(big.log_prob(minitorch.tensor([0.0, 1.0])).numpy()))


def test_bernoulli_samples_gradient_and_errors():
    minitorch.manual_seed(1)
    logits = minitorch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    dist = Bernoulli(logits=logits)
    draws = dist.sample((20000,))
    assert draws.dtype is minitorch.float32 and set(np.unique(draws.numpy())) <= {0.0, 1.0}
    np.testing.assert_allclose(
        draws.numpy().mean(0), 1 / (1 + np.exp([1.0, 0.0, -2.0])), atol=0.015
    )
    (grad,) = minitorch.autograd.grad(dist.log_prob(minitorch.ones(3)).sum(), [logits])
    np.testing.assert_allclose(
        grad.numpy(), 1 - 1 / (1 + np.exp([1.0, 0.0, -2.0])), rtol=1e-6
    )  # d log sigmoid(l) / dl = 1 - sigmoid(l)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        Bernoulli(probs=minitorch.tensor(0.5), logits=minitorch.tensor(0.0))
    with pytest.raises(ValueError, match="probs .* Interval"):
        Bernoulli(probs=minitorch.tensor([1.5]))
    with pytest.raises(ValueError, match="within the support"):
        dist.log_prob(minitorch.tensor([0.5, 0.0, 1.0]))


# ---- Categorical -------------------------------------------------------------------------


def test_categorical_normalises_and_scores():
    weights = np.array([[1.0, 3.0, 0.0], [2.0, 2.0, 4.0]])
    p = weights / weights.sum(-1, keepdims=True)
    dist = Categorical(probs=t(weights))
    assert dist.batch_shape == (2,) and dist.event_shape == ()
    np.testing.assert_allclose(dist.probs.numpy(), p)
    values = np.array([[1, 2], [0, 2], [1, 0]])  # (3, 2): broadcast against the batch
    np.testing.assert_allclose(
        dist.log_prob(minitorch.tensor(values)).numpy(), np.log(p[[0, 1], values]), rtol=1e-9
    )
    np.testing.assert_allclose(
        dist.entropy().numpy(),
        [-(0.25 * np.log(0.25) + 0.75 * np.log(0.75)), -(0.5 * np.log(0.25) + 0.5 * np.log(0.5))],
        rtol=1e-9,
    )
    logits = RNG.standard_normal((2, 4))
    from_logits = Categorical(logits=t(logits))
    shifted = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    np.testing.assert_allclose(from_logits.logits.numpy(), shifted, rtol=1e-9)
    np.testing.assert_allclose(from_logits.probs.numpy(), np.exp(shifted), rtol=1e-9)
    assert from_logits.log_prob(minitorch.tensor(3)).shape == (2,)
    assert np.isnan(dist.mean.numpy()).all()


def test_categorical_samples_and_score_function_gradient():
    minitorch.manual_seed(2)
    logits = minitorch.tensor([[0.0, 1.0, -1.0], [2.0, 0.0, 0.0]], requires_grad=True)
    dist = Categorical(logits=logits)
    draws = dist.sample((30000,))
    assert draws.dtype is minitorch.int64 and tuple(draws.shape) == (30000, 2)
    p = dist.probs.detach().numpy()
    for b in range(2):
        counts = np.bincount(draws.numpy()[:, b], minlength=3) / 30000
        np.testing.assert_allclose(counts, p[b], atol=0.012)
    action = minitorch.tensor([1, 0])
    (grad,) = minitorch.autograd.grad(dist.log_prob(action).sum(), [logits], retain_graph=True)
    np.testing.assert_allclose(grad.numpy(), np.eye(3)[[1, 0]] - p, rtol=1e-5, atol=1e-7)
    (grad,) = minitorch.autograd.grad(dist.entropy().sum(), [logits])
    log_p = np.log(p)
    entropy = -(p * log_p).sum(-1, keepdims=True)
    np.testing.assert_allclose(grad.numpy(), -p * (log_p + entropy), rtol=1e-4, atol=1e-6)


def test_categorical_errors_and_base_class():
    with pytest.raises(ValueError, match="at least one-dimensional"):
        Categorical(probs=minitorch.tensor(0.5))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        Categorical()
    dist = Categorical(probs=minitorch.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="within the support"):
        dist.log_prob(minitorch.tensor(2))
    with pytest.raises(minitorch.MinitorchError, match="has no rsample"):
        dist.rsample()
    assert isinstance(dist, Distribution) and repr(dist) == "Categorical(probs: torch.Size([2]))"
    Distribution.set_default_validate_args(False)
    try:
        Categorical(probs=minitorch.tensor([-1.0, 2.0]))  # unchecked
    finally:
        Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="probs .* Simplex"):
        Categorical(probs=minitorch.tensor([-1.0, 2.0]))


@pytest.mark.capture
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_compiled_programs_using_distributions_equal_eager(backend):
    # Making a distribution object is a graph break (capture does not build user objects);
    # the program still gives eager's values and gradients.
    logits = minitorch.randn(4, 3, requires_grad=True)
    actions = minitorch.tensor([0, 2, 1, 1])
    loc = minitorch.randn(4, requires_grad=True)

    def loss(logits, actions, loc):
        policy = Categorical(logits=logits)
        value = Normal(loc, 2.0)
        return (
            -(policy.log_prob(actions) + 0.1 * policy.entropy()).mean()
            - value.log_prob(minitorch.ones(4)).sum()
        )

    eager = loss(logits, actions, loc)
    eager_grads = minitorch.autograd.grad(eager, [logits, loc])
    compiled = minitorch.compile(loss, backend=backend)(logits, actions, loc)
    np.testing.assert_allclose(compiled.item(), eager.item(), rtol=1e-6)
    for got, want in zip(minitorch.autograd.grad(compiled, [logits, loc]), eager_grads):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-7)
