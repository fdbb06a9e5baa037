"""ReduceLROnPlateau against sequences worked out by hand from PyTorch's rules, and the
implementation keywords (foreach, fused, capturable, differentiable) every optimizer takes."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import minitorch
from minitorch.nn import Parameter
from minitorch.optim import SGD, Adadelta, Adam, AdamW, RMSprop
from minitorch.optim.lr_scheduler import ReduceLROnPlateau


def _sgd(lr: float = 1.0, groups: int = 1) -> SGD:
    params = [{"params": [Parameter(minitorch.zeros(1))]} for _ in range(groups)]
    return SGD(params, lr=lr)


def _run(sched: ReduceLROnPlateau, metrics) -> list[float]:
    lrs = []
    for metric in metrics:
        sched.optimizer.step()
        sched.step(metric)
        lrs.append(sched.get_last_lr()[0])
    return lrs


def test_min_mode_with_patience_and_cooldown():
    # best 10; 9.5 is not below 10 * (1 - 0.1): bad epochs 1, 2 > patience 1 -> halve, then a
    # cooldown epoch whose bad epoch does not count; 8 is a new best.
    sched = ReduceLROnPlateau(_sgd(), factor=0.5, patience=1, threshold=0.1, cooldown=1)
    assert sched.get_last_lr() == [1.0]  # before any step: the groups' lr
    assert _run(sched, [10, 9.5, 9.5, 9.5, 9.5, 9.5, 8, 8]) == [
        1.0,
        1.0,
        0.5,
        0.5,
        0.5,
        0.25,
        0.25,
        0.25,
    ]
    assert sched.best == 8 and sched.last_epoch == 8


def test_max_mode_absolute_threshold_min_lr_and_eps():
    opt = _sgd(lr=1.0, groups=2)
    sched = ReduceLROnPlateau(
        opt,
        mode="max",
        factor=0.1,
        patience=0,
        threshold=0.5,
        threshold_mode="abs",
        min_lr=[0.05, 0.0],
    )
    # 1.4 is not above 1 + 0.5: reduce (patience 0); 1.6 is a new best; 1.6 again is not
    # above 1.6 + 0.5: reduce. The first group stops at its min_lr.
    _run(sched, [1.0, 1.4, 1.6, 1.6])
    assert [g["lr"] for g in opt.param_groups] == pytest.approx([0.05, 0.01])
    # a reduction smaller than eps is skipped
    tiny = ReduceLROnPlateau(_sgd(lr=1e-8), patience=0, eps=1e-8)
    assert _run(tiny, [1.0, 2.0]) == [1e-8, 1e-8]


def test_metric_may_be_a_tensor_and_state_dict_round_trips():
    sched = ReduceLROnPlateau(_sgd(), patience=0)
    _run(sched, [minitorch.tensor(3.0), minitorch.tensor(3.0)])
    assert sched.get_last_lr() == [pytest.approx(0.1)]
    state = copy.deepcopy(sched.state_dict())
    assert "optimizer" not in state and state["best"] == 3.0
    other = ReduceLROnPlateau(_sgd(), patience=0)
    other.load_state_dict(state)
    assert other.num_bad_epochs == sched.num_bad_epochs and other.best == 3.0


def test_plateau_errors_are_pytorchs():
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        ReduceLROnPlateau(_sgd(), factor=1.0)
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
        ReduceLROnPlateau(_sgd(groups=2), min_lr=[0.1])
    with pytest.raises(ValueError, match="mode middle is unknown"):
        ReduceLROnPlateau(_sgd(), mode="middle")
    with pytest.raises(ValueError, match="threshold mode log is unknown"):
        ReduceLROnPlateau(_sgd(), threshold_mode="log")


# ---- implementation keywords -------------------------------------------------------------

KEYWORDS = {  # the keywords each optimizer's PyTorch signature has (capturable: see below)
    SGD: dict(foreach=True, differentiable=False, fused=None),
    Adam: dict(foreach=None, capturable=False, differentiable=False, fused=True),
    AdamW: dict(foreach=False, capturable=False, differentiable=False, fused=True),
    Adadelta: dict(foreach=True, capturable=False, differentiable=False),
    RMSprop: dict(foreach=True, capturable=False, differentiable=False),
}


def _steps(method, **kwargs) -> np.ndarray:
    p = Parameter(minitorch.tensor([1.0, -2.0, 0.5]))
    opt = method([p], lr=0.1, **kwargs)
    for k in range(3):
        p.grad = minitorch.tensor([0.3, -0.1, 0.2]) * (k + 1)
        opt.step()
    return p.detach().numpy()


@pytest.mark.parametrize("method", list(KEYWORDS), ids=lambda m: m.__name__)
def test_every_optimizer_takes_its_implementation_keywords_with_the_same_steps(method):
    kwargs = KEYWORDS[method]
    np.testing.assert_array_equal(_steps(method, **kwargs), _steps(method))
    opt = method([Parameter(minitorch.zeros(1))], **kwargs)
    for key, value in kwargs.items():
        assert opt.param_groups[0][key] == value  # group defaults, as PyTorch's
    # maximize climbs: without weight decay, the same steps with the gradient's sign flipped
    climbed = _steps(method, maximize=True, weight_decay=0.0) - [1.0, -2.0, 0.5]
    descended = _steps(method, weight_decay=0.0) - [1.0, -2.0, 0.5]
    np.testing.assert_allclose(climbed, -descended, rtol=1e-5, atol=1e-6)  # float32


def test_implementation_keyword_errors():
    p = [Parameter(minitorch.zeros(1))]
    for method in (Adam, AdamW, Adadelta, RMSprop):
        opt = method(p, capturable=True)  # accepted, as in PyTorch; a CPU step is refused
        assert opt.param_groups[0]["capturable"] is True
        p[0].grad = minitorch.ones(1)
        with pytest.raises(minitorch.MinitorchError, match="capturable=True"):
            opt.step()
    with pytest.raises(minitorch.MinitorchError, match="`fused` and `foreach` cannot"):
        Adam(p, fused=True, foreach=True)
    with pytest.raises(minitorch.MinitorchError, match="differentiable=True is not supported"):
        SGD(p, lr=0.1, differentiable=True)
    with pytest.raises(TypeError):
        RMSprop(p, fused=True)  # not one of RMSprop's arguments, in PyTorch either
