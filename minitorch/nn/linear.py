"""`Linear` (y = x W^T + b) and `Identity`."""

from __future__ import annotations

from minitorch.factories import empty
from minitorch.nn import functional as F
from minitorch.nn import init
from minitorch.nn.module import Module
from minitorch.nn.parameter import Parameter
from minitorch.tensor import Tensor


class Identity(Module):
    """Returns its input: a placeholder layer (fuse_conv_bn_eval's result for a BatchNorm)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """y = x @ weight.T + bias, for x of shape (*, in_features).

    weight (out_features, in_features) and bias (out_features,) start uniform in
    [-1/sqrt(in_features), 1/sqrt(in_features)], PyTorch's default.

        >>> Linear(2, 3)
        Linear(in_features=2, out_features=3, bias=True)
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features, **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(empty(out_features, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.default_weight_and_bias_(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


def _factory(device, dtype) -> dict:
    """The keyword arguments a factory takes: only those given (the defaults stand otherwise)."""
    kwargs = {}
    if device is not None:
        kwargs["device"] = device
    if dtype is not None:
        kwargs["dtype"] = dtype
    return kwargs
