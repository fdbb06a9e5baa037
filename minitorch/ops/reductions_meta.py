"""Shape and dtype rules of the reductions and of the ops that select along a dim.

Each rule takes the op's arguments (real or fake tensors, Python values) and returns the
output's `TensorMeta`, or raises a `ShapeError`/`DTypeError` naming the op, the shapes and the
dims, as the shared rules in meta.py do.
"""

from __future__ import annotations

from minitorch.dtype import int64
from minitorch.errors import ArgumentTypeError, DTypeError, ShapeError, at_user_line
from minitorch.ops.meta import normalize_dims
from minitorch.ops.registry import TensorMeta


def reduced_shape(shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool):
    """`shape` without the dims in `dims` (or with them set to 1 when keepdim)."""
    return tuple(1 if i in dims else n for i, n in enumerate(shape) if keepdim or i not in dims)


def _check_nonempty(op: str, shape: tuple[int, ...], dims: tuple[int, ...]) -> None:
    """A max, a min or an arg-max over no elements has no value, so PyTorch refuses it."""
    for d in dims:
        if shape[d] == 0:
            raise ShapeError(
                at_user_line(f"{op}(): cannot reduce over dim {d} of size 0 (shape {shape})")
            )


def extreme_meta(op: str):
    """amax, amin: reduce `dim` (a tuple, or None for all), keep the input's dtype."""

    def rule(x, dim=None, keepdim: bool = False) -> TensorMeta:
        shape = tuple(x.shape)
        dims = normalize_dims(op, dim, len(shape))
        _check_nonempty(op, shape, dims)
        return TensorMeta(reduced_shape(shape, dims, keepdim), x.dtype)

    rule.__name__ = f"{op}_meta"
    return rule


def arg_extreme_meta(op: str):
    """argmax, argmin: int64 indices over one dim; dim=None searches the flattened tensor."""

    def rule(x, dim: int | None = None, keepdim: bool = False) -> TensorMeta:
        shape = tuple(x.shape)
        dims = normalize_dims(op, dim, len(shape))
        _check_nonempty(op, shape, dims)
        if dim is None:  # the index into the flattened tensor
            return TensorMeta((1,) * len(shape) if keepdim else (), int64)
        return TensorMeta(reduced_shape(shape, dims, keepdim), int64)

    rule.__name__ = f"{op}_meta"
    return rule


def topk_indices_meta(
    x, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> TensorMeta:
    """The positions of the k largest (or smallest) entries along `dim`: size k there."""
    shape = tuple(x.shape)
    (d,) = normalize_dims("topk", dim, len(shape)) or (0,)
    size = shape[d] if shape else 1  # a 0-d tensor holds one entry (and gives it for any k)
    if isinstance(k, bool) or not isinstance(k, int):
        raise ArgumentTypeError(at_user_line(f"topk(): k must be an int, got {k!r}"))
    if not 0 <= k <= size:
        raise ShapeError(
            at_user_line(
                f"topk(): k={k} is out of range for dim {dim} of size {size} (shape {shape})"
            )
        )
    out = shape[:d] + (k,) + shape[d + 1 :] if shape else ()
    return TensorMeta(out, int64)


def _check_index(op: str, index) -> None:
    if index.dtype is not int64:
        raise DTypeError(
            at_user_line(f"{op}(): expected an int64 index, got dtype {index.dtype.name}")
        )


def _check_fits(op: str, dim: int, index_shape, shape, what: str) -> None:
    """The index may be smaller than `shape` in every dim but `dim`, never larger."""
    if len(index_shape) != len(shape):
        raise ShapeError(
            at_user_line(
                f"{op}(): index {index_shape} and {what} {shape} must have the same number of dims"
            )
        )
    for d, (n, m) in enumerate(zip(index_shape, shape)):
        if d != dim and n > m:
            raise ShapeError(
                at_user_line(
                    f"{op}(): index {index_shape} is larger than {what} {shape} in dim {d}"
                )
            )


def gather_meta(x, dim: int, index) -> TensorMeta:
    """out[i][j][k] = x[index[i][j][k]][j][k] for dim 0: the shape of the index."""
    _check_index("gather", index)
    (d,) = normalize_dims("gather", dim, len(x.shape)) or (0,)
    _check_fits("gather", d, tuple(index.shape), tuple(x.shape), "input")
    return TensorMeta(tuple(index.shape), x.dtype)


def scatter_add_meta(x, dim: int, index, src) -> TensorMeta:
    """x with src[i][j][k] added at [index[i][j][k]][j][k] for dim 0: the shape of x."""
    _check_index("scatter_add", index)
    if src.dtype is not x.dtype:
        raise DTypeError(
            at_user_line(
                f"scatter_add(): src has dtype {src.dtype.name}, but input has {x.dtype.name}"
            )
        )
    if tuple(src.shape) != tuple(index.shape):
        raise ShapeError(
            at_user_line(
                f"scatter_add(): src {tuple(src.shape)} and index {tuple(index.shape)} "
                "must have the same shape"
            )
        )
    (d,) = normalize_dims("scatter_add", dim, len(x.shape)) or (0,)
    _check_fits("scatter_add", d, tuple(index.shape), tuple(x.shape), "input")
    return TensorMeta(tuple(x.shape), x.dtype)
