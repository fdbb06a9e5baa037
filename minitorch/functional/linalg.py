"""Public linear-algebra functions (`minitorch.matmul`, ...) and their Tensor methods."""

from __future__ import annotations

__all__: list[str] = []  # the public functions of this family


class LinalgMethods:
    """The linear-algebra ops as Tensor methods and the `@` operator (mixed into Tensor)."""
