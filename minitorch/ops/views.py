"""The op table, views, indexing and joining: ops that re-read their input's memory.

See [Note: the op table] in registry.py; the shape rules are in views_meta.py.

A *view* (expand, reshape when the strides allow, permute, index) gives an array that shares
its input's memory: numpy returns views for all of them, and so do these kernels, which is what
makes a write through a view visible to its base (minitorch/tensor.py, [Note: views]).

The primitives of this family, and why each is one:

    expand         stretch size-1 dims without copying (a loader that ignores an index)
    reshape        regroup dims (a loader that splits and merges index arithmetic)
    permute        reorder dims: no other op moves axes
    index          basic indexing x[key]: select, slice with a step, insert dims
    index_scatter  the inverse of index: base with base[key] replaced; index's gradient, and
                   the out-of-place form of every write (x[key] = v, fill_, copy_)
    cat            join along a dim (each output element is one element of one input)

Everything else (view, flatten, squeeze, unsqueeze, transpose, stack, clone, split, roll) is a
composite.
"""

from __future__ import annotations

from minitorch.errors import ShapeError, at_user_line
from minitorch.ops import meta as m
from minitorch.ops import views_meta as vm
from minitorch.ops.helpers import ArrayMeta, is_tensor, sum_to, written_value_grad
from minitorch.ops.pointwise import to_copy
from minitorch.ops.registry import OpDef, register

# the ops this family registers
__all__ = [
    "expand",
    "reshape",
    "permute",
    "index",
    "index_scatter",
    "cat",
    "view",
    "flatten",
    "squeeze",
    "unsqueeze",
    "transpose",
    "stack",
    "clone",
    "split",
    "roll",
]

# ---- views -------------------------------------------------------------------------------

# why primitive: broadcasting as a view; a stretched dim reads index 0 (stride 0)
expand = register(
    OpDef(
        "expand",
        "view",
        m.expand_meta,
        impl=lambda xp, a, shape: xp.broadcast_to(a, m.expand_meta(ArrayMeta(a), shape).shape),
        backward=lambda g, out, x, shape: (sum_to(g, x),),
        lowering="lowered",
    )
)
# why primitive: regrouping dims changes the index arithmetic (split/merge); a view when the
# strides allow (numpy's reshape decides exactly as views_meta.reshape_strides), else a copy
reshape = register(
    OpDef(
        "reshape",
        "view",
        m.reshape_meta,
        impl=lambda xp, a, shape: xp.reshape(a, shape),  # numpy resolves -1 as infer_reshape does
        backward=lambda g, out, x, shape: (reshape(g, tuple(x.shape)),),
        lowering="lowered",
    )
)


def _permute_backward(g, out, x, dims):
    # Undo the reordering: if output dim i came from input dim d, input dim d goes back to i.
    order = vm.normalize_permutation("permute", dims, len(x.shape))
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    return (permute(g, tuple(inverse)),)


# why primitive: the only op that moves axes (transpose, .T and .mT are permutes)
permute = register(
    OpDef(
        "permute",
        "view",
        vm.permute_meta,
        impl=lambda xp, a, dims: xp.transpose(a, dims),  # numpy reads negative dims too
        backward=_permute_backward,
        lowering="lowered",
    )
)


def _index_backward(g, out, x, key):
    # Each element of x[key] is one element of x: its gradient goes back there, zeros elsewhere.
    from minitorch.factories import zeros

    zero = zeros((), dtype=g.dtype, device=g.device)
    return index_scatter(expand(zero, tuple(x.shape)), g, key), None


def _index_impl(xp, a, key):
    items = key if type(key) is tuple else (key,)
    if not any(item is Ellipsis for item in items):
        # NOTE: numpy returns a scalar, a copy, when every dim gets an int (a[1, 2]); with a
        # trailing `...` it returns a 0-d view instead, as PyTorch does.
        items = (*items, Ellipsis)
    return a[items]


# why primitive: selecting, strided slicing and new dims are one affine map of the index,
# which no other view expresses (see [Note: basic indexing keys] in views_meta.py)
index = register(
    OpDef(
        "index",
        "view",
        vm.index_meta,
        impl=_index_impl,
        backward=_index_backward,
    )
)

# ---- writes and joins (new memory) -------------------------------------------------------


def _index_scatter_impl(xp, base, src, key):
    # A new array laid out like base (as x[key] = v leaves x), which also materialises an
    # expanded (stride-0) base.
    out = base.copy(order="K")
    out[key] = src  # broadcasts src over the region; casts it to base's dtype, as copy_ does
    return out


