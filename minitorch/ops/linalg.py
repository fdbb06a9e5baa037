"""The op table, linear algebra: matrix products, triangles (tril, triu) and norms.

See [Note: the op table] in registry.py.

[Note: matmul]
Two primitives do every product: `mm`, (n, k) @ (k, m), and `bmm`, a batch of them,
(b, n, k) @ (b, k, m). `matmul` is a composite that brings its operands to one of the two:

    (k,) @ (k,)            -> (1, k) @ (k, 1), then drop both added dims:   a 0-d dot product
    (n, k) @ (k,)          -> (n, k) @ (k, 1), then drop the column dim
    (..., n, k) @ (k, m)   -> fold the batch into rows: (B*n, k) @ (k, m), one mm
    (..., n, k) @ (..., k, m)  broadcast the batch dims, flatten them: one bmm

mm gets a row of its own, although bmm could do its work with a batch of 1, because it is the
product of every Linear layer: its graphs read `mm`, and backends hand it to BLAS as it is.
The derivatives are products again: for out = a @ b, grad_a = g @ b^T and grad_b = a^T @ g.

[Note: operands BLAS can read]
BLAS's gemm reads a matrix that is row-major or column-major in its last two dims, rows (or
columns) any distance apart: a transposed view (`k.transpose(-2, -1)`, `b^T` above) is read in
place, gemm's transpose flag says which. Other layouts are not BLAS's: an expanded operand
(stride 0: the gradient of `out.sum()` is a 1 broadcast to out's shape), a stepped matrix, a
flipped one. mm's and bmm's eager kernel is `blas.matmul` (minitorch/blas.py, [Note: calling
BLAS directly]): it calls numpy's own OpenBLAS with the operands' strides where that does less
work than np.matmul (a batch of big matrices, one call), copying only those layouts, and says
per product which way it went and why (`blas.product_plan(a, b)`). Where it hands a product to
np.matmul (2-D products, which numpy gives the same gemm, small batches, integers, no BLAS
found), the operands go through `gemm_ready` first: numpy 2 copies an unreadable layout to a
contiguous buffer and calls gemm anyway, numpy 1.26 runs its scalar loop, 10-20x slower ((64,
256, 64) @ (64, 64, 256) float32: ~400 ms, not ~22), so we make the copy numpy 2 would make
(the same bits). The compiled graphs' extern steps call these same kernels.
"""

from __future__ import annotations

import math

import numpy as np

from minitorch import blas
from minitorch.errors import DTypeError, MinitorchError, ShapeError, at_user_line
from minitorch.ops.meta import broadcast_shapes
from minitorch.ops.pointwise import abs, mul, pow, sqrt, to_copy
from minitorch.ops.reductions import amax, amin, sum
from minitorch.ops.registry import OpDef, TensorMeta, register
from minitorch.ops.selection import eq, masked_fill, ne, where
from minitorch.ops.views import expand, reshape, transpose

# the ops this family registers
__all__ = ["mm", "bmm", "matmul", "tril", "triu", "norm"]


def _check_dtypes(op: str, a, b) -> None:
    """Products take one dtype on both sides (PyTorch does not promote here), and not bool."""
    if a.dtype is not b.dtype:
        raise DTypeError(
            at_user_line(
                f"{op}: expected both operands to have the same dtype, "
                f"got {a.dtype.name} and {b.dtype.name}"
            )
        )
    if a.dtype.category == 0:
        raise DTypeError(at_user_line(f"{op}: not supported for dtype {a.dtype.name}"))


def _product_meta(op: str, ndim: int):
    """mm (ndim 2), bmm (ndim 3): (..., n, k) @ (..., k, m) -> (..., n, m), same batch."""

    def rule(a, b) -> TensorMeta:
        sa, sb = tuple(a.shape), tuple(b.shape)
        if len(sa) != ndim or len(sb) != ndim:
            raise ShapeError(
                at_user_line(f"{op}: expected two {ndim}-d tensors, got shapes {sa} and {sb}")
            )
        if sa[:-2] != sb[:-2]:
            raise ShapeError(at_user_line(f"{op}: batch sizes differ: shapes {sa} and {sb}"))
        if sa[-1] != sb[-2]:
            raise ShapeError(
                at_user_line(
                    f"{op}: shapes {sa} and {sb} cannot be multiplied ({sa[-1]} != {sb[-2]})"
                )
            )
        _check_dtypes(op, a, b)
        return TensorMeta(sa[:-1] + sb[-1:], a.dtype)

    rule.__name__ = f"{op}_meta"
    return rule


def _product(xp, a, b):
    """mm's and bmm's eager kernel: BLAS's gemm on the operands' strides, or xp.matmul."""
    if xp is np:
        return blas.matmul(a, b)
    return xp.matmul(a, b)


# why primitive: a contraction (k multiply-adds per output), handed to BLAS's gemm as a whole
mm = register(
    OpDef(
        "mm",
        "linalg",
        _product_meta("mm", 2),
        impl=_product,
        backward=lambda g, out, a, b: (mm(g, transpose(b, 0, 1)), mm(transpose(a, 0, 1), g)),
    )
)
# why primitive: mm over a batch dim in one call (attention, convolution as im2col)
bmm = register(
    OpDef(
        "bmm",
        "linalg",
        _product_meta("bmm", 3),
        impl=_product,
        backward=lambda g, out, a, b: (bmm(g, transpose(b, 1, 2)), bmm(transpose(a, 1, 2), g)),
    )
)


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for size in shape:
        n *= size
    return n


