"""`Dropout`: randomly zero activations while training."""

from __future__ import annotations

from minitorch.errors import MinitorchError, at_user_line
from minitorch.nn import functional as F
from minitorch.nn.module import Module
from minitorch.tensor import Tensor


class Dropout(Module):
    """In training, zero each element with probability p and scale the rest by 1 / (1 - p),
    so the expected value is unchanged; in eval mode, the identity."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise MinitorchError(
                at_user_line(f"dropout probability has to be between 0 and 1, but got {p}")
            )
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
