"""Loss layers: `MSELoss`, `CrossEntropyLoss`, `NLLLoss` (see nn.functional for the math)."""

from __future__ import annotations

from minitorch.nn import functional as F
from minitorch.nn.module import Module
from minitorch.tensor import Tensor


class _Loss(Module):
    """Holds the reduction: 'mean' (the default), 'sum' or 'none' (one loss per element)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = F._reduction(size_average, reduce, reduction)


class MSELoss(_Loss):
    """mean((input - target)^2)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_Loss):
    """-input[n, target[n]], from log-probabilities (pair it with LogSoftmax)."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_Loss):
    """The loss of a classifier: nll_loss(log_softmax(logits), target), computed stably.

        >>> CrossEntropyLoss()(logits (N, C), labels (N,) int64)   # a 0-d mean
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)
