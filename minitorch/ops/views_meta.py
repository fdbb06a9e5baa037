"""Shape and dtype rules of the view, indexing and joining ops (minitorch/ops/views.py).

Each rule takes the op's arguments (tensors, real or fake, and Python values) and returns the
output's `TensorMeta`, or raises a `ShapeError`/`DTypeError` that names the op and the shapes.
The view ops have a second rule, for their output's strides, which fake tensors need too: see
[Note: the strides of views] (`STRIDE_RULES`, at the end).

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
        raise ShapeError(
            at_user_line(
                f"{op}: dimension out of range (expected to be in range of [{-size}, {size - 1}], "
                f"but got {dim})"
            )
        )
    return dim % size


def normalize_permutation(op: str, dims, ndim: int) -> tuple[int, ...]:
    """`dims` as a permutation of range(ndim), negative dims allowed: (-1, 0) -> (1, 0)."""
    dims = tuple(dims)
    if len(dims) != ndim:
        raise ShapeError(
            at_user_line(
                f"{op}: the number of dims {len(dims)} in {dims} does not match the tensor's {ndim}"
            )
        )
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
        raise DTypeError(
            at_user_line("indexing with a bool is not supported; use an int, a slice, None or ...")
        )
    if hasattr(item, "_data") and item.ndim == 0 and not item.dtype.is_floating_point:
        return int(item.item())
    try:
        return operator.index(item)
    except TypeError:
        raise DTypeError(
            at_user_line(
                f"only integers, slices (`:`), ellipsis (`...`), None and long, int or bool "
                f"tensors are valid indices, got {type(item).__name__}"
            )
        ) from None


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
        raise ShapeError(
            at_user_line(f"too many indices for tensor of dimension {len(shape)} (got {used})")
        )
    out: list = []
    dim = 0
    for item in items:
        if item is None:
            out.append(None)
        elif item is Ellipsis:
            out.extend(slice(0, n, 1) for n in shape[dim : dim + len(shape) - used])
            dim += len(shape) - used
        elif type(item) is slice:
            out.append(_normalize_slice(item, shape[dim]))
            dim += 1
        else:
            i, size = _as_int(item), shape[dim]
            if not -size <= i < size:
                raise IndexOutOfRangeError(
                    at_user_line(f"index {i} is out of bounds for dimension {dim} with size {size}")
                )
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
    if not broadcasts_to(src_shape, region):
        raise ShapeError(
            at_user_line(
                f"{op}: shape mismatch: value tensor of shape {src_shape} cannot be "
                f"broadcast to indexing result of shape {region}"
            )
        )


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Can `shape` be stretched to exactly `target`? Extra leading 1s are allowed."""
    while len(shape) > len(target) and shape[0] == 1:
        shape = shape[1:]
    if len(shape) > len(target):
        return False
    return all(n in (1, t) for n, t in zip(shape, target[len(target) - len(shape) :]))


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
            raise ShapeError(
                at_user_line(
                    f"cat(): zero-dimensional tensor (at position {i}) cannot be concatenated"
                )
            )
    dim = normalize_dim("cat", dim, len(first))
    total = 0
    for i, t in enumerate(tensors):
        shape = tuple(t.shape)
        if shape == (0,):
            continue
        if len(shape) != len(first):
            raise ShapeError(
                at_user_line(
                    f"cat(): tensors must have same number of dimensions: got {len(first)} and "
                    f"{len(shape)} (shapes {first} and {shape})"
                )
            )
        for d, (n, m) in enumerate(zip(first, shape)):
            if d != dim and n != m:
                raise ShapeError(
                    at_user_line(
                        f"cat(): sizes of tensors must match except in dimension {dim}. Expected "
                        f"size {n} but got size {m} for tensor number {i} in the list "
                        f"(shapes {first} and {shape})"
                    )
                )
        total += shape[dim]
    return TensorMeta((*first[:dim], total, *first[dim + 1 :]), dtype)


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


