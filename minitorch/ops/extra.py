"""The op table, arrangements and running results: outer, diag, repeat, flip, std, any/all,
cumsum and cumprod.

See [Note: the op table] in registry.py. Every op here but the two scans is a composite, so it
compiles with no lowering of its own:

    outer            a column times a row: (n, 1) * (1, m)
    diag, diagonal   a read (or a gather into a matrix) at constant positions: index_tensor
    repeat           reshape to interleave a size-1 dim before each, expand it, reshape back
    repeat_interleave  the same with the size-1 dim after the repeated one
    flip             index_tensor with a constant reversed arange along each flipped dim
    std              sqrt(var)
    any, all         a count of the (non)zero elements compared with 0 (empty: False, True)

[Note: constant positions]
diag, diagonal and flip read positions that depend on shapes alone, so their index tensors are
made while decomposing, from numpy (as tril's mask is, in linalg.py): the graph holds them as
constants and the read is index_tensor, a lowered gather whose gradient scatters back.

cumsum and cumprod are primitives (a scan carries a value along a dim, which no pointwise op or
reduction expresses) and run as extern kernels.
"""

from __future__ import annotations

import builtins

import numpy as np

from minitorch.dtype import int64
from minitorch.errors import DTypeError, ShapeError, at_user_line
from minitorch.ops import meta as m
from minitorch.ops.indexing import index_tensor
from minitorch.ops.pointwise import mul, sqrt
from minitorch.ops.reductions import sum, var
from minitorch.ops.registry import OpDef, TensorMeta, register
from minitorch.ops.selection import eq, ne, where
from minitorch.ops.views import cat, clone, expand, permute, reshape

# the ops this family registers
__all__ = [
    "outer",
    "diag",
    "diagonal",
    "repeat",
    "repeat_interleave",
    "flip",
    "std",
    "any",
    "all",
    "cumsum",
    "cumprod",
]


def _constant(positions: np.ndarray, like, dtype=np.int64):
    """An index tensor (or a mask) on `like`'s device ([Note: constant positions])."""
    from minitorch.factories import tensor

    return tensor(positions.astype(dtype), device=like.device)


def _check_ndim(op: str, x, allowed: tuple[int, ...]) -> None:
    if len(x.shape) not in allowed:
        wanted = " or ".join(f"{n}-D" for n in allowed)
        raise ShapeError(
            at_user_line(f"{op}: expected a {wanted} tensor, got shape {tuple(x.shape)}")
        )


# ---- outer, diag, diagonal ---------------------------------------------------------------


def _outer(a, b):
    _check_ndim("outer", a, (1,))
    _check_ndim("outer", b, (1,))
    return mul(reshape(a, (a.shape[0], 1)), reshape(b, (1, b.shape[0])))  # (n, m)


