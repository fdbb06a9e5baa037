"""nn.utils.clip_grad_norm_ and clip_grad_value_ against numpy: the total norm over all the
gradients (2, 1, 3, inf), the scale max_norm / (norm + 1e-6) when above, PyTorch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn.utils import clip_grad_norm_, clip_grad_value_

RNG = np.random.default_rng(3)


def _params_with_grads(*shapes):
    params, grads = [], []
    for shape in shapes:
        p = nn.Parameter(minitorch.zeros(*shape, dtype=minitorch.float64))
        g = RNG.normal(size=shape)
        p.grad = minitorch.tensor(g)
        params.append(p)
        grads.append(g)
    return params, grads


def _np_total_norm(grads, p):
    flat = np.concatenate([g.ravel() for g in grads])
    return np.abs(flat).max() if p == math.inf else np.sum(np.abs(flat) ** p) ** (1 / p)


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.0, math.inf, "inf"])
def test_clip_grad_norm_scales_every_grad_by_one_factor(norm_type):
    p_value = float(norm_type)
    params, grads = _params_with_grads((3, 4), (5,), ())
    total = _np_total_norm(grads, p_value)
    max_norm = total / 3
    returned = clip_grad_norm_(params, max_norm, norm_type=norm_type)
    assert isinstance(returned, minitorch.Tensor) and returned.ndim == 0
    np.testing.assert_allclose(returned.item(), total, rtol=1e-12)
    scale = max_norm / (total + 1e-6)
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), g * scale, rtol=1e-12)
    np.testing.assert_allclose(
        _np_total_norm([p.grad.numpy() for p in params], p_value), max_norm, rtol=1e-5
    )


def test_small_gradients_are_left_alone_and_a_single_tensor_works():
    params, grads = _params_with_grads((4,))
    total = clip_grad_norm_(params[0], max_norm=1e6)
    np.testing.assert_allclose(total.item(), np.linalg.norm(grads[0]), rtol=1e-12)
    np.testing.assert_array_equal(params[0].grad.numpy(), grads[0])


def test_parameters_without_grad_count_for_nothing():
    params, grads = _params_with_grads((3,))
    bare = nn.Parameter(minitorch.ones(2))
    total = clip_grad_norm_([bare, *params], 1.0)
    np.testing.assert_allclose(total.item(), np.linalg.norm(grads[0]), rtol=1e-12)
    assert bare.grad is None
    assert clip_grad_norm_([bare], 1.0).item() == 0.0


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf * 0, as PyTorch's
def test_non_finite_norm_raises_only_when_asked():
    params, _ = _params_with_grads((3,))
    params[0].grad = minitorch.tensor([1.0, math.inf, 0.0], dtype=minitorch.float64)
    with pytest.raises(RuntimeError, match="non-finite, so it cannot be clipped"):
        clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    assert math.isinf(clip_grad_norm_(params, 1.0).item())


def test_works_after_backward_on_a_model():
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    model(minitorch.randn(8, 3)).sum().backward()  # sum's backward: broadcast gradients
    before = [p.grad.numpy().copy() for p in model.parameters()]
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    np.testing.assert_allclose(total.item(), _np_total_norm(before, 2.0), rtol=1e-5)
    for p, g in zip(model.parameters(), before):
        np.testing.assert_allclose(p.grad.numpy(), g * 0.5 / (total.item() + 1e-6), rtol=1e-5)
        assert p.grad.dtype is minitorch.float32


def test_clip_grad_value_clamps_each_element():
    params, grads = _params_with_grads((4, 3), (2,))
    assert clip_grad_value_(params, 0.5) is None
    for p, g in zip(params, grads):
        np.testing.assert_array_equal(p.grad.numpy(), np.clip(g, -0.5, 0.5))
