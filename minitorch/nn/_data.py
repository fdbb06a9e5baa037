"""How nn writes into tensors it holds: initialising, loading and converting parameters.

PyTorch does these under `no_grad` with `param.copy_(...)` or `param.data = ...`; they are
the only places where nn changes the tensors it holds rather than making new ones, so they
live here, one function each.
"""

from __future__ import annotations

from minitorch.autograd.grad_mode import no_grad
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


