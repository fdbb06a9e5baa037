"""`ConvTranspose2d`: the adjoint of Conv2d, which upsamples (a "deconvolution")."""

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


class ConvTranspose2d(Module):
    """(N, in_channels, H, W) -> (N, out_channels, H', W'), see F.conv_transpose2d.

    weight has shape (in_channels, out_channels / groups, kh, kw), and starts as Conv2d's
    does with fan_in = out_channels / groups * kh * kw (PyTorch's default).

        >>> ConvTranspose2d(16, 3, 4, stride=2, padding=1)
        ConvTranspose2d(16, 3, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1))
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise MinitorchError(
                at_user_line(
                    f"ConvTranspose2d: in_channels ({in_channels}) and out_channels "
                    f"({out_channels}) must be divisible by groups ({groups})"
                )
            )
        if padding_mode != "zeros":
            raise MinitorchError(
                at_user_line(
                    f'Only "zeros" padding mode is supported for ConvTranspose2d, got '
                    f"{padding_mode!r}"
                )
            )
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = pair("ConvTranspose2d", "kernel_size", kernel_size)
        self.stride = pair("ConvTranspose2d", "stride", stride)
        self.padding = pair("ConvTranspose2d", "padding", padding)
        self.output_padding = pair("ConvTranspose2d", "output_padding", output_padding)
        self.dilation = pair("ConvTranspose2d", "dilation", dilation)
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(shape, **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(empty(out_channels, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.default_weight_and_bias_(self.weight, self.bias)

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        extra = (
            self.output_padding if output_size is None else self._padding_for(input, output_size)
        )
        return F.conv_transpose2d(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            extra,
            self.groups,
            self.dilation,
        )

    def _padding_for(self, input: Tensor, output_size) -> tuple[int, int]:
        """The output_padding that gives output_size (its last two entries), as PyTorch's."""
        wanted = tuple(output_size)[-2:]
        extra = []
        for k in range(2):
            smallest = (
                (input.shape[-2 + k] - 1) * self.stride[k]
                - 2 * self.padding[k]
                + self.dilation[k] * (self.kernel_size[k] - 1)
                + 1
            )
            if not smallest <= wanted[k] < smallest + self.stride[k]:
                raise MinitorchError(
                    at_user_line(
                        f"ConvTranspose2d: requested an output size of {list(wanted)}, but valid "
                        f"sizes for dim {k} range from {smallest} to "
                        f"{smallest + self.stride[k] - 1} (for an input of {list(input.shape)})"
                    )
                )
            extra.append(wanted[k] - smallest)
        return tuple(extra)

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0, 0):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s
