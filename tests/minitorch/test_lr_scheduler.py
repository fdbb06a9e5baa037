"""optim.lr_scheduler: each schedule's lrs against its formula from PyTorch's documentation,
step by step (the chainable form) and by jumping to an epoch (the closed form), with resuming,
state_dict and the step-order warning."""

import math
import warnings

import numpy as np
import pytest

import minitorch
from minitorch.nn import Parameter
from minitorch.optim import SGD, Adam
from minitorch.optim.lr_scheduler import (
    CosineAnnealingLR,
    LambdaLR,
    LRScheduler,
    StepLR,
    _LRScheduler,
)


def _optimizer(lrs=(0.1,)):
    """An SGD with one parameter group per lr."""
    return SGD([{"params": [Parameter(minitorch.zeros(2))], "lr": lr} for lr in lrs])


def _lrs(scheduler, epochs: int) -> list[list[float]]:
    """get_last_lr() at epoch 0 (after construction), 1, ..., epochs - 1."""
    out = [scheduler.get_last_lr()]
    for _ in range(epochs - 1):
        scheduler.optimizer.step()
        scheduler.step()
        out.append(scheduler.get_last_lr())
    return out


def _cosine(base, eta_min, t_max, t):
    return eta_min + (base - eta_min) * (1 + math.cos(math.pi * t / t_max)) / 2


def test_step_lr_follows_its_formula():
    opt = _optimizer((0.05, 1.0))
    got = _lrs(StepLR(opt, step_size=3, gamma=0.1), 10)
    want = [[base * 0.1 ** (t // 3) for base in (0.05, 1.0)] for t in range(10)]
    for t, (g, w) in enumerate(zip(got, want)):
        assert g == pytest.approx(w, rel=1e-12), t
    assert [group["lr"] for group in opt.param_groups] == got[-1]
    assert [group["initial_lr"] for group in opt.param_groups] == [0.05, 1.0]


@pytest.mark.parametrize("eta_min", [0.0, 0.01])
def test_cosine_annealing_follows_the_cosine_down_and_back_up(eta_min):
    t_max = 5
    got = _lrs(CosineAnnealingLR(_optimizer((0.1, 0.3)), T_max=t_max, eta_min=eta_min), 16)
    for t, lrs in enumerate(got):  # three half periods: the chainable form has no drift
        want = [_cosine(base, eta_min, t_max, t) for base in (0.1, 0.3)]
        assert lrs == pytest.approx(want, rel=1e-12, abs=1e-15), t
    assert got[t_max] == pytest.approx([eta_min, eta_min], abs=1e-15)


def test_lambda_lr_one_function_or_one_per_group():
    warmup = 4
    got = _lrs(LambdaLR(_optimizer((0.1, 0.2)), lambda e: min(1.0, (e + 1) / warmup)), 6)
    factors = [min(1.0, (t + 1) / warmup) for t in range(6)]
    np.testing.assert_allclose(got, [[0.1 * f, 0.2 * f] for f in factors], rtol=1e-12)
    per_group = LambdaLR(_optimizer((0.1, 0.2)), [lambda e: 0.5**e, lambda e: e + 1])
    np.testing.assert_allclose(
        _lrs(per_group, 3), [[0.1, 0.2], [0.05, 0.4], [0.025, 0.6]], rtol=1e-12
    )
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        LambdaLR(_optimizer((0.1, 0.2)), [lambda e: 1.0])


def test_chainable_schedulers_compose_through_the_groups_lr():
    # Each StepLR multiplies the current lr: the decays of the two multiply.
    opt = _optimizer((1.0,))
    halve, tenth = StepLR(opt, step_size=2, gamma=0.5), StepLR(opt, step_size=3, gamma=0.1)
    for t in range(1, 8):
        opt.step()
        halve.step()
        tenth.step()
        assert opt.param_groups[0]["lr"] == pytest.approx(0.5 ** (t // 2) * 0.1 ** (t // 3))


def test_step_with_an_epoch_jumps_to_the_closed_form_with_a_warning():
    sched = CosineAnnealingLR(_optimizer((0.1,)), T_max=10)
    sched.optimizer.step()
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(7)
    assert sched.last_epoch == 7
    assert sched.get_last_lr() == pytest.approx([_cosine(0.1, 0.0, 10, 7)], rel=1e-12)
    step = StepLR(_optimizer((1.0,)), step_size=2, gamma=0.1)
    with pytest.warns(UserWarning):
        step.step(5)
    assert step.get_last_lr() == pytest.approx([0.01])


def test_resuming_needs_initial_lr_and_starts_at_the_next_epoch():
    opt = _optimizer((0.1,))
    with pytest.raises(KeyError, match="initial_lr"):
        CosineAnnealingLR(opt, T_max=10, last_epoch=3)
    opt.param_groups[0]["initial_lr"] = 0.1
    sched = CosineAnnealingLR(opt, T_max=10, last_epoch=3)
    assert sched.last_epoch == 4
    assert sched.get_last_lr() == pytest.approx([_cosine(0.1, 0.0, 10, 4)], rel=1e-12)


def test_state_dict_round_trip_continues_the_schedule():
    opt = _optimizer((0.1,))
    sched = CosineAnnealingLR(opt, T_max=8, eta_min=0.001)
    _lrs(sched, 4)
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 3 and state["T_max"] == 8
    opt2 = _optimizer((5.0,))
    opt2.load_state_dict(opt.state_dict())
    resumed = CosineAnnealingLR(opt2, T_max=1)
    resumed.load_state_dict(state)
    np.testing.assert_allclose(_lrs(resumed, 4), _lrs(sched, 4), rtol=1e-12)


class _Halving:
    """A callable object: LambdaLR saves its attributes in state_dict."""

    def __init__(self, factor: float) -> None:
        self.factor = factor

    def __call__(self, epoch: int) -> float:
        return self.factor**epoch


def test_lambda_lr_state_dict_saves_callable_objects_not_functions():
    sched = LambdaLR(_optimizer((0.1, 0.2)), [lambda e: 1.0, _Halving(0.5)])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [None, {"factor": 0.5}]
    other = LambdaLR(_optimizer((0.1, 0.2)), [lambda e: 1.0, _Halving(0.9)])
    other.load_state_dict(state)
    assert other.lr_lambdas[1].factor == 0.5


def test_stepping_the_scheduler_before_the_optimizer_warns():
    sched = StepLR(_optimizer(), step_size=1)
    with pytest.warns(UserWarning, match=r"before `optimizer.step\(\)`"):
        sched.step()
    sched = StepLR(_optimizer(), step_size=1)
    sched.optimizer.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()


def test_scheduler_is_built_on_an_optimizer_with_a_base_that_has_no_formula():
    assert _LRScheduler is LRScheduler
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        StepLR([], step_size=1)
    with pytest.raises(NotImplementedError):
        LRScheduler(Adam([Parameter(minitorch.zeros(1))]))
