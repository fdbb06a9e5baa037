"""A tensor's values in Python: `numpy()`, `item()`, `tolist()`, and the protocols that read them.

    >>> x = minitorch.tensor([1.5, 2.5])
    >>> x.tolist(), x[0].item(), float(x[1]), len(x), f"{x.sum():.2f}"
    ([1.5, 2.5], 1.5, 2.5, 2, '4.00')

Each leaves minitorch: the values are read to the host (numpy() refuses a cuda tensor, as
PyTorch's does) and what is done with them is not recorded. So inside compiled code, reading
the values (item(), tolist(), bool(t)) is a graph break, while len(t) and iterating over t
read only the shape. Tensor takes these methods from `PythonValueMethods`; how a tensor prints
is minitorch/printing.py.
"""

from __future__ import annotations

import numpy as np

from minitorch.device import to_host
from minitorch.dtype import bfloat16
from minitorch.errors import (
    ArgumentTypeError,
    AutogradError,
    DeviceError,
    DTypeError,
    MinitorchError,
    at_user_line,
)


class PythonValueMethods:
    """The methods of Tensor that hand its values to Python or numpy (see above)."""

    def numpy(self) -> np.ndarray:
        """The data as a numpy array (shares memory); refuses tensors that require grad."""
        if self.requires_grad:
            raise AutogradError(
                at_user_line(
                    "can't call numpy() on a tensor that requires grad; use tensor.detach().numpy()"
                )
            )
        if self.is_cuda:
            raise DeviceError(
                at_user_line(
                    "can't convert a cuda tensor to numpy; use tensor.cpu() to copy it to the host"
                )
            )
        if self.dtype is bfloat16:  # numpy has no bfloat16 (nor has PyTorch's numpy())
            raise DTypeError(
                at_user_line(f"numpy(): numpy has no {self.dtype.name}; use tensor.float().numpy()")
            )
        return np.asarray(self._data)

    def item(self):
        if self.numel() != 1:
            raise MinitorchError(
                at_user_line(
                    f"item(): a tensor with {self.numel()} elements cannot be converted to a scalar"
                )
            )
        return to_host(self._data).reshape(()).item()

    def tolist(self):
        return to_host(self._data).tolist()

    def __format__(self, format_spec: str) -> str:
        """f"{loss:.4f}": a 0-d tensor formats as its number, as in PyTorch; other tensors
        take no format spec."""
        if self.ndim == 0:
            return format(self.item(), format_spec)
        if format_spec:
            raise ArgumentTypeError(
                at_user_line(
                    f"unsupported format string {format_spec!r} passed to Tensor.__format__: only "
                    f"a 0-d tensor takes one, and this one has shape {tuple(self.shape)} (format "
                    "tensor.item() or each element)"
                )
            )
        return str(self)

    def __bool__(self) -> bool:
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise DTypeError(
                at_user_line(
                    "only integer tensors of a single element can be converted to an index"
                )
            )
        return int(self.item())

    def __len__(self) -> int:
        if self.ndim == 0:
            raise MinitorchError(at_user_line("len() of a 0-d tensor"))
        return self._data.shape[0]

    def __iter__(self):
        """The views x[0], x[1], ... along the first dim."""
        if self.ndim == 0:
            raise MinitorchError(at_user_line("iteration over a 0-d tensor"))
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        from minitorch.printing import format_tensor

        return format_tensor(self)