def _diagonal(x, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """x[..., i, i + offset] over i, the diagonal's dim last, as PyTorch's diagonal."""
    if len(x.shape) < 2:
        raise ShapeError(
            at_user_line(
                f"diagonal: expected a tensor of at least 2 dimensions, got shape {tuple(x.shape)}"
            )
        )
    d1 = m.normalize_dims("diagonal", dim1, len(x.shape))[0]
    d2 = m.normalize_dims("diagonal", dim2, len(x.shape))[0]
    if d1 == d2:
        raise ShapeError(
            at_user_line(f"diagonal: dim1 and dim2 cannot be the same dim ({dim1} and {dim2})")
        )
    rest = tuple(d for d in range(len(x.shape)) if d not in (d1, d2))
    x = permute(x, rest + (d1, d2))  # (..., n, m)
    n, cols = x.shape[-2:]
    length = max(min(n, cols - offset) if offset >= 0 else min(n + offset, cols), 0)
    i = np.arange(length)
    rows, columns = i + max(-offset, 0), i + max(offset, 0)
    return index_tensor(x, *(None,) * len(rest), _constant(rows, x), _constant(columns, x))


def _diag(x, diagonal: int = 0):
    """A vector onto a matrix's diagonal, or a matrix's diagonal as a vector."""
    from minitorch.factories import zeros

    _check_ndim("diag", x, (1, 2))
    if len(x.shape) == 2:
        return _diagonal(x, diagonal)
    # Each position of the (N, N) result reads x, or the one zero appended after it.
    n = x.shape[0]
    size = n + abs(diagonal)
    positions = np.full((size, size), n)
    i = np.arange(n)
    positions[i + max(-diagonal, 0), i + max(diagonal, 0)] = i
    zero = zeros(1, dtype=x.dtype, device=x.device)
    return index_tensor(cat(x, zero, dim=0), _constant(positions, x))  # (N, N)


outer = register(OpDef("outer", "composite", None, decomposition=_outer))
diagonal = register(OpDef("diagonal", "composite", None, decomposition=_diagonal))
diag = register(OpDef("diag", "composite", None, decomposition=_diag))

# ---- repeat, repeat_interleave, flip -----------------------------------------------------


def _repeat(x, repeats):
    """Tile x: repeat(x, (2, 3)) is x's (a, b) laid out 2 times down and 3 times across."""
    repeats = tuple(repeats)
    if len(repeats) < len(x.shape):
        raise ShapeError(
            at_user_line(
                f"repeat: the number of repeats {repeats} cannot be smaller than the number of "
                f"dimensions of the tensor {tuple(x.shape)}"
            )
        )
    if builtins.any(r < 0 for r in repeats):
        raise ShapeError(at_user_line(f"repeat: repeats {repeats} cannot be negative"))
    shape = (1,) * (len(repeats) - len(x.shape)) + tuple(x.shape)
    spread = tuple(n for size in shape for n in (1, size))  # (1, s0, 1, s1, ...)
    tiled = tuple(n for r, size in zip(repeats, shape) for n in (r, size))  # (r0, s0, ...)
    out = expand(reshape(x, spread), tiled)
    # NOTE: a copy, as PyTorch's: reshaping an expanded tensor is a view of x when the
    # repeated dims are 1 (x.repeat(2, 1) of a (1, 3) x), and a write into x must not show
    return clone(reshape(out, tuple(r * size for r, size in zip(repeats, shape))))


def _repeat_interleave(x, repeats: int, dim: int | None = None):
    """Each element `repeats` times in a row along dim (the flattened x when dim is None)."""
    if repeats < 0:
        raise ShapeError(at_user_line(f"repeat_interleave: repeats {repeats} must be >= 0"))
    if dim is None:
        x, dim = reshape(x, (-1,)), 0
    if len(x.shape) == 0:
        x = reshape(x, (1,))
    d = m.normalize_dims("repeat_interleave", dim, len(x.shape))[0]
    shape = tuple(x.shape)
    out = expand(
        reshape(x, shape[: d + 1] + (1,) + shape[d + 1 :]),
        shape[: d + 1] + (repeats,) + shape[d + 1 :],
    )  # (..., n, repeats, ...)
    return clone(reshape(out, shape[:d] + (shape[d] * repeats,) + shape[d + 1 :]))  # a copy


def _flip(x, dims):
    """Reverse the order of the elements along each of `dims`."""
    dims = m.normalize_dims("flip", dims, len(x.shape))
    if not dims:
        return clone(x)  # nothing to flip: a copy all the same, as PyTorch's
    # NOTE: one index per flipped dim would broadcast them together; read one dim at a time.
    for d in dims:
        x = index_tensor(x, *(None,) * d, _constant(np.arange(x.shape[d])[::-1], x))
    return x


repeat = register(OpDef("repeat", "composite", None, decomposition=_repeat))
repeat_interleave = register(
    OpDef("repeat_interleave", "composite", None, decomposition=_repeat_interleave)
)
flip = register(OpDef("flip", "composite", None, decomposition=_flip))

# ---- std, any, all -----------------------------------------------------------------------


def _std(x, dim=None, correction=1, keepdim: bool = False):
    if not x.dtype.is_floating_point:
        raise DTypeError(
            at_user_line(f"std: expected a floating point input, got dtype {x.dtype.name}")
        )
    return sqrt(var(x, dim=dim, correction=correction, keepdim=keepdim))


def _any(x, dim=None, keepdim: bool = False):
    """Is any element nonzero (NaN counts as nonzero)? Over nothing: False."""
    return ne(sum(ne(x, 0), dim=dim, keepdim=keepdim), 0)


def _all(x, dim=None, keepdim: bool = False):
    """Is every element nonzero? Over nothing: True."""
    return eq(sum(eq(x, 0), dim=dim, keepdim=keepdim), 0)


std = register(OpDef("std", "composite", None, decomposition=_std))
any = register(OpDef("any", "composite", None, decomposition=_any))  # noqa: A001
all = register(OpDef("all", "composite", None, decomposition=_all))  # noqa: A001

# ---- cumsum, cumprod ---------------------------------------------------------------------


def _scan_meta(op: str):
    """Same shape; bool and integers accumulate in int64, floats in their own dtype."""

    def rule(x, dim: int) -> TensorMeta:
        m.normalize_dims(op, dim, len(x.shape))
        dtype = x.dtype if x.dtype.is_floating_point else int64
        return TensorMeta(tuple(x.shape), dtype)

    rule.__name__ = f"{op}_meta"
    return rule


def _scan_impl(scan):
    def impl(xp, a, dim: int):
        out_dtype = a.dtype if a.dtype.kind == "f" else np.int64
        if a.ndim == 0:  # one element: dim 0 or -1
            return a.astype(out_dtype, copy=True)
        return getattr(xp, scan)(a, axis=dim, dtype=out_dtype)

    return impl


def _moved_last(x, d: int):
    """x with dim d moved to the end, and the permutation that undoes it."""
    order = tuple(i for i in range(len(x.shape)) if i != d) + (d,)
    inverse = tuple(sorted(range(len(order)), key=lambda i: order[i]))
    return permute(x, order), inverse


def _cumsum_backward(g, out, x, dim: int):
    # out_j = sum_{i <= j} x_i, so d/dx_i = sum_{j >= i} g_j: a cumsum read backwards.
    return (flip(cumsum(flip(g, dim), dim), dim),)


def _cumprod_backward(g, out, x, dim: int):
    # d out_j / d x_i = prod_{k <= j, k != i} x_k for j >= i. Dividing out by x_i would fail
    # where x_i == 0, so each row i takes x with x_i replaced by 1 and scans it: exact at
    # zeros, at O(n^2) memory along dim.
    if len(x.shape) == 0:
        return (g,)
    d = m.normalize_dims("cumprod", dim, len(x.shape))[0]
    x_last, inverse = _moved_last(x, d)  # (..., n)
    g_last, _ = _moved_last(g, d)
    n = x.shape[d]
    rows = expand(reshape(x_last, (*x_last.shape[:-1], 1, n)), (*x_last.shape, n))  # (..., i, k)
    rows = where(_constant(np.eye(n), x, bool), 1, rows)  # x_i -> 1 in row i
    partial = cumprod(rows, -1)  # (..., i, j): prod_{k <= j, k != i} x_k
    later = _constant(np.triu(np.ones((n, n))), x, bool)  # (i, j): j >= i
    terms = mul(mul(partial, later), reshape(g_last, (*g_last.shape[:-1], 1, n)))
    return (permute(sum(terms, dim=-1), inverse),)


# why primitive: a scan carries a running sum along a dim (no pointwise op or reduction can)
cumsum = register(
    OpDef(
        "cumsum",
        "reduction",
        _scan_meta("cumsum"),
        impl=_scan_impl("cumsum"),
        backward=_cumsum_backward,
    )
)
# why primitive: cumsum's scan with a running product
cumprod = register(
    OpDef(
        "cumprod",
        "reduction",
        _scan_meta("cumprod"),
        impl=_scan_impl("cumprod"),
        backward=_cumprod_backward,
    )
)
