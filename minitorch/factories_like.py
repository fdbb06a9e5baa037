"""Making a tensor like another: `zeros_like(t)`, `randn_like(t)`, `full_like(t, 7)`, ...

Each takes t's shape, and its dtype and device unless given, and calls the factory of
minitorch/factories.py that makes a tensor from a shape (zeros_like(t) is
`zeros(t.shape, dtype=t.dtype)`), which checks the arguments and records its op of the table.
`memory_format=` is checked and accepted, but the result is row-major whatever it says
(minitorch/memory_format.py).

Capture records them as factories, as it does minitorch.factories' own functions
(tracer/dynamo/variables/factories.py): what they make depends on the sizes of `t` alone.
"""

from __future__ import annotations

from minitorch import ops
from minitorch.dtype import DType
from minitorch.factories import _dtype, _integers, _random, empty, full, ones, zeros
from minitorch.functional._common import check_tensor
from minitorch.generator import Generator
from minitorch.memory_format import check_optional_format
from minitorch.overrides import make_overridable
from minitorch.tensor import Tensor

__all__ = [
    "empty_like",
    "full_like",
    "ones_like",
    "rand_like",
    "randint_like",
    "randn_like",
    "zeros_like",
]


def zeros_like(
    t: Tensor,
    dtype: DType | None = None,
    requires_grad: bool = False,
    *,
    device=None,
    memory_format=None,
) -> Tensor:
    check_tensor("zeros_like", t)
    check_optional_format("zeros_like", memory_format)  # row-major all the same
    return zeros(
        tuple(t.shape),
        dtype=dtype or t.dtype,
        device=device or t.device,
        requires_grad=requires_grad,
    )


def ones_like(
    t: Tensor,
    dtype: DType | None = None,
    requires_grad: bool = False,
    *,
    device=None,
    memory_format=None,
) -> Tensor:
    check_tensor("ones_like", t)
    check_optional_format("ones_like", memory_format)
    return ones(
        tuple(t.shape),
        dtype=dtype or t.dtype,
        device=device or t.device,
        requires_grad=requires_grad,
    )


def rand_like(
    t: Tensor,
    dtype: DType | None = None,
    requires_grad: bool = False,
    *,
    device=None,
    memory_format=None,
) -> Tensor:
    check_tensor("rand_like", t)
    check_optional_format("rand_like", memory_format)
    return _random(
        "rand_like",
        ops.uniform,
        tuple(t.shape),
        dtype or t.dtype,
        device or t.device,
        requires_grad,
    )


def randn_like(
    t: Tensor,
    dtype: DType | None = None,
    requires_grad: bool = False,
    *,
    device=None,
    memory_format=None,
) -> Tensor:
    check_tensor("randn_like", t)
    check_optional_format("randn_like", memory_format)
    return _random(
        "randn_like",
        ops.normal,
        tuple(t.shape),
        dtype or t.dtype,
        device or t.device,
        requires_grad,
    )


def empty_like(
    t: Tensor,
    *,
    dtype: DType | None = None,
    device=None,
    requires_grad: bool = False,
    memory_format=None,
) -> Tensor:
    """Uninitialised memory of t's shape (and dtype and device, unless given); row-major
    whatever `memory_format` says."""
    check_tensor("empty_like", t)
    check_optional_format("empty_like", memory_format)
    return empty(
        tuple(t.shape),
        dtype=dtype or t.dtype,
        device=device or t.device,
        requires_grad=requires_grad,
    )


def full_like(
    t: Tensor,
    fill_value,
    *,
    dtype: DType | None = None,
    device=None,
    requires_grad: bool = False,
    memory_format=None,
) -> Tensor:
    """t's shape filled with `fill_value`, in t's dtype unless given (2.7 in an int64 tensor
    is 2)."""
    check_tensor("full_like", t)
    check_optional_format("full_like", memory_format)
    return full(
        tuple(t.shape),
        fill_value,
        dtype=dtype or t.dtype,
        device=device or t.device,
        requires_grad=requires_grad,
    )


def randint_like(
    t: Tensor,
    low=0,
    high=None,
    *,
    generator: Generator | None = None,
    dtype: DType | None = None,
    device=None,
    requires_grad: bool = False,
    memory_format=None,
) -> Tensor:
    """Integers uniform on [low, high) in t's shape (and dtype): randint_like(t, 10) or
    randint_like(t, -5, 5)."""
    check_tensor("randint_like", t)
    check_optional_format("randint_like", memory_format)
    if high is None:  # randint_like(t, high)
        low, high = 0, low
    dtype = _dtype("randint_like", dtype or t.dtype)
    return _integers(
        "randint_like",
        low,
        high,
        tuple(t.shape),
        dtype,
        generator,
        device or t.device,
        requires_grad,
    )


# Every public function hands a Proxy (any __torch_function__ type) to it: see
# [Note: __torch_function__] in minitorch/overrides.py.
make_overridable(globals(), __all__)
