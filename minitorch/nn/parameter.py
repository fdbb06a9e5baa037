"""`Parameter`: a tensor that a Module registers as learnable."""

from __future__ import annotations

from minitorch.tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad and is found by `Module.parameters()`."""

    def __init__(self, data: Tensor, requires_grad: bool = True) -> None:
        self._data = data._data
        self._init_autograd(requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
