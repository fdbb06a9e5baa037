"""`Flatten`: merge a range of dims into one (by default all but the batch dim)."""

from __future__ import annotations

from minitorch.nn.module import Module
from minitorch.tensor import Tensor


class Flatten(Module):
    """(N, C, H, W) -> (N, C * H * W) with the defaults start_dim=1, end_dim=-1."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
