"""Fake tensors: tensors with a shape, dtype and strides but no data.

Tracers run user code on fake tensors to learn every intermediate's shape and dtype without
computing anything (PyTorch's FakeTensor): under `FakeTensorMode`, each op's shape/dtype rule
from the op table makes the output, and a view's stride rule its strides, so that `stride()`,
`is_contiguous()` and whether `view` succeeds read as they do eagerly. Reading a fake tensor's
values is a `DataDependentError`, which is exactly the point where a tracer has to give up or
break the graph.

    >>> with FakeTensorMode():
    ...     y = minitorch.sin(fake_like(x)) + 1      # y.shape == x.shape; nothing computed
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from minitorch.dispatch import DispatchMode
from minitorch.errors import DataDependentError, at_user_line
from minitorch.ops.registry import TensorMeta
from minitorch.ops.views_meta import contiguous_strides, is_row_major, view_strides


class MetaArray:
    """Stands in for an ndarray inside a fake Tensor: metadata only."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, strides: tuple[int, ...]):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.strides = tuple(s * self.dtype.itemsize for s in strides)  # bytes, like numpy
        self.ndim = len(self.shape)
        self.size = math.prod(self.shape)
        self.itemsize = self.dtype.itemsize
        self.flags = SimpleNamespace(c_contiguous=is_row_major(self.shape, tuple(strides)))

    def __array__(self, *args, **kwargs):
        raise DataDependentError(
            at_user_line(f"the data of a fake tensor of shape {self.shape} was read while tracing")
        )

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


def make_fake(meta: TensorMeta, strides: tuple[int, ...] | None = None, requires_grad=False):
    """A fake Tensor with `meta`'s shape and dtype; row-major unless `strides` are given."""
    from minitorch.tensor import Tensor

    shape = tuple(meta.shape)
    if strides is None:
        strides = contiguous_strides(shape)
    array = MetaArray(shape, meta.dtype.np, strides)
    return Tensor._from_array(array, requires_grad=requires_grad)


def fake_like(t, requires_grad: bool | None = None):
    """A fake copy of a real tensor: same shape, dtype, strides and requires_grad."""
    rg = t.requires_grad if requires_grad is None else requires_grad
    return make_fake(TensorMeta(tuple(t.shape), t.dtype), t.stride(), requires_grad=rg)


def is_fake(t) -> bool:
    return isinstance(getattr(t, "_data", None), MetaArray)


def fake_result(op, args: tuple, kwargs: dict, meta):
    """The fake output(s) of `op` with the shape/dtype rule's `meta`: a view has the strides
    eager's kernel gives it, anything else is fresh row-major memory.
    See [Note: the strides of views] in minitorch/ops/views_meta.py."""
    if type(meta) is tuple:  # a multi-output op
        return tuple(make_fake(m) for m in meta)
    if op.kind == "view":
        return make_fake(meta, view_strides(op.name, args[0], meta.shape, *args[1:], **kwargs))
    if op.kind == "pointwise" and op.layout != "row_major":
        operands = args[:1] if op.layout == "first" else args
        return make_fake(meta, pointwise_strides(operands, meta.shape))
    return make_fake(meta)


def pointwise_strides(args: tuple, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The strides eager gives a pointwise result of `shape`; None for row-major.

    [Note: the layout of pointwise results]
    numpy allocates a ufunc's result in the order its operands run through memory (order
    'K'): `x.t().sin()` is transposed, `y * 2` of a reversed `y` runs forward. The layout is
    observable (`is_contiguous()`, whether `view` works, whether `contiguous()` copies), so a
    fake result must have it too. numpy's choice depends only on how each operand's strides
    compare, dim against dim, so a small stand-in answers for a big tensor: each operand as an
    array of at most 2 along each dim with its strides in the same order and signs (0 where
    it is broadcast), and numpy's own iterator allocates the result from them.
    """
    tensors = [a._data for a in args if hasattr(a, "_data") and a._data.ndim]
    if all(t.flags.c_contiguous for t in tensors) or 0 in shape:
        return None  # row-major operands (broadcast or not) give a row-major result
    small = tuple(min(n, 2) for n in shape)
    stand_ins = [_stand_in(t, small) for t in tensors]
    out = np.nditer(
        [*stand_ins, None],
        flags=["zerosize_ok", "refs_ok"],
        op_flags=[["readonly"]] * len(stand_ins) + [["writeonly", "allocate"]],
        order="K",
    ).operands[-1]
    order = sorted(range(len(shape)), key=lambda d: -out.strides[d])  # stable: ties keep order
    strides, step = [0] * len(shape), 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def _stand_in(array, small: tuple[int, ...]) -> np.ndarray:
    """An array of shape `small` whose strides compare as `array`'s do (see the Note above)."""
    lead = len(small) - array.ndim
    shape = (1,) * lead + tuple(array.shape)
    strides = (0,) * lead + tuple(array.strides)
    kept = [d for d in range(len(small)) if shape[d] > 1 and strides[d] != 0]
    order = sorted(kept, key=lambda d: -abs(strides[d]))
    base = np.empty([small[d] for d in order], np.int8).transpose(np.argsort(order))
    index = tuple(slice(None, None, -1) if strides[d] < 0 else slice(None) for d in kept)
    base = base[index]
    full = [1] * len(small)
    for k, d in enumerate(kept):
        full[d] = base.shape[k]
    return np.broadcast_to(base.reshape(full), small)


class FakeTensorMode(DispatchMode):
    """Every op returns a fake tensor made from its shape/dtype rule."""

    def run(self, op, args, kwargs, meta):
        return fake_result(op, args, kwargs, meta)
