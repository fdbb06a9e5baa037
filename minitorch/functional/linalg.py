"""Public linear-algebra functions (`minitorch.matmul`, `mm`, `bmm`, `tril`, `triu`, `norm`)
and their Tensor methods.

    >>> a = minitorch.ones(2, 3); b = minitorch.ones(3, 4)
    >>> (a @ b).shape
    minitorch.Size([2, 4])
"""

from __future__ import annotations

from minitorch import ops
from minitorch.dtype import DType
from minitorch.functional._common import check_tensor
from minitorch.ops.meta import check_dtype, normalize_dims

# the public functions of this family
__all__ = ["bmm", "matmul", "mm", "norm", "tril", "triu"]


def matmul(input, other):
    """The matrix product with torch.matmul's rules: vectors, matrices, broadcast batches.

    (k,) @ (k,) -> ()   (n, k) @ (k,) -> (n,)   (k,) @ (k, m) -> (m,)
    (..., n, k) @ (..., k, m) -> (..., n, m), the batch dims broadcast
    """
    check_tensor("matmul", input)
    check_tensor("matmul", other)
    return ops.matmul(input, other)


def mm(input, mat2):
    """(n, k) @ (k, m) -> (n, m), two 2-d tensors only (no broadcasting)."""
    check_tensor("mm", input)
    check_tensor("mm", mat2)
    return ops.mm(input, mat2)


def bmm(input, mat2):
    """(b, n, k) @ (b, k, m) -> (b, n, m), the same batch size b on both sides."""
    check_tensor("bmm", input)
    check_tensor("bmm", mat2)
    return ops.bmm(input, mat2)


def tril(input, diagonal: int = 0):
    """The lower triangle of the last two dims (entries [i, j] with j <= i + diagonal); the
    rest zero. The causal mask of attention is tril(ones(T, T))."""
    check_tensor("tril", input)
    return ops.tril(input, diagonal)


def triu(input, diagonal: int = 0):
    """The upper triangle of the last two dims (entries [i, j] with j >= i + diagonal)."""
    check_tensor("triu", input)
    return ops.triu(input, diagonal)


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype: DType | None = None):
    """The vector p-norm over `dim` (an int, a tuple, or None for every element):
    (sum |x|^p)^(1/p); p may be inf, -inf, 0, or 'fro' (the default, p = 2).

    `dtype=` converts the input first. Where the norm is 0 its gradient is 0, as PyTorch's
    (the root has no derivative there; see `_root` in ops/linalg.py).
    """
    check_tensor("norm", input)
    if dtype is not None and check_dtype("norm", dtype) is not input.dtype:
        input = ops.to_copy(input, dtype=dtype)
    dims = None if dim is None else normalize_dims("norm", dim, input.ndim)
    return ops.norm(input, p, dims, keepdim)


class LinalgMethods:
    """The linear-algebra ops as Tensor methods and the `@` operator (mixed into Tensor)."""

    def matmul(self, other):
        return matmul(self, other)

    def mm(self, mat2):
        return mm(self, mat2)

    def bmm(self, mat2):
        return bmm(self, mat2)

    def tril(self, diagonal: int = 0):
        return tril(self, diagonal)

    def triu(self, diagonal: int = 0):
        return triu(self, diagonal)

    def norm(self, p="fro", dim=None, keepdim: bool = False, dtype: DType | None = None):
        return norm(self, p, dim, keepdim, dtype)

    # NOTE: every Tensor is a LinalgMethods, so the isinstance tests below ask "is it a
    # Tensor?" without importing tensor.py (which imports this module).

    def __matmul__(self, other):
        return ops.matmul(self, other) if isinstance(other, LinalgMethods) else NotImplemented

    def __rmatmul__(self, other):
        # Reached only when the left operand is not a Tensor, and there is no product of a
        # Python number with a matrix: Python then raises its TypeError, as PyTorch does.
        return ops.matmul(other, self) if isinstance(other, LinalgMethods) else NotImplemented
