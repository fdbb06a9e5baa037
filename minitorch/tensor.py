"""`Tensor`: an n-dimensional array with autograd, over a numpy array.

A tensor owns an array (`_data`), and, when it takes part in autograd, `requires_grad`,
`grad` and `grad_fn` (the backward node that made it). Every op, operator and method goes
through `minitorch.functional` and from there through the dispatcher (minitorch/dispatch.py),
so eager execution, fake tensors and graph tracing all see the same calls.

    >>> x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward(); x.grad
    tensor([2., 4.])
"""

from __future__ import annotations

import numpy as np

from minitorch import functional as F
from minitorch.device import device, device_of, to_host
from minitorch.dtype import DType, from_numpy_dtype
from minitorch.errors import AutogradError, DeviceError, DTypeError, MinitorchError, at_user_line


class Size(tuple):
    """A tensor's shape: a tuple that prints like PyTorch's."""

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

    def __repr__(self) -> str:
        return f"minitorch.Size({list(self)})"


class Tensor(*F.METHOD_MIXINS):
    """An n-dimensional array that can record the ops that made it.

    The ops' methods and Python operators come from the mixins in minitorch/functional/,
    one per family of ops; this class holds what every tensor has: data, metadata, autograd.
    """

    def __init__(self, data=()) -> None:
        """`minitorch.Tensor([1, 2])` is a float32 tensor, as in PyTorch; prefer `tensor()`."""
        self._data = np.array(data, dtype=np.float32)
        self._init_autograd(False)

    @classmethod
    def _from_array(cls, array, requires_grad: bool = False) -> Tensor:
        t = cls.__new__(cls)
        t._data = array
        t._init_autograd(requires_grad)
        return t

    def _init_autograd(self, requires_grad: bool) -> None:
        self.requires_grad = requires_grad
        self.grad: Tensor | None = None
        self.grad_fn = None  # the backward Node that produced this tensor; None for leaves
        self._output_nr = 0  # which output of grad_fn this tensor is

    # ---- metadata -------------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self._data.shape[dim]

    @property
    def dtype(self) -> DType:
        return from_numpy_dtype(self._data.dtype)

    @property
    def device(self) -> device:
        return device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def stride(self, dim: int | None = None):
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[dim]

    def is_contiguous(self) -> bool:
        from minitorch.fake import contiguous_strides

        return all(
            s == c for s, c, n in zip(self.stride(), contiguous_strides(self.shape), self.shape)
            if n > 1
        )

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    # ---- leaving minitorch -------------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """The data as a numpy array (shares memory); refuses tensors that require grad."""
        if self.requires_grad:
            raise AutogradError(at_user_line(
                "can't call numpy() on a tensor that requires grad; use tensor.detach().numpy()"
            ))
        if self.is_cuda:
            raise DeviceError(at_user_line(
                "can't convert a cuda tensor to numpy; use tensor.cpu() to copy it to the host"
            ))
        return np.asarray(self._data)

    def item(self):
        if self.numel() != 1:
            raise MinitorchError(at_user_line(
                f"item(): a tensor with {self.numel()} elements cannot be converted to a scalar"
            ))
        return to_host(self._data).reshape(()).item()

    def tolist(self):
        return to_host(self._data).tolist()

    def __bool__(self) -> bool:
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __len__(self) -> int:
        if self.ndim == 0:
            raise MinitorchError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __repr__(self) -> str:
        from minitorch.printing import format_tensor

        return format_tensor(self)

    # ---- autograd ----------------------------------------------------------------------------

    def backward(self, gradient: Tensor | None = None, retain_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's `.grad`."""
        from minitorch.autograd.engine import run_backward
        from minitorch.factories import ones_like

        if gradient is None:
            if self.numel() != 1:
                raise AutogradError(at_user_line(
                    f"grad can be implicitly created only for scalar outputs, got {self.shape}"
                ))
            gradient = ones_like(self)
        run_backward([self], [gradient], retain_graph=retain_graph)

    def _accumulate_grad(self, grad: Tensor) -> None:
        grad = grad.detach()
        self.grad = grad if self.grad is None else F.add(self.grad, grad).detach()

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if not self.is_leaf and not requires_grad:
            raise AutogradError("you can only change requires_grad flags of leaf variables")
        if requires_grad and not self.dtype.is_floating_point:
            raise DTypeError(at_user_line(
                f"only floating point tensors can require gradients, not {self.dtype.name}"
            ))
        self.requires_grad = requires_grad
        return self

    def detach(self) -> Tensor:
        """The same data, cut from the autograd graph."""
        return Tensor._from_array(self._data)

    def clone(self) -> Tensor:
        return F.add(self, 0) if self.requires_grad else Tensor._from_array(self._data.copy())

    def to(self, *args, **kwargs) -> Tensor:
        """A copy with another dtype and/or device: `to(float64)`, `to("cuda")`, `to(other)`;
        `self` when nothing changes, as in PyTorch. Differentiable."""
        from minitorch.ops import to_copy

        dtype, dev = _to_arguments(self, args, kwargs)
        same_dtype = dtype is None or dtype is self.dtype
        same_device = dev is None or dev == self.device
        if same_dtype and same_device:
            return self
        return to_copy(self, dtype=None if same_dtype else dtype,
                       device=None if same_device else device(dev))

    def cuda(self) -> Tensor:
        return self.to("cuda")

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def long(self) -> Tensor:
        from minitorch.dtype import int64

        return self.to(int64)

    def int(self) -> Tensor:
        from minitorch.dtype import int32

        return self.to(int32)

    def bool(self) -> Tensor:
        from minitorch.dtype import bool_

        return self.to(bool_)

    def float(self) -> Tensor:
        from minitorch.dtype import float32

        return self.to(float32)

    def double(self) -> Tensor:
        from minitorch.dtype import float64

        return self.to(float64)


def _to_arguments(t: Tensor, args: tuple, kwargs: dict) -> tuple[DType | None, object]:
    """Sort `to()`'s arguments into a dtype and a device, whatever order they came in."""
    dtype, dev = kwargs.get("dtype"), kwargs.get("device")
    for a in args:
        if isinstance(a, DType):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, device)):
            dev = a
        else:
            raise DTypeError(at_user_line(f"to(): cannot convert to {a!r}"))
    return dtype, dev
