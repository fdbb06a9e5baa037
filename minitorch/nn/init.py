"""`nn.init`: fill a tensor in place with the values a layer starts from.

Each function overwrites its argument without recording a gradient and returns it:

    >>> w = minitorch.empty(3, 5)
    >>> nn.init.kaiming_uniform_(w, a=math.sqrt(5))   # what nn.Linear does to its weight

The scaled initialisations keep the variance of activations (Glorot & Bengio 2010, "xavier")
or of gradients (He et al. 2015, "kaiming") the same from layer to layer, given the number of
inputs (fan_in) and outputs (fan_out) of each unit and the gain of the nonlinearity.
Random values come from the generator `minitorch.manual_seed` seeds.
"""

from __future__ import annotations

import math

from minitorch.errors import MinitorchError, ShapeError, at_user_line
from minitorch.nn._data import copy_into
from minitorch.tensor import Tensor

__all__ = [
    "calculate_gain",
    "constant_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor by which a nonlinearity shrinks the standard deviation, to undo it.

    linear, conv, sigmoid: 1    tanh: 5/3    relu: sqrt(2)
    leaky_relu(slope): sqrt(2 / (1 + slope**2))    selu: 3/4
    """
    if nonlinearity in (
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "sigmoid",
    ):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise MinitorchError(at_user_line(f"negative_slope {param} not a valid number"))
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise MinitorchError(at_user_line(f"Unsupported nonlinearity {nonlinearity}"))


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(inputs, outputs) per unit: weight (out, in, *kernel) -> (in * k, out * k)."""
    if tensor.dim() < 2:
        raise ShapeError(
            at_user_line(
                "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
                f"(got shape {tuple(tensor.shape)})"
            )
        )
    receptive_field = 1
    for n in tensor.shape[2:]:
        receptive_field *= n
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise MinitorchError(
            at_user_line(f"Mode {mode} not supported, please use one of fan_in, fan_out")
        )
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


# ---- plain fills -------------------------------------------------------------------------


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Values drawn uniformly from [a, b)."""
    from minitorch.factories import rand

    values = rand(tuple(tensor.shape), dtype=tensor.dtype)
    return copy_into(tensor, values * (b - a) + a)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Values drawn from N(mean, std**2)."""
    from minitorch.factories import randn

    values = randn(tuple(tensor.shape), dtype=tensor.dtype)
    return copy_into(tensor, values * std + mean)


def constant_(tensor: Tensor, val: float) -> Tensor:
    return copy_into(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    return copy_into(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    return copy_into(tensor, 0)


# ---- scaled by fan_in / fan_out ----------------------------------------------------------


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a).

    nn.Linear and nn.Conv2d use a = sqrt(5), which gives bound = 1 / sqrt(fan_in).
    """
    if tensor.numel() == 0:  # nothing to fill (and no fan to divide by)
        return tensor
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound)


def default_weight_and_bias_(weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's default for Linear and Conv2d: kaiming_uniform_(a=sqrt(5)) for the weight,
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)


def kaiming_normal_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
) -> Tensor:
    """N(0, std**2) with std = gain / sqrt(fan)."""
    if tensor.numel() == 0:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std)


def orthogonal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """A (semi-)orthogonal matrix times gain (Saxe et al. 2013), as PyTorch makes it.

    The tensor is seen as (rows, numel / rows); a matrix of N(0, 1) values of that shape
    (transposed if it is wide) is factored Q R, and Q's columns, each with the sign of R's
    diagonal entry (so that Q is uniformly distributed), fill the tensor: rows orthonormal if
    the tensor is wide, columns if it is tall.
    """
    import numpy as np

    from minitorch.factories import randn
    from minitorch.factories import tensor as make_tensor

    if tensor.dim() < 2:
        raise ShapeError(
            at_user_line(
                f"Only tensors with 2 or more dimensions are supported (got shape "
                f"{tuple(tensor.shape)})"
            )
        )
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = randn(rows, cols, dtype=tensor.dtype).numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)  # reduced: q (max, min), r (min, min)
    q = q * np.sign(np.diag(r))  # each column times the sign of its R diagonal entry
    if rows < cols:
        q = q.T
    values = make_tensor(np.ascontiguousarray(q) * gain, dtype=tensor.dtype)
    return copy_into(tensor, values.reshape(tuple(tensor.shape)))
