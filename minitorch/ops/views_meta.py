"""Shape and dtype rules of the view, indexing and joining ops (minitorch/ops/views.py).

Each rule takes the op's arguments (tensors, real or fake, and Python values) and returns the
output's `TensorMeta`, or raises a `ShapeError`/`DTypeError` that names the op and the shapes.

[Note: basic indexing keys]
`x[key]` reaches the op table with its key in one canonical form, so that graphs, the meta rule
and the kernel all read the same thing: a tuple with, in order, one entry per indexed dim (an
int in range, or `slice(start, stop, step)` with 0 <= start <= stop <= size and step >= 1) and
a `None` wherever a new dim of size 1 is inserted. `...` is spelled out as full slices and
trailing full slices are dropped, since they change nothing:

    x.shape == (4, 5):   x[-1, None, ::2]  ->  (3, None, slice(0, 5, 2))   shape (1, 3)
                         x[..., 1:]        ->  (slice(0, 4, 1), slice(1, 5, 1))
                         x[0, ...]         ->  (0,)
"""

from __future__ import annotations

import operator

from minitorch.dtype import promote_types
from minitorch.errors import DTypeError, IndexOutOfRangeError, ShapeError, at_user_line
from minitorch.ops.meta import as_dim, check_scalars_fit, operand_shape
from minitorch.ops.registry import TensorMeta


def normalize_dim(op: str, dim: int, ndim: int) -> int:
    """`dim` as a non-negative axis of an `ndim`-d tensor (a 0-d tensor accepts 0 and -1)."""
    size, dim = max(ndim, 1), as_dim(op, dim)
    if not -size <= dim < size:
        raise ShapeError(at_user_line(
            f"{op}: dimension out of range (expected to be in range of [{-size}, {size - 1}], "
            f"but got {dim})"
        ))
    return dim % size


def normalize_permutation(op: str, dims, ndim: int) -> tuple[int, ...]:
    """`dims` as a permutation of range(ndim), negative dims allowed: (-1, 0) -> (1, 0)."""
    dims = tuple(dims)
    if len(dims) != ndim:
        raise ShapeError(at_user_line(
            f"{op}: the number of dims {len(dims)} in {dims} does not match the tensor's {ndim}"
        ))
    out = tuple(normalize_dim(op, d, ndim) for d in dims)
    if len(set(out)) != ndim:
        raise ShapeError(at_user_line(f"{op}: repeated dim in {dims}"))
    return out


def permute_meta(x, dims) -> TensorMeta:
    order = normalize_permutation("permute", dims, len(x.shape))
    return TensorMeta(tuple(x.shape[d] for d in order), x.dtype)


# ---- basic indexing ----------------------------------------------------------------------


def _as_int(item) -> int:
    """An index or slice bound: a Python int, a numpy integer or a 0-d integer tensor."""
    if type(item) is int:
        return item
    if isinstance(item, bool):
        raise DTypeError(at_user_line(
            "indexing with a bool is not supported; use an int, a slice, None or ..."
        ))
    if hasattr(item, "_data") and item.ndim == 0 and not item.dtype.is_floating_point:
        return int(item.item())
    try:
        return operator.index(item)
    except TypeError:
        raise DTypeError(at_user_line(
            f"only integers, slices (`:`), ellipsis (`...`) and None are valid indices "
            f"(advanced indexing is not supported), got {type(item).__name__}"
        )) from None


def normalize_index(shape: tuple[int, ...], key) -> tuple:
    """`key` of `x[key]` in canonical form; see [Note: basic indexing keys]."""
    items = key if type(key) is tuple else (key,)
    ellipses = used = 0  # how many `...`, and how many dims the other items index
    for item in items:
        if item is Ellipsis:
            ellipses += 1
        elif item is not None:
            used += 1
    if ellipses > 1:
        raise ShapeError(at_user_line("an index can only have a single ellipsis ('...')"))
    if used > len(shape):
        raise ShapeError(at_user_line(
            f"too many indices for tensor of dimension {len(shape)} (got {used})"
        ))
    out: list = []
    dim = 0
    for item in items:
        if item is None:
            out.append(None)
        elif item is Ellipsis:
            out.extend(slice(0, n, 1) for n in shape[dim:dim + len(shape) - used])
            dim += len(shape) - used
        elif type(item) is slice:
            out.append(_normalize_slice(item, shape[dim]))
            dim += 1
        else:
            i, size = _as_int(item), shape[dim]
            if not -size <= i < size:
                raise IndexOutOfRangeError(at_user_line(
                    f"index {i} is out of bounds for dimension {dim} with size {size}"
                ))
            out.append(i % size)
            dim += 1
    while out and type(out[-1]) is slice and out[-1] == slice(0, shape[dim - 1], 1):
        out.pop()  # a trailing full slice changes nothing
        dim -= 1
    return tuple(out)


def _normalize_slice(item: slice, size: int) -> slice:
    """slice(start, stop, step) with 0 <= start <= stop <= size and step >= 1."""
    start, stop, step = item.start, item.stop, item.step
    step = 1 if step is None else _as_int(step)
    if step <= 0:
        raise ShapeError(at_user_line(f"slice step must be positive, got {step}"))
    start = None if start is None else _as_int(start)
    stop = None if stop is None else _as_int(stop)
    start, stop, step = slice(start, stop, step).indices(size)
    return slice(start, max(start, stop), step)


