"""Learning-rate schedules, as torch.optim.lr_scheduler: `StepLR`, `LambdaLR`,
`CosineAnnealingLR`, `ReduceLROnPlateau` (driven by a metric), and their base `LRScheduler`.

    opt = minitorch.optim.SGD(model.parameters(), lr=0.1)
    sched = StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(100):
        train(...)          # opt.step() inside
        sched.step()        # then the schedule: lr is 0.1, then 0.01 from epoch 30, ...

[Note: a schedule writes group["lr"]]
A scheduler owns no learning rate of its own: it rewrites `lr` in each of the optimizer's
parameter groups, which the next `opt.step()` reads. It remembers each group's starting lr as
`group["initial_lr"]` (its `base_lrs`) and counts `last_epoch`, the number of `step()` calls
(0 after construction, which itself takes the first step and sets the epoch-0 lr).

Each schedule has two forms, as in PyTorch. `get_lr()` is *chainable*: it computes the next
lr from the current `group["lr"]` (StepLR multiplies it by gamma every step_size epochs), so
two schedulers on one optimizer compose. `_get_closed_form_lr()` computes it from base_lrs and
the epoch alone; `step(epoch)` (deprecated in PyTorch, kept for old scripts) jumps there.

`state_dict()` is every attribute but the optimizer (whose own state_dict saves the lrs).
"""

from __future__ import annotations

import math
import types
import warnings
from collections.abc import Callable

from minitorch.errors import InvalidArgumentError, at_user_line
from minitorch.optim.optimizer import Optimizer

__all__ = ["CosineAnnealingLR", "LRScheduler", "LambdaLR", "ReduceLROnPlateau", "StepLR"]


class LRScheduler:
    """Base class: a subclass gives `get_lr()` (and `_get_closed_form_lr()` if it has one)."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:  # resuming needs the lr the schedule started at
                raise KeyError(
                    f"param 'initial_lr' is not specified in param_groups[{i}] "
                    "when resuming an optimizer"
                )
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()  # epoch 0's lr

    def get_lr(self) -> list[float]:
        """The lr of each group for epoch `last_epoch`, from the current ones (chainable)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement get_lr")

    def get_last_lr(self) -> list[float]:
        """The lr of each group that the last `step()` set."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Move to the next epoch (or to `epoch`) and write its lr into every group."""
        if self._step_count == 1 and not self.optimizer._opt_called:
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                "In PyTorch 1.1.0 and later, you should call them in the opposite "
                "order: `optimizer.step()` before `lr_scheduler.step()`. Failure to "
                "do this will result in PyTorch skipping the first value of the "
                "learning rate schedule.",
                UserWarning,
                stacklevel=2,
            )
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn(
                "The epoch parameter in `scheduler.step()` was not necessary and is "
                "being deprecated where possible. Please use `scheduler.step()` to "
                "step the scheduler.",
                UserWarning,
                stacklevel=2,
            )
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", self.get_lr)
            values = closed_form()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """Every attribute but the optimizer (see [Note: a schedule writes group["lr"]])."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


_LRScheduler = LRScheduler  # PyTorch's older name, still imported by scripts


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (epoch // step_size): divide by 1/gamma every step_size epochs."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        decay = self.last_epoch != 0 and self.last_epoch % self.step_size == 0
        return [
            group["lr"] * (self.gamma if decay else 1.0) for group in self.optimizer.param_groups
        ]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(epoch), with one function for every group or one per group.

    >>> LambdaLR(opt, lambda epoch: min(1.0, (epoch + 1) / warmup))   # linear warm-up
    """

    def __init__(
        self, optimizer: Optimizer, lr_lambda: Callable | list[Callable], last_epoch: int = -1
    ) -> None:
        groups = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != groups:
                raise InvalidArgumentError(
                    at_user_line(f"Expected {groups} lr_lambdas, but got {len(lr_lambda)}")
                )
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * groups
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for base, fn in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self) -> dict:
        """As the base's, with each lambda that is an object saved as its `__dict__` (a
        function cannot be saved as data: it is saved as None and kept when loading)."""
        state = {key: value for key, value in super().state_dict().items() if key != "lr_lambdas"}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        super().load_state_dict(state)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


class CosineAnnealingLR(LRScheduler):
    """lr follows half a cosine from base_lr down to eta_min over T_max epochs (SGDR without
    restarts), and back up over the next T_max if stepping goes on:

        lr(t) = eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2
    """

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The chainable form: the ratio of lr(t) - eta_min to lr(t - 1) - eta_min, applied
        to the current lr, so that a change made to group["lr"] by hand carries on."""
        t, period, low = self.last_epoch, self.T_max, self.eta_min
        lrs = [group["lr"] for group in self.optimizer.param_groups]
        if t == 0:
            return lrs
        if self._step_count == 1 and t > 0:  # constructed to resume at epoch t
            return self._get_closed_form_lr()
        if (t - 1 - period) % (2 * period) == 0:  # the bottom, where the ratio is 0/0
            return [
                lr + (base - low) * (1 - math.cos(math.pi / period)) / 2
                for lr, base in zip(lrs, self.base_lrs)
            ]
        ratio = (1 + math.cos(math.pi * t / period)) / (1 + math.cos(math.pi * (t - 1) / period))
        return [low + ratio * (lr - low) for lr in lrs]

    def _get_closed_form_lr(self) -> list[float]:
        cosine = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * cosine for base in self.base_lrs]


class ReduceLROnPlateau(LRScheduler):
    """Divide the lr when a metric stops improving: `step(val_loss)` once per epoch.

        >>> sched = ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2)
        >>> for epoch in range(epochs):
        ...     sched.step(validate(model))

    A metric is better than the best so far when (threshold_mode 'rel', mode 'min') it is
    below best * (1 - threshold), or ('abs') below best - threshold; mode 'max' mirrors it.
    After more than `patience` epochs without a better one, every group's lr becomes
    max(lr * factor, min_lr) (a change smaller than eps is skipped), and the count waits
    `cooldown` epochs before it starts again. Unlike the other schedules it reads a metric,
    so it takes no step at construction and has no get_lr(); get_last_lr() is the groups' lr
    after the last step (their lr before any).
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float | list[float] = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise InvalidArgumentError(at_user_line("Factor should be < 1.0."))
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        groups = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != groups:
                raise InvalidArgumentError(
                    at_user_line(f"expected {groups} min_lrs, got {len(min_lr)}")
                )
            self.min_lrs = list(min_lr)
        else:
            self.min_lrs = [min_lr] * groups
        if mode not in ("min", "max"):
            raise InvalidArgumentError(at_user_line(f"mode {mode} is unknown!"))
        if threshold_mode not in ("rel", "abs"):
            raise InvalidArgumentError(at_user_line(f"threshold mode {threshold_mode} is unknown!"))
        self.optimizer = optimizer
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]
        self._reset()

    def _reset(self) -> None:
        """Forget the best metric, the cooldown and the count of bad epochs."""
        self.best = math.inf if self.mode == "min" else -math.inf
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def is_better(self, a: float, best: float) -> bool:
        """Is metric `a` better than `best` by more than the threshold?"""
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def step(self, metrics, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record this epoch's metric (a number or a one-element tensor); reduce if stuck."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(
                "The epoch parameter in `scheduler.step()` was not necessary and is "
                "being deprecated where possible. Please use `scheduler.step()` to "
                "step the scheduler.",
                UserWarning,
                stacklevel=2,
            )
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _reduce_lr(self) -> None:
        for group, low in zip(self.optimizer.param_groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, low)
            if old - new > self.eps:
                group["lr"] = new
