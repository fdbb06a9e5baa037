"""The op table, advanced indexing: reads and writes at positions held in integer tensors.

See [Note: the op table] in registry.py. Basic indexing (ints, slices, None, `...`) is the view
op `index` (views.py); these two are PyTorch's aten `index.Tensor` and `index_put`:

    index_tensor   x[i0, i1, ...] where each entry is an integer tensor, or None for a whole
                   dim: a gather, so the result is a copy, never a view
    index_put      base with base[i0, i1, ...] replaced by (or, accumulate=True, added to) src:
                   index_tensor's gradient, and the out-of-place form of `x[idx] = v`

[Note: advanced indexing]
The index tensors broadcast together to one shape B, and each position p of B names one
element along the dims they index: x[i, j][p] == x[i[p], j[p]]. Where B goes in the result is
numpy's (and PyTorch's) rule: if the indexed dims are next to each other, B replaces them in
place; if a whole dim (None) separates them, there is no natural place, so B goes first:

    x.shape == (5, 6, 7), i.shape == j.shape == (2, 3)
    index_tensor(x, None, i, j)   ->  (5, 2, 3)       B replaces dims 1 and 2
    index_tensor(x, i, None, j)   ->  (2, 3, 6)       separated: B first, then dim 1

Which positions exist depends on the index's *values*, so the range check is the kernel's (an
out-of-range index raises `IndexOutOfRangeError`), but the shape depends only on the shapes:
these ops trace, and compile, like any other. Boolean masks, whose result's shape depends on
how many elements are True, are turned into integer indices before they reach the table
(minitorch/functional/indexing.py).
"""

from __future__ import annotations

from minitorch.dtype import int32, int64
from minitorch.errors import DTypeError, IndexOutOfRangeError, ShapeError, at_user_line
from minitorch.ops.helpers import is_tensor, written_value_grad
from minitorch.ops.meta import broadcast_shapes, check_scalars_fit, operand_shape
from minitorch.ops.registry import OpDef, TensorMeta, register
from minitorch.ops.views_meta import broadcasts_to

# the ops this family registers
__all__ = ["index_tensor", "index_put"]


# ---- shape rules -------------------------------------------------------------------------


def _check_indices(op: str, x, indices: tuple) -> list[int]:
    """The positions of the tensors among `indices`, after checking them against x."""
    if len(indices) > len(x.shape):
        raise ShapeError(
            at_user_line(
                f"{op}: too many indices for tensor of dimension {len(x.shape)} "
                f"(got {len(indices)})"
            )
        )
    where = []
    for d, i in enumerate(indices):
        if i is None:
            continue
        if getattr(i, "dtype", None) not in (int64, int32):
            got = getattr(i, "dtype", None)
            raise DTypeError(
                at_user_line(
                    f"{op}: tensors used as indices must be int64 or int32 tensors, got "
                    f"{type(i).__name__ if got is None else got.name} at position {d}"
                )
            )
        where.append(d)
    if not where:
        raise ShapeError(at_user_line(f"{op}: expected at least one index tensor, got none"))
    return where


def indexed_shape(op: str, x, indices: tuple) -> tuple[int, ...]:
    """The shape of x[indices]; see [Note: advanced indexing]."""
    where = _check_indices(op, x, indices)
    shapes = [tuple(indices[d].shape) for d in where]
    try:
        b = broadcast_shapes(op, *shapes)
    except ShapeError:
        shown = ", ".join(str(list(s)) for s in shapes)
        raise ShapeError(
            at_user_line(
                f"{op}: shape mismatch: indexing tensors could not be broadcast together with "
                f"shapes {shown}"
            )
        ) from None
    shape = tuple(x.shape)
    first, last = where[0], where[-1]
    if last - first + 1 == len(where):  # adjacent: B replaces the indexed dims in place
        return (*shape[:first], *b, *shape[last + 1 :])
    return (*b, *(n for d, n in enumerate(shape) if d not in where))


def index_tensor_meta(x, *indices) -> TensorMeta:
    return TensorMeta(indexed_shape("index", x, indices), x.dtype)


def index_put_meta(base, src, *indices, accumulate: bool = False) -> TensorMeta:
    """`base` with base[indices] written: src must broadcast to the shape that read has."""
    region = indexed_shape("index_put", base, indices)
    check_scalars_fit("index_put", base.dtype, src)
    src_shape = operand_shape("index_put", src)
    if not broadcasts_to(src_shape, region):
        raise ShapeError(
            at_user_line(
                f"index_put: shape mismatch: value tensor of shape {src_shape} cannot be "
                f"broadcast to indexing result of shape {region}"
            )
        )
    return TensorMeta(tuple(base.shape), base.dtype)


# ---- kernels -----------------------------------------------------------------------------


def numpy_key(op: str, a, indices: tuple) -> tuple:
    """indices as a numpy key, each index checked against the size of the dim it reads."""
    key = []
    for d, i in enumerate(indices):
        if i is None:
            key.append(slice(None))
            continue
        size = a.shape[d]
        if i.size and not (-size <= int(i.min()) and int(i.max()) < size):
            bad = int(i.min()) if int(i.min()) < -size else int(i.max())
            raise IndexOutOfRangeError(
                at_user_line(
                    f"{op}: index {bad} is out of bounds for dimension {d} with size {size} "
                    f"(indexing a tensor of shape {tuple(a.shape)})"
                )
            )
        key.append(i)
    return tuple(key)


def _index_tensor_impl(xp, a, *indices):
    return a[numpy_key("index", a, indices)]  # advanced indexing: numpy copies


def _index_put_impl(xp, base, src, *indices, accumulate=False):
    out = base.copy()  # new memory; also materialises an expanded (stride-0) base
    key = numpy_key("index_put", out, indices)
    if accumulate:
        xp.add.at(out, key, src)  # repeated positions add up
    else:
        out[key] = src  # repeated positions: one of the writes wins (the last, in numpy)
    return out


# ---- gradients ---------------------------------------------------------------------------


def _index_tensor_backward(g, out, x, *indices):
    # Each element of the result is one element of x: its gradient goes back there, and
    # positions read twice get both gradients.
    from minitorch.factories import zeros
    from minitorch.ops.views import expand

    zero = expand(zeros((), dtype=g.dtype, device=g.device), tuple(x.shape))
    return (index_put(zero, g, *indices, accumulate=True), *(None for _ in indices))


def _index_put_backward(g, out, base, src, *indices, accumulate=False):
    # out is base outside the written positions and src (plus base, if accumulating) there.
    grad_base = g if accumulate else index_put(g, 0, *indices)
    nones = tuple(None for _ in indices)
    if not is_tensor(src):
        return (grad_base, None, *nones)
    # As in PyTorch, every write gets its gradient, even one that another write overwrote.
    return (grad_base, written_value_grad(index_tensor(g, *indices), src), *nones)


# why primitive: a read at positions computed at run time (an indirect load), which no view
# can express; its result's shape still depends on shapes only
index_tensor = register(
    OpDef(
        "index_tensor",
        "gather",
        index_tensor_meta,
        impl=_index_tensor_impl,
        backward=_index_tensor_backward,
        lowering="lowered",
    )
)
# why primitive: a write at positions computed at run time (an indirect store), with or
# without accumulation: the gradient of index_tensor, and the out-of-place x[idx] = v
index_put = register(
    OpDef(
        "index_put",
        "scatter",
        index_put_meta,
        impl=_index_put_impl,
        backward=_index_put_backward,
    )
)
