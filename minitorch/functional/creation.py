"""Tensor methods that make a new tensor like `self`: `new_tensor`, `new_zeros`, `new_ones`,
`new_full`, `new_empty`.

    >>> x = minitorch.zeros(2, dtype=minitorch.float64)
    >>> x.new_ones(3)                       # float64, on x's device: tensor([1., 1., 1.])
    >>> x.new_tensor([1, 2])                # data converted to x's dtype: tensor([1., 2.])

Each takes the dtype and device of `self` unless `dtype=`/`device=` say otherwise, as in
PyTorch, and calls the factory of the same name (minitorch/factories.py).
"""

from __future__ import annotations

from minitorch.dtype import DType
from minitorch.functional._common import shape_arg


class CreationMethods:
    """new_* methods (mixed into Tensor)."""

    def new_tensor(
        self, data, dtype: DType | None = None, device=None, requires_grad: bool = False
    ):
        """A copy of `data` (never a view of it), in self's dtype and on self's device."""
        from minitorch.factories import tensor

        return tensor(
            data,
            dtype=dtype or self.dtype,
            device=device or self.device,
            requires_grad=requires_grad,
        )

    def new_zeros(
        self, *size, dtype: DType | None = None, device=None, requires_grad: bool = False
    ):
        from minitorch.factories import zeros

        return zeros(
            shape_arg(size),
            dtype=dtype or self.dtype,
            device=device or self.device,
            requires_grad=requires_grad,
        )

    def new_ones(self, *size, dtype: DType | None = None, device=None, requires_grad: bool = False):
        from minitorch.factories import ones

        return ones(
            shape_arg(size),
            dtype=dtype or self.dtype,
            device=device or self.device,
            requires_grad=requires_grad,
        )

    def new_empty(
        self, *size, dtype: DType | None = None, device=None, requires_grad: bool = False
    ):
        """Uninitialised in PyTorch; zeros here (minitorch's empty)."""
        from minitorch.factories import empty

        return empty(
            shape_arg(size),
            dtype=dtype or self.dtype,
            device=device or self.device,
            requires_grad=requires_grad,
        )

    def new_full(
        self,
        size,
        fill_value,
        *,
        dtype: DType | None = None,
        device=None,
        requires_grad: bool = False,
    ):
        from minitorch.factories import full

        return full(
            tuple(size),
            fill_value,
            dtype=dtype or self.dtype,
            device=device or self.device,
            requires_grad=requires_grad,
        )
