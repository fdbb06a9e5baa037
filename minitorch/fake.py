"""Fake tensors: tensors with a shape, dtype and strides but no data.

Tracers run user code on fake tensors to learn every intermediate's shape and dtype without
computing anything (PyTorch's FakeTensor): under `FakeTensorMode`, each op's shape/dtype rule
from the op table makes the output. Reading a fake tensor's values is a `DataDependentError`,
which is exactly the point where a tracer has to give up or break the graph.

    >>> with FakeTensorMode():
    ...     y = minitorch.sin(fake_like(x)) + 1      # y.shape == x.shape; nothing computed
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from minitorch.dispatch import DispatchMode
from minitorch.errors import DataDependentError, at_user_line
from minitorch.ops.registry import TensorMeta


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements: (2, 3, 4) -> (12, 4, 1)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class MetaArray:
    """Stands in for an ndarray inside a fake Tensor: metadata only."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, strides: tuple[int, ...]):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.strides = tuple(s * self.dtype.itemsize for s in strides)  # bytes, like numpy
        self.ndim = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.itemsize = self.dtype.itemsize
        # as numpy's ndarray.flags.c_contiguous: row-major without gaps; size-1 dims ignored
        row_major = zip(strides, contiguous_strides(self.shape), self.shape)
        self.flags = SimpleNamespace(c_contiguous=all(s == c for s, c, n in row_major if n > 1))

    def __array__(self, *args, **kwargs):
        raise DataDependentError(
            at_user_line(f"the data of a fake tensor of shape {self.shape} was read while tracing")
        )

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


def make_fake(meta: TensorMeta, strides: tuple[int, ...] | None = None, requires_grad=False):
    """A fake Tensor with `meta`'s shape and dtype."""
    from minitorch.tensor import Tensor

    shape = tuple(meta.shape)
    array = MetaArray(shape, meta.dtype.np, strides or contiguous_strides(shape))
    return Tensor._from_array(array, requires_grad=requires_grad)


def fake_like(t, requires_grad: bool | None = None):
    """A fake copy of a real tensor: same shape, dtype, strides and requires_grad."""
    rg = t.requires_grad if requires_grad is None else requires_grad
    return make_fake(TensorMeta(tuple(t.shape), t.dtype), t.stride(), requires_grad=rg)


def is_fake(t) -> bool:
    return isinstance(getattr(t, "_data", None), MetaArray)


class FakeTensorMode(DispatchMode):
    """Every op returns a fake tensor made from its shape/dtype rule."""

    def run(self, op, args, kwargs, meta):
        if type(meta) is tuple:  # a multi-output op
            return tuple(make_fake(m) for m in meta)
        return make_fake(meta)
