"""`Parameter`: a tensor that a Module registers as learnable."""

from __future__ import annotations

from minitorch.tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad and is found by `Module.parameters()`.

    It shares memory with `data`, as in PyTorch: `Parameter(t)` does not copy t.

        >>> Parameter(minitorch.zeros(2))
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
    """

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            from minitorch.factories import empty

            data = empty(0)
        # NOTE: take over every field of a detached alias of `data` (its array, and whatever
        # else a tensor keeps about its storage), so the two share memory.
        self.__dict__.update(data.detach().__dict__)
        self.requires_grad_(requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