# ---- the strides of views --------------------------------------------------------------
#
# [Note: the strides of views]
# A view's strides are observable: `x.stride()`, `x.is_contiguous()`, and whether `x.view(shape)`
# succeeds. Eager's kernels are numpy's, so eager's strides are numpy's; fake tensors
# (minitorch/fake.py) must give the same, or a traced program could `view` where eager raises.
# Each rule below is numpy's, in elements, from the input's shape and strides and the output's
# shape (the meta rule's). Every other op's fake is fresh row-major memory (`contiguous_strides`).
#
# NOTE: that is eager's layout only for row-major inputs. numpy's elementwise ufuncs, `astype`,
# reductions with keepdim and `concatenate` follow their input's layout (order='K'): eagerly,
# (x.T + 1).stride() == x.T.stride(), so (x.T + 1).view(-1) raises, while its row-major fake
# lets a traced `view` succeed. (PyTorch keeps the layout too, and its fakes model that.) Fresh
# empty arrays also differ: numpy gives them stride 0 in every dim, which no view can observe.


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements: (2, 3, 4) -> (12, 4, 1)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def is_row_major(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """numpy's C-contiguous flag: row-major without gaps, size-1 dims ignored; empty is."""
    if 0 in shape:
        return True
    row_major = zip(strides, contiguous_strides(shape), shape)
    return all(s == c for s, c, n in row_major if n > 1)


def reshape_strides(shape, strides, new_shape) -> tuple[int, ...] | None:
    """The strides of `new_shape` read from memory laid out as (shape, strides) without a copy;
    None when the layout needs a copy. This is numpy's rule, so eager's `reshape` is a view
    exactly when this is not None, and `view` raises exactly when it is.

    Size-1 dims aside, the old and new shapes are cut, left to right, into the smallest groups
    of equal element counts. A group of old dims is one chunk of memory when its strides chain
    (stride[i] == size[i+1] * stride[i+1]); the group's new dims then get row-major strides
    that end in the chunk's last stride. A group that is not one chunk needs a copy.

        shape (2, 3) strides (3, 1)  ->  one chunk of 6: any new shape of 6 elements
        shape (3, 2) strides (1, 3)  ->  (x.T of the above) two chunks 3 | 2: (3, 2) or (3, 1, 2)
    """
    new_shape = tuple(new_shape)
    if new_shape == tuple(shape):
        return tuple(strides)  # nothing to regroup: numpy keeps the strides
    if is_row_major(shape, strides):
        return contiguous_strides(new_shape)
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    out = [0] * len(new_shape)
    oi = ni = 0  # the first old and new dims of the current group
    while ni < len(new_shape) and oi < len(old):
        oj, nj = oi + 1, ni + 1  # one past the group's last old and new dims
        old_size, new_size = old[oi][0], new_shape[ni]
        while old_size != new_size:
            if new_size < old_size:
                new_size *= new_shape[nj]
                nj += 1
            else:
                old_size *= old[oj][0]
                oj += 1
        for (_, s), (n_next, s_next) in zip(old[oi : oj - 1], old[oi + 1 : oj]):
            if s != n_next * s_next:
                return None  # the group spans two chunks
        out[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            out[k - 1] = out[k] * new_shape[k]
        oi, ni = oj, nj
    for k in range(ni, len(new_shape)):  # trailing size-1 dims repeat the last stride
        out[k] = out[ni - 1] if ni else 1
    return tuple(out)


def view_is_possible(shape, strides, new_shape) -> bool:
    """Can memory laid out as (shape, strides) be read as `new_shape` without a copy?"""
    return reshape_strides(shape, strides, new_shape) is not None


def _reshape_view_strides(x_shape, x_strides, out_shape, shape) -> tuple[int, ...]:
    """reshape: a view's strides when numpy can regroup in place, else a fresh copy's."""
    kept = reshape_strides(x_shape, x_strides, out_shape)
    return contiguous_strides(out_shape) if kept is None else kept


def _expand_strides(x_shape, x_strides, out_shape, shape) -> tuple[int, ...]:
    """expand (numpy's broadcast_to): 0 for new leading dims and for every size-1 dim, even
    one that stays 1; the other dims keep their strides."""
    lead = len(out_shape) - len(x_shape)
    kept = tuple(0 if n == 1 else s for n, s in zip(x_shape, x_strides))
    return (0,) * lead + kept


def _permute_strides(x_shape, x_strides, out_shape, dims) -> tuple[int, ...]:
    """permute: the strides move with their dims."""
    return tuple(x_strides[d] for d in normalize_permutation("permute", dims, len(x_shape)))


def _index_strides(x_shape, x_strides, out_shape, key) -> tuple[int, ...]:
    """x[key]: an int drops its dim, a slice multiplies its stride by the step, None inserts
    a dim of stride 0 (numpy's choices; an empty slice keeps the stride, as numpy's does)."""
    out = []
    dim = 0
    for item in normalize_index(x_shape, key):
        if item is None:
            out.append(0)
            continue
        if isinstance(item, slice):
            step = item.step if item.stop > item.start else 1
            out.append(x_strides[dim] * step)
        dim += 1
    return (*out, *x_strides[dim:])


# the strides of each view op's output, by op name (the ops of kind "view" in views.py)
STRIDE_RULES = {
    "expand": _expand_strides,
    "reshape": _reshape_view_strides,
    "permute": _permute_strides,
    "index": _index_strides,
}


def view_strides(op: str, x, out_shape: tuple[int, ...], *args, **kwargs) -> tuple[int, ...]:
    """The strides eager gives the view `op(x, *args)` of shape `out_shape`."""
    return STRIDE_RULES[op](tuple(x.shape), x.stride(), tuple(out_shape), *args, **kwargs)
