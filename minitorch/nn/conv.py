"""`Conv2d`: a bank of learned 2-d filters slid over an image."""

from __future__ import annotations

from minitorch.errors import MinitorchError, at_user_line
from minitorch.factories import empty
from minitorch.nn import functional as F
from minitorch.nn import init
from minitorch.nn.linear import _factory
from minitorch.nn.module import Module
from minitorch.nn.parameter import Parameter
from minitorch.ops.nn_meta import pair
from minitorch.tensor import Tensor


class Conv2d(Module):
    """(N, in_channels, H, W) -> (N, out_channels, H', W'), see F.conv2d.

    weight (out_channels, in_channels / groups, kh, kw) and bias start uniform in
    [-1/sqrt(fan_in), 1/sqrt(fan_in)], fan_in = in_channels / groups * kh * kw.

        >>> Conv2d(3, 16, 3, padding=1)
        Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise MinitorchError(
                at_user_line(
                    f"Conv2d: in_channels ({in_channels}) and out_channels ({out_channels}) must "
                    f"be divisible by groups ({groups})"
                )
            )
        if padding_mode != "zeros":
            raise MinitorchError(
                at_user_line(
                    f"Conv2d: padding_mode={padding_mode!r} is not supported (only 'zeros')"
                )
            )
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = pair("Conv2d", "kernel_size", kernel_size)
        self.stride = pair("Conv2d", "stride", stride)
        self.dilation = pair("Conv2d", "dilation", dilation)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise MinitorchError(
                    at_user_line(
                        f"Conv2d: padding must be 'same', 'valid' or a number, got {padding!r}"
                    )
                )
            if padding == "same" and self.stride != (1, 1):
                raise MinitorchError(
                    at_user_line("padding='same' is not supported for strided convolutions")
                )
            self.padding = padding
        else:
            self.padding = pair("Conv2d", "padding", padding)
        self.padding_mode = padding_mode
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(shape, **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(empty(out_channels, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.default_weight_and_bias_(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.conv2d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s
