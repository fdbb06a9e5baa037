"""`InstanceNorm1d`, `InstanceNorm2d`, `InstanceNorm3d`: normalise each channel of each sample
over its positions (style transfer, GANs). Unlike BatchNorm their defaults keep no parameters
and no running statistics."""

from __future__ import annotations

import warnings

from minitorch.dtype import int64
from minitorch.errors import ShapeError, at_user_line
from minitorch.factories import ones, tensor, zeros
from minitorch.nn import functional as F
from minitorch.nn.linear import _factory
from minitorch.nn.module import Module
from minitorch.nn.parameter import Parameter
from minitorch.tensor import Tensor


class _InstanceNorm(Module):
    """(N, C, *spatial) or (C, *spatial) -> the same shape, see F.instance_norm; `dims` is
    the number of spatial dims (1, 2 or 3).

    affine=True learns a per-channel weight and bias; track_running_stats=True keeps running
    statistics (updated while training, used in eval mode), as BatchNorm2d does.
    """

    dims = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
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
        batched_ndim = self.dims + 2
        if input.ndim not in (batched_ndim - 1, batched_ndim):
            raise ShapeError(
                at_user_line(
                    f"{type(self).__name__}: expected {batched_ndim - 1}D or {batched_ndim}D input "
                    f"(got {input.ndim}D input of shape {tuple(input.shape)})"
                )
            )
        self._check_channels(input)
        batched = input if input.ndim == batched_ndim else input.unsqueeze(0)
        out = F.instance_norm(
            batched,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            0.0 if self.momentum is None else self.momentum,
            self.eps,
        )
        return out if input.ndim == batched_ndim else out.squeeze(0)

    def _check_channels(self, input: Tensor) -> None:
        dim = input.ndim - self.dims - 1  # the channels
        channels = input.shape[dim]
        if channels == self.num_features:
            return
        if self.affine:
            raise ShapeError(
                at_user_line(
                    f"expected input's size at dim={dim} to match num_features "
                    f"({self.num_features}), but got: {channels}."
                )
            )
        warnings.warn(
            f"input's size at dim={dim} does not match num_features. You "
            "can silence this warning by not passing in num_features, which is not "
            "used because affine=False",
            stacklevel=3,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


class InstanceNorm1d(_InstanceNorm):
    """(N, C, L) or (C, L)."""

    dims = 1


class InstanceNorm2d(_InstanceNorm):
    """(N, C, H, W) or (C, H, W).

    >>> InstanceNorm2d(3, affine=True)
    InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=False)
    """


class InstanceNorm3d(_InstanceNorm):
    """(N, C, D, H, W) or (C, D, H, W)."""

    dims = 3