def index_shape(shape: tuple[int, ...], key: tuple) -> tuple[int, ...]:
    """The shape of `x[key]` for a canonical key: ints drop a dim, None inserts one."""
    out = []
    dim = 0
    for item in key:
        if item is None:
            out.append(1)
            continue
        if isinstance(item, slice):
            out.append(len(range(item.start, item.stop, item.step)))
        dim += 1
    return (*out, *shape[dim:])


def index_meta(x, key) -> TensorMeta:
    """x[key]: basic indexing (validates the key; a canonical key passes through unchanged)."""
    shape = tuple(x.shape)
    return TensorMeta(index_shape(shape, normalize_index(shape, key)), x.dtype)


def index_scatter_meta(base, src, key) -> TensorMeta:
    """`base` with `base[key]` replaced by `src`, which must broadcast to that region."""
    check_value_fits("index_scatter", base, src, key)
    return TensorMeta(tuple(base.shape), base.dtype)


def check_value_fits(op: str, base, src, key) -> None:
    """A write of `src` into base[key]: src must broadcast to the region, and a Python number
    must fit base's dtype. The in-place ops check this themselves, so that the error names
    them (`copy_`, not the `index_scatter` they run)."""
    shape = tuple(base.shape)
    region = index_shape(shape, normalize_index(shape, key))
    src_shape = operand_shape(op, src)
    check_scalars_fit(op, base.dtype, src)
    if not _broadcasts_to(src_shape, region):
        raise ShapeError(at_user_line(
            f"{op}: shape mismatch: value tensor of shape {src_shape} cannot be "
            f"broadcast to indexing result of shape {region}"
        ))


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Can `shape` be stretched to exactly `target`? Extra leading 1s are allowed."""
    while len(shape) > len(target) and shape[0] == 1:
        shape = shape[1:]
    if len(shape) > len(target):
        return False
    return all(n in (1, t) for n, t in zip(shape, target[len(target) - len(shape):]))


# ---- joining -----------------------------------------------------------------------------


def _joined(tensors: tuple) -> list:
    """The tensors cat really joins: PyTorch skips 1-d empty tensors (shape (0,))."""
    return [t for t in tensors if tuple(t.shape) != (0,)]


def cat_meta(*tensors, dim: int = 0) -> TensorMeta:
    """Join along `dim`: every other size must match; dtypes promote, as for `+`."""
    if not tensors:
        raise ShapeError(at_user_line("cat(): expected a non-empty list of Tensors"))
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = promote_types(dtype, t.dtype)
    joined = _joined(tensors)
    if not joined:
        return TensorMeta((0,), dtype)
    first = tuple(joined[0].shape)
    for i, t in enumerate(tensors):
        if len(t.shape) == 0:
            raise ShapeError(at_user_line(
                f"cat(): zero-dimensional tensor (at position {i}) cannot be concatenated"
            ))
    dim = normalize_dim("cat", dim, len(first))
    total = 0
    for i, t in enumerate(tensors):
        shape = tuple(t.shape)
        if shape == (0,):
            continue
        if len(shape) != len(first):
            raise ShapeError(at_user_line(
                f"cat(): tensors must have same number of dimensions: got {len(first)} and "
                f"{len(shape)} (shapes {first} and {shape})"
            ))
        for d, (n, m) in enumerate(zip(first, shape)):
            if d != dim and n != m:
                raise ShapeError(at_user_line(
                    f"cat(): sizes of tensors must match except in dimension {dim}. Expected "
                    f"size {n} but got size {m} for tensor number {i} in the list "
                    f"(shapes {first} and {shape})"
                ))
        total += shape[dim]
    return TensorMeta((*first[:dim], total, *first[dim + 1:]), dtype)


def cat_offsets(tensors, dim: int) -> list[tuple[int, int] | None]:
    """Where each input lands along `dim` of cat's result: (start, stop), None if skipped."""
    joined = _joined(tuple(tensors))
    if not joined:
        return [None] * len(tensors)
    dim = normalize_dim("cat", dim, len(joined[0].shape))
    out: list[tuple[int, int] | None] = []
    start = 0
    for t in tensors:
        if tuple(t.shape) == (0,):
            out.append(None)
            continue
        out.append((start, start + t.shape[dim]))
        start += t.shape[dim]
    return out


# ---- views that need compatible strides --------------------------------------------------


def view_is_possible(shape, strides, new_shape) -> bool:
    """Can memory laid out as (shape, strides) be read as `new_shape` without a copy?

    Neighbouring dims whose strides chain (stride[i] == size[i+1] * stride[i+1]) form one
    contiguous *chunk*; a view may split or merge dims only within a chunk, so the new shape
    must group, left to right, into runs whose sizes multiply to each chunk's size. Size-1 dims
    are ignored: their stride never matters.

        shape (2, 3) strides (3, 1)  ->  one chunk of 6: any new shape of 6 elements
        shape (3, 2) strides (1, 3)  ->  (x.T of the above) two chunks 3 | 2: (3, 2) or (3, 1, 2)
    """
    if 0 in shape:
        return True  # no element: any layout will do
    chunks: list[int] = []
    last_stride = None
    for n, s in zip(shape, strides):
        if n == 1:
            continue
        if chunks and last_stride == n * s:
            chunks[-1] *= n  # continues the chunk started by an outer dim
        else:
            chunks.append(n)
        last_stride = s
    sizes = [n for n in new_shape if n != 1]
    i = 0
    for chunk in chunks:
        run = 1
        while run < chunk and i < len(sizes):
            run *= sizes[i]
            i += 1
        if run != chunk:
            return False
    return i == len(sizes)
