"""How nn writes into tensors it holds: initialising, loading and converting parameters.

PyTorch does these under `no_grad` with `param.copy_(...)` or `param.data = ...`; they are
the only places where nn changes the tensors it holds rather than making new ones, so they
live here, one function each.
"""

from __future__ import annotations

from minitorch.autograd.grad_mode import no_grad
from minitorch.device import device
from minitorch.dtype import DType
from minitorch.errors import MinitorchError, at_user_line
from minitorch.tensor import Tensor


def copy_into(dst: Tensor, src: Tensor | float | int) -> Tensor:
    """dst[...] = src in place (converted to dst's dtype and device), recording no gradient.

    An in-place write like any other (minitorch/inplace.py): dst's version counter moves on,
    so a backward that still needs dst's old values refuses to run.
    """
    with no_grad():
        return dst.copy_(src)


def replace_data(dst: Tensor, src: Tensor) -> None:
    """Make `dst` hold `src`'s data (any dtype, device or shape): PyTorch's `dst.data = src`.

    The object stays the same, so optimizers and state dicts that refer to it see the change.
    """
    dst._data = src._data


def to_arguments(args: tuple, kwargs: dict) -> tuple[DType | None, device | None]:
    """Module.to's arguments as (dtype, device): to(dtype), to(device), to(device, dtype),
    to(tensor), with dtype=/device= keywords."""
    dtype, dev = kwargs.get("dtype"), kwargs.get("device")
    for a in args:
        if isinstance(a, DType):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, device)):
            dev = a
        else:
            raise MinitorchError(at_user_line(f"to(): cannot convert to {a!r}"))
    return dtype, None if dev is None else device(dev)