def _index_scatter_backward(g, out, base, src, key):
    # out is base outside the region and src inside it: each gets its part of the gradient.
    grad_base = index_scatter(g, 0, key)
    if not is_tensor(src):
        return grad_base, None, None
    return grad_base, written_value_grad(index(g, key), src), None


# why primitive: a write into a region (out = base; out[key] = src), a new kind of computation;
# it is index's gradient and the out-of-place form of x[key] = v, fill_ and copy_
index_scatter = register(
    OpDef(
        "index_scatter",
        "pointwise",
        vm.index_scatter_meta,
        impl=_index_scatter_impl,
        layout="first",  # a copy of base, in base's layout
        backward=_index_scatter_backward,
    )
)


def _cat_impl(xp, *arrays, dim=0):
    meta = vm.cat_meta(*(ArrayMeta(a) for a in arrays), dim=dim)
    joined = [a for a in arrays if a.shape != (0,)]  # PyTorch skips 1-d empty tensors
    if not joined:
        return xp.zeros((0,), dtype=meta.dtype.np)
    axis = vm.normalize_dim("cat", dim, joined[0].ndim)
    return xp.concatenate(joined, axis=axis, dtype=meta.dtype.np)


def _cat_backward(g, out, *tensors, dim=0):
    # Each input gets back the slice of the gradient where it landed along `dim`.
    axis = vm.normalize_dim("cat", dim, len(g.shape))
    leading = tuple(slice(0, n, 1) for n in g.shape[:axis])
    grads = []
    for t, span in zip(tensors, vm.cat_offsets(tensors, dim)):
        if span is None:  # a skipped empty tensor
            grads.append(None)
            continue
        grad = index(g, (*leading, slice(span[0], span[1], 1)))
        if grad.dtype is not t.dtype and t.dtype.is_floating_point:
            grad = to_copy(grad, dtype=t.dtype)  # cat promoted t: its gradient goes back
        grads.append(grad)
    return tuple(grads)


# why primitive: joining tensors (each output element reads one element of one input); as a
# composite of index_scatter it would copy the whole result once per input
cat = register(
    OpDef(
        "cat",
        "pointwise",
        vm.cat_meta,
        impl=_cat_impl,
        backward=_cat_backward,
        lowering="lowered",
    )
)

# ---- composites --------------------------------------------------------------------------


def _view_decomposition(x, shape):
    """reshape, but only where no copy is needed: a view of the same memory, always."""
    new_shape = m.infer_reshape("view", tuple(x.shape), shape)
    if not x.is_contiguous() and not vm.view_is_possible(tuple(x.shape), x.stride(), new_shape):
        raise ShapeError(
            at_user_line(
                f"view: size {new_shape} is not compatible with the input's size {tuple(x.shape)} "
                f"and stride {x.stride()} (at least one dimension spans across two contiguous "
                "subspaces). Use .reshape(...) instead."
            )
        )
    return reshape(x, new_shape)


def _flatten_decomposition(x, start_dim=0, end_dim=-1):
    """Merge dims start_dim..end_dim into one: (2, 3, 4) with (1, 2) -> (2, 12)."""
    shape = tuple(x.shape)
    if not shape:
        return reshape(x, (1,))
    start = vm.normalize_dim("flatten", start_dim, len(shape))
    end = vm.normalize_dim("flatten", end_dim, len(shape))
    if start > end:
        raise ShapeError(
            at_user_line(f"flatten: start_dim {start_dim} cannot come after end_dim {end_dim}")
        )
    merged = 1
    for n in shape[start : end + 1]:
        merged *= n
    return reshape(x, (*shape[:start], merged, *shape[end + 1 :]))


def _squeeze_decomposition(x, dim=None):
    """Drop size-1 dims: all of them, or those in `dim` (an int or a tuple)."""
    shape = tuple(x.shape)
    dims = m.normalize_dims("squeeze", dim, len(shape))
    return reshape(x, tuple(n for i, n in enumerate(shape) if not (i in dims and n == 1)))


def _unsqueeze_decomposition(x, dim):
    """Insert a size-1 dim at `dim` (counted in the result: -1 appends)."""
    shape = tuple(x.shape)
    d = vm.normalize_dim("unsqueeze", dim, len(shape) + 1)
    return reshape(x, (*shape[:d], 1, *shape[d:]))