def _matmul_decomposition(a, b):
    sa, sb = tuple(a.shape), tuple(b.shape)
    if not sa or not sb:
        raise ShapeError(
            at_user_line(f"matmul: both arguments need at least 1 dim, got shapes {sa} and {sb}")
        )
    k, inner = sa[-1], sb[0] if len(sb) == 1 else sb[-2]
    if k != inner:
        raise ShapeError(
            at_user_line(f"matmul: shapes {sa} and {sb} cannot be multiplied ({k} != {inner})")
        )
    _check_dtypes("matmul", a, b)
    # A vector is a matrix with one row (on the left) or one column (on the right).
    rows = sa[:-1] if len(sa) > 1 else (1,)  # (..., n)
    m = sb[-1] if len(sb) > 1 else 1
    a = reshape(a, (1, k)) if len(sa) == 1 else a
    b = reshape(b, (k, 1)) if len(sb) == 1 else b
    if b.ndim == 2:
        # (..., n, k) @ (k, m): every row of every batch meets the same b: one mm
        flat = a if a.ndim == 2 else reshape(a, (_numel(rows), k))  # (B*n, k)
        out = mm(flat, b)  # (B*n, m)
        batch = sa[:-2]
    else:
        batch = broadcast_shapes("matmul", sa[:-2], sb[:-2])
        out = bmm(_batched(a, batch), _batched(b, batch))  # (B, n, m)
    # Drop the dims that the vectors gained; everything else is batch + (n, m).
    n = (sa[-2],) if len(sa) > 1 else ()
    final = batch + n + ((m,) if len(sb) > 1 else ())
    return out if tuple(out.shape) == final else reshape(out, final)


def _batched(x, batch: tuple[int, ...]):
    """x (..., r, c) broadcast to batch + (r, c), then flattened to (B, r, c) for bmm."""
    matrix = tuple(x.shape[-2:])
    if tuple(x.shape[:-2]) != batch:
        x = expand(x, batch + matrix)
    if len(batch) != 1:
        x = reshape(x, (_numel(batch),) + matrix)
    return x


matmul = register(OpDef("matmul", "composite", None, decomposition=_matmul_decomposition))

# ---- triangles and norms: composites -----------------------------------------------------


def _triangle(name: str, outside):
    """tril/triu: zero the entries `outside(rows, cols, diagonal)` marks, a constant mask."""

    def decomposition(x, diagonal: int = 0):
        from minitorch.factories import tensor

        if len(x.shape) < 2:
            raise ShapeError(
                at_user_line(
                    f"{name}: input tensor must have at least 2 dimensions, got shape "
                    f"{tuple(x.shape)}"
                )
            )
        rows, cols = x.shape[-2:]
        mask = tensor(outside(rows, cols, diagonal), device=x.device)  # (rows, cols)
        return masked_fill(x, mask, 0)

    decomposition.__name__ = name
    return decomposition


# tril keeps j <= i + diagonal; triu keeps j >= i + diagonal (the last two dims are (i, j))
tril = register(
    OpDef(
        "tril",
        "composite",
        None,
        decomposition=_triangle("tril", lambda n, m, k: ~np.tri(n, m, k, dtype=bool)),
    )
)
triu = register(
    OpDef(
        "triu",
        "composite",
        None,
        decomposition=_triangle("triu", lambda n, m, k: np.tri(n, m, k - 1, dtype=bool)),
    )
)


def _norm_decomposition(x, p=2, dim=None, keepdim: bool = False):
    """The vector p-norm over `dim` (every dim if None): (sum |x|^p)^(1/p), and its limits:
    p = inf is max |x|, -inf min |x|, 0 the count of non-zeros; 'fro' is p = 2."""
    if not x.dtype.is_floating_point:
        raise DTypeError(
            at_user_line(f"norm: expected a floating point tensor as input, got {x.dtype.name}")
        )
    if p == "fro":
        p = 2
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise MinitorchError(
            at_user_line(
                f"norm: p must be a number or 'fro', got {p!r} (the nuclear norm is not supported)"
            )
        )
    size = abs(x)
    if p == math.inf:
        return amax(size, dim=dim, keepdim=keepdim)
    if p == -math.inf:
        return amin(size, dim=dim, keepdim=keepdim)
    if p == 0:
        return sum(to_copy(ne(x, 0), dtype=x.dtype), dim=dim, keepdim=keepdim)
    if p == 1:
        return sum(size, dim=dim, keepdim=keepdim)
    if p == 2:
        return _root(sum(mul(x, x), dim=dim, keepdim=keepdim), 2)
    return _root(sum(pow(size, p), dim=dim, keepdim=keepdim), p)


def _root(total, p: float):
    """total^(1/p), whose gradient is 0 where the total is 0, as PyTorch's norm gives (the
    root's own derivative is infinite there, and inf * 0 would make the gradient NaN).

    The root is taken of 1 where the total is 0, so its derivative there is finite, and the
    outer `where` sends it no gradient: the double-`where` idiom.
    """
    zero = eq(total, 0)
    safe = where(zero, 1.0, total)
    return where(zero, 0.0, sqrt(safe) if p == 2 else pow(safe, 1.0 / p))


norm = register(OpDef("norm", "composite", None, decomposition=_norm_decomposition))
