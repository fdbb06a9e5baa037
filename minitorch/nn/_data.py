"""How nn writes into tensors it holds: initialising, loading and converting parameters, and
moving BatchNorm's running statistics.

PyTorch does these under `no_grad` with `param.copy_(...)` or `param.data = ...`; they are
the only places where nn changes the tensors it holds rather than making new ones, so they
live here, one function each. Compiled code knows `copy_into` by name: capture records it as
the write it is (tracer/dynamo/variables/inplace.py), never walking into its `no_grad` block.
"""

from __future__ import annotations

from minitorch import ops
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


def update_running_stats(
    running_mean: Tensor,
    running_var: Tensor,
    mean: Tensor,
    var: Tensor,
    count: int,
    momentum: float,
) -> None:
    """running <- (1 - momentum) * running + momentum * batch, per channel, in place.

    `mean` and `var` are the batch's statistics as batch_norm computed them (biased, with
    keepdim); the running variance takes the unbiased one, var * count / (count - 1). No
    gradient reaches the buffers: the batch's statistics are detached, not the whole function
    run under no_grad, so that capture can trace it (a `with` block it cannot).
    """
    channels = running_mean.shape[0]
    batch_mean = ops.reshape(mean.detach(), (channels,))
    batch_var = ops.reshape(ops.mul(var.detach(), count / (count - 1)), (channels,))
    for running, batch in ((running_mean, batch_mean), (running_var, batch_var)):
        copy_into(running, ops.add(ops.mul(running, 1.0 - momentum), ops.mul(batch, momentum)))