def _transpose_decomposition(x, dim0, dim1):
    """Swap two dims."""
    ndim = len(x.shape)
    order = list(range(ndim))
    d0, d1 = vm.normalize_dim("transpose", dim0, ndim), vm.normalize_dim("transpose", dim1, ndim)
    if ndim:
        order[d0], order[d1] = order[d1], order[d0]
    return permute(x, tuple(order))


def _stack_decomposition(*tensors, dim=0):
    """Join equal-shaped tensors along a new dim: cat of each with a size-1 dim inserted."""
    if not tensors:
        raise ShapeError(at_user_line("stack(): expected a non-empty list of Tensors"))
    first = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != first:
            raise ShapeError(
                at_user_line(
                    f"stack(): expects each tensor to be equal size, but got {first} at entry 0 "
                    f"and {tuple(t.shape)} at entry {i}"
                )
            )
    d = vm.normalize_dim("stack", dim, len(first) + 1)
    return cat(*(unsqueeze(t, d) for t in tensors), dim=d)


view = register(OpDef("view", "composite", None, decomposition=_view_decomposition))
flatten = register(OpDef("flatten", "composite", None, decomposition=_flatten_decomposition))
squeeze = register(OpDef("squeeze", "composite", None, decomposition=_squeeze_decomposition))
unsqueeze = register(OpDef("unsqueeze", "composite", None, decomposition=_unsqueeze_decomposition))
transpose = register(OpDef("transpose", "composite", None, decomposition=_transpose_decomposition))
stack = register(OpDef("stack", "composite", None, decomposition=_stack_decomposition))
# clone: a copy in new memory, differentiable (to_copy with neither dtype nor device)
clone = register(OpDef("clone", "composite", None, decomposition=lambda x: to_copy(x)))

# ---- cutting along a dim, and rotating -----------------------------------------------------


def _narrow(x, d: int, start: int, stop: int):
    """x[..., start:stop, ...] with the slice at dim d: a view."""
    leading = tuple(slice(0, n, 1) for n in x.shape[:d])
    return index(x, (*leading, slice(start, stop, 1)))


def _split_sizes(x, split_size_or_sections, d: int) -> list[int]:
    """The sizes of the pieces: equal pieces of an int (the last may be smaller), or a list."""
    size = x.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step < 0 or (step == 0 and size != 0):
            raise ShapeError(
                at_user_line(
                    f"split: split_size must be positive (0 only for an empty dim), got {step}"
                )
            )
        return [min(step, size - start) for start in range(0, size, step)] or [0]
    sizes = [m.as_dim("split", n) for n in split_size_or_sections]
    if any(n < 0 for n in sizes) or sum(sizes) != size:
        raise ShapeError(
            at_user_line(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                f"size at dimension {d}), but got split_sizes={sizes}"
            )
        )
    return sizes


def _split_decomposition(x, split_size_or_sections, dim: int = 0) -> tuple:
    """Pieces of x along dim, each a view: sizes given as one int, or as a list."""
    d = vm.normalize_dim("split", dim, len(x.shape))
    pieces, start = [], 0
    for n in _split_sizes(x, split_size_or_sections, d):
        pieces.append(_narrow(x, d, start, start + n))
        start += n
    return tuple(pieces)


def _roll_decomposition(x, shifts, dims=None):
    """Shift the entries along dims, wrapping around: roll([1, 2, 3], 1) is [3, 1, 2].
    Along each dim, the last `shift` entries come first: cat(x[n-s:], x[:n-s])."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise ShapeError(at_user_line(f"roll: shifts {shifts} need dims, one per shift"))
        return reshape(_roll_decomposition(reshape(x, (-1,)), shifts, 0), tuple(x.shape))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise ShapeError(
            at_user_line(
                f"roll: shifts and dimensions must align. shifts: {len(shifts)}, dims: {len(dims)}"
            )
        )
    out = x
    for shift, dim in zip(shifts, dims):
        d = vm.normalize_dim("roll", dim, len(x.shape))
        n = x.shape[d]
        cut = n - shift % n if n else 0
        if cut not in (0, n):
            out = cat(_narrow(out, d, cut, n), _narrow(out, d, 0, cut), dim=d)
    return out if out is not x else to_copy(x)  # a new tensor even when nothing moves


split = register(OpDef("split", "composite", None, decomposition=_split_decomposition))
roll = register(OpDef("roll", "composite", None, decomposition=_roll_decomposition))
