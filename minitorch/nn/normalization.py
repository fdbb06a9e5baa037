"""Normalisation layers: `BatchNorm1d`, `BatchNorm2d` (per channel, over the batch),
`LayerNorm` (per sample, over its last dims) and `GroupNorm` (per sample, over groups of
channels)."""

from __future__ import annotations

from minitorch.dtype import int64
from minitorch.errors import InvalidArgumentError, ShapeError, at_user_line
from minitorch.factories import ones, tensor, zeros
from minitorch.nn import functional as F
from minitorch.nn._data import copy_into
from minitorch.nn.linear import _factory
from minitorch.nn.module import Module
from minitorch.nn.parameter import Parameter
from minitorch.tensor import Tensor


class _BatchNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias, per channel (dim 1).

    Training uses the batch's statistics and moves the running ones (buffers) towards them by
    `momentum` (or, with momentum=None, keeps their plain average over all batches so far);
    eval mode uses the running statistics.
    """

    _expected_dims: tuple[int, ...] = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        kwargs = _factory(device, dtype)
        if affine:
            self.weight = Parameter(ones(num_features, **kwargs))
            self.bias = Parameter(zeros(num_features, **kwargs))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, **kwargs))
            self.register_buffer("running_var", ones(num_features, **kwargs))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in self._expected_dims:
            wanted = " or ".join(f"{d}D" for d in self._expected_dims)
            raise ShapeError(
                at_user_line(
                    f"{type(self).__name__}: expected {wanted} input (got {input.ndim}D input of "
                    f"shape {tuple(input.shape)})"
                )
            )
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            copy_into(self.num_batches_tracked, self.num_batches_tracked + 1)
            if self.momentum is None:  # a cumulative moving average
                momentum = 1.0 / self.num_batches_tracked.item()
        # Without running statistics, eval mode normalises with the batch's own, too.
        use_batch_stats = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if track else None,
            self.running_var if track else None,
            self.weight,
            self.bias,
            use_batch_stats,
            momentum,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L)."""

    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W)."""

    _expected_dims = (4,)


class LayerNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the last dims, per sample.

    >>> LayerNorm(4)
    LayerNorm((4,), eps=1e-05, elementwise_affine=True)
    """

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        shape = (
            (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        )
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        kwargs = _factory(device, dtype)
        if elementwise_affine:
            self.weight = Parameter(ones(shape, **kwargs))
            if bias:
                self.bias = Parameter(zeros(shape, **kwargs))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class GroupNorm(Module):
    """Normalise each sample's channels in num_groups groups, then weight * y + bias per
    channel (see F.group_norm); num_groups=1 is LayerNorm over (C, *) with per-channel affine.

        >>> GroupNorm(2, 4)
        GroupNorm(2, 4, eps=1e-05, affine=True)
    """

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise InvalidArgumentError(
                at_user_line(
                    f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                    f"({num_groups})"
                )
            )
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        kwargs = _factory(device, dtype)
        if affine:
            self.weight = Parameter(ones(num_channels, **kwargs))
            self.bias = Parameter(zeros(num_channels, **kwargs))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"
