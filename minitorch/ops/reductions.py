"""The op table, reductions: sums, extremes, statistics, softmax, and selecting along a dim.

See [Note: the op table] in registry.py.

[Note: max with a dim]
`max(x, dim)` returns two tensors, the values and their indices, and its gradient goes to the
returned index only (PyTorch's rule), while `amax` splits the gradient evenly among ties. We
build it from two primitives that each have one output:

    indices = argmax(x, dim, keepdim=True)     # where the maximum is: an int64 tensor
    values  = gather(x, dim, indices)          # read x there: out[i, 0] = x[i, indices[i, 0]]

so the gradient of `values` flows through `gather`, whose derivative scatters it back to exactly
those positions (`scatter_add`, and the derivative of scatter_add is gather again: the pair are
each other's transpose). `max` (and `min`, and `topk` with k indices instead of one) is the
composite that returns the pair; the public functions (minitorch/functional/reductions.py)
name it `minitorch.return_types.max(values=..., indices=...)`. A primitive with two outputs
would work too (the dispatcher supports them), but would add a third op that argmax and
gather already express.
"""

from __future__ import annotations

import numpy as np

from minitorch.errors import DTypeError, IndexOutOfRangeError, at_user_line
from minitorch.ops import meta as m
from minitorch.ops import reductions_meta as rm
from minitorch.ops.pointwise import div, exp, log, mul, sub
from minitorch.ops.registry import OpDef, register
from minitorch.ops.selection import eq
from minitorch.ops.views import expand, reshape

# the ops this family registers
__all__ = [
    "sum",
    "mean",
    "var",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "topk_indices",
    "gather",
    "scatter_add",
    "softmax",
    "log_softmax",
    "max",
    "min",
    "topk",
    "sort",
]

# ---- sums --------------------------------------------------------------------------------


def _sum_impl(xp, a, dim=None, keepdim=False):
    # numpy sums bool and int32 in int64 and floats in their own dtype, as sum_meta says
    # (the dispatcher converts to the rule's dtype should a platform differ)
    axes = None if dim is None else m.normalize_dims("sum", dim, a.ndim)
    return xp.sum(a, axis=axes, keepdims=keepdim)


def _sum_backward(g, out, x, dim=None, keepdim=False):
    # Every input element contributed once: put the reduced dims back, then broadcast.
    dims = m.normalize_dims("sum", dim, len(x.shape))
    if not keepdim:
        g = reshape(g, rm.reduced_shape(tuple(x.shape), dims, keepdim=True))
    return (expand(g, tuple(x.shape)),)


sum = register(
    OpDef(
        "sum",
        "reduction",
        m.sum_meta,
        impl=_sum_impl,
        backward=_sum_backward,
        lowering="lowered",
    )
)


def _count(x, dims: tuple[int, ...]) -> int:
    """How many elements each output of a reduction over `dims` combines."""
    count = 1
    for d in dims:
        count *= x.shape[d]
    return count


def _check_float(op: str, x) -> None:
    if not x.dtype.is_floating_point:
        raise DTypeError(
            at_user_line(
                f"{op}(): expected a floating point input, got dtype {x.dtype.name}; "
                f"convert it first (x.float()) or pass dtype="
            )
        )


def _mean_decomposition(x, dim=None, keepdim=False):
    _check_float("mean", x)  # PyTorch refuses to guess a float dtype for an integer mean
    dims = m.normalize_dims("mean", dim, len(x.shape))
    return div(sum(x, dim=dims, keepdim=keepdim), _count(x, dims))


mean = register(OpDef("mean", "composite", None, decomposition=_mean_decomposition))


def _var_decomposition(x, dim=None, correction=1, keepdim=False):
    # var = sum((x - mean)^2) / (N - correction), in two passes: the one-pass form
    # E[x^2] - E[x]^2 cancels catastrophically when the mean is large.
    _check_float("var", x)
    dims = m.normalize_dims("var", dim, len(x.shape))
    centered = sub(x, mean(x, dim=dims, keepdim=True))
    squares = sum(mul(centered, centered), dim=dims, keepdim=keepdim)
    # NOTE: N <= correction divides by zero (inf, or nan for 0/0), as PyTorch does.
    dof = _count(x, dims) - correction
    return div(squares, dof if dof > 0 else 0)


var = register(OpDef("var", "composite", None, decomposition=_var_decomposition))

# ---- extremes ----------------------------------------------------------------------------


def _extreme_backward(g, out, x, dim=None, keepdim=False):
    # Ties share the gradient evenly (PyTorch's rule for amax/amin): g * [x == out] / count.
    dims = m.normalize_dims("amax", dim, len(x.shape))
    if not keepdim:
        kept = rm.reduced_shape(tuple(x.shape), dims, keepdim=True)
        g, out = reshape(g, kept), reshape(out, kept)
    mask = eq(x, out)  # (x.shape): True at every position that attains the extreme
    # NOTE: a NaN extreme equals nothing, so its gradient is NaN (PyTorch sends it to the NaNs).
    return (div(mul(g, mask), sum(mask, dim=dims, keepdim=True)),)


# why primitive: a new kind of reduction (the max monoid); softmax needs it to stay finite
amax = register(
    OpDef(
        "amax",
        "reduction",
        rm.extreme_meta("amax"),
        impl=lambda xp, a, dim=None, keepdim=False: xp.amax(
            a, axis=m.normalize_dims("amax", dim, a.ndim), keepdims=keepdim
        ),
        backward=_extreme_backward,
        lowering="lowered",
    )
)
# why primitive: amax's mirror; -amax(-x) would fail for bool and overflow at the int minimum
amin = register(
    OpDef(
        "amin",
        "reduction",
        rm.extreme_meta("amin"),
        impl=lambda xp, a, dim=None, keepdim=False: xp.amin(
            a, axis=m.normalize_dims("amin", dim, a.ndim), keepdims=keepdim
        ),
        backward=_extreme_backward,
        lowering="lowered",
    )
)


def _arg_extreme_impl(find):
    """argmax/argmin over one dim, or over the flattened tensor when dim is None."""

    def impl(xp, a, dim=None, keepdim=False):
        if dim is None or a.ndim == 0:
            flat = find(a.reshape(-1), axis=0)  # the first extreme of the row-major order
            return flat.reshape((1,) * a.ndim if keepdim else ())
        return find(a, axis=dim, keepdims=keepdim)

    return impl


# why primitive: an index-valued reduction (position of the first maximum), not a value
argmax = register(
    OpDef(
        "argmax",
        "reduction",
        rm.arg_extreme_meta("argmax"),
        impl=_arg_extreme_impl(lambda a, **kw: a.argmax(**kw)),
        lowering="lowered",
    )
)
# why primitive: argmax's mirror (argmax(-x) would overflow at the int minimum)
argmin = register(
    OpDef(
        "argmin",
        "reduction",
        rm.arg_extreme_meta("argmin"),
        impl=_arg_extreme_impl(lambda a, **kw: a.argmin(**kw)),
        lowering="lowered",
    )
)


def _topk_indices_impl(xp, a, k, dim=-1, largest=True, sorted=True):
    # A stable sort keeps equal values in their original order, as argmax does. For the
    # largest first, sort the reversed row ascending and read the order backwards: that is
    # descending and still first-come-first among ties, for every dtype (no negation).
    # NOTE: O(n log n) per row; PyTorch uses a selection algorithm.
    if a.ndim == 0:
        return xp.zeros((), dtype=xp.int64)  # the one element is the top one (PyTorch: any k)
    axis = dim % a.ndim
    if largest:
        last = a.shape[axis] - 1
        order = last - xp.flip(xp.argsort(xp.flip(a, axis), axis=axis, kind="stable"), axis)
    else:
        order = xp.argsort(a, axis=axis, kind="stable")
    first_k = (slice(None),) * axis + (slice(0, k),)
    return order[first_k]


# why primitive: ordering is a new kind of computation (a sort along a dim); topk's values
# are then gather(x, dim, indices)
topk_indices = register(
    OpDef(
        "topk_indices",
        "reduction",
        rm.topk_indices_meta,
        impl=_topk_indices_impl,
    )
)

# ---- selecting along a dim: gather and its transpose, scatter_add ------------------------


def _coordinates(xp, index, dim: int) -> tuple:
    """For each position p of `index`: the position in the input it names.

    That is p itself, except along `dim`, where it is index[p]. As a tuple of integer arrays
    that broadcast to index.shape, ready for advanced indexing: x[coords] gathers.
    """
    coords = []
    for d, n in enumerate(index.shape):
        if d == dim:
            coords.append(index)
        else:
            coords.append(xp.arange(n).reshape((n,) + (1,) * (index.ndim - 1 - d)))
    return tuple(coords)


def _check_in_range(op: str, index, size: int, dim: int) -> None:
    """A data-dependent check: numpy would wrap negative indices or fail without the op's name."""
    if index.size == 0:
        return
    low, high = int(index.min()), int(index.max())
    if low < 0 or high >= size:
        bad = low if low < 0 else high
        raise IndexOutOfRangeError(
            at_user_line(f"{op}(): index {bad} is out of bounds for dim {dim} of size {size}")
        )


def _gather_impl(xp, a, dim, index):
    if a.ndim == 0:  # one element: read it as a 1-element row
        return _gather_impl(xp, a.reshape(1), 0, index.reshape(1)).reshape(())
    dim = dim % a.ndim
    _check_in_range("gather", index, a.shape[dim], dim)
    return a[_coordinates(xp, index, dim)]


def _gather_backward(g, out, x, dim, index):
    # Each output element read one input element: add its gradient back there (into zeros).
    from minitorch.factories import zeros

    zero = zeros((), dtype=g.dtype, device=g.device)
    return scatter_add(expand(zero, tuple(x.shape)), dim, index, g), None, None


# why primitive: an indexed read (out[p] = x[p with index[p] along dim]), a new kind of
# computation; it turns argmax/topk indices into values with the right gradient
gather = register(
    OpDef(
        "gather",
        "gather",
        rm.gather_meta,
        impl=_gather_impl,
        backward=_gather_backward,
        lowering="lowered",
    )
)


def _scatter_add_impl(xp, a, dim, index, src):
    out = a.copy()  # also materialises a broadcast (expanded) input
    if out.ndim == 0:
        one = _scatter_add_impl(xp, out.reshape(1), 0, index.reshape(1), src.reshape(1))
        return one.reshape(())
    dim = dim % out.ndim
    _check_in_range("scatter_add", index, out.shape[dim], dim)
    if (
        xp is np
        and dim == 0
        and out.dtype.kind != "b"
        and index.ndim == 2
        and _same_along_rows(index)
    ):
        columns = index.shape[1]
        _add_rows(out[:, :columns], index[:, 0], src[: index.shape[0], :columns])
        return out
    xp.add.at(out, _coordinates(xp, index, dim), src)  # repeated positions accumulate
    return out


# [Note: adding whole rows]
# An embedding's gradient is a scatter_add of whole rows: row i of the gradient goes to the
# table's row index[i], the same index along the row. numpy's add.at, the general kernel,
# adds element by element (2.4 ms for a GPT's 1,024 rows of 128); adding rows is a sort of the
# row indices, one sum per distinct row (add.reduceat) and one indexed add (0.45 ms). The sums
# are in the rows' original order, as add.at's, but each row's total is added to the table at
# once, so a table that was not zero may round differently from add.at's (both are exact sums
# of the same terms, grouped differently).


def _same_along_rows(index) -> bool:
    """Whether each row of a 2-d index holds one value (an expanded column, as embedding's)."""
    if index.shape[0] == 0 or index.shape[1] == 0:
        return False
    return index.strides[1] == 0 or bool((index == index[:, :1]).all())


def _add_rows(out, rows, values) -> None:
    """out[rows[i]] += values[i] for each i, rows repeating: in place ([Note: adding whole
    rows])."""
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_rows[1:] != sorted_rows[:-1])))
    out[sorted_rows[starts]] += np.add.reduceat(values[order], starts, axis=0)


# why primitive: an indexed, accumulating write: the derivative of gather (and vice versa)
scatter_add = register(
    OpDef(
        "scatter_add",
        "scatter",
        rm.scatter_add_meta,
        impl=_scatter_add_impl,
        backward=lambda g, out, x, dim, index, src: (g, None, None, gather(g, dim, index)),
    )
)

# ---- softmax -----------------------------------------------------------------------------


def _minus_max(op: str, x, dim: int):
    """x - max(x) along dim: the largest exponent becomes exp(0) = 1, so nothing overflows.

    softmax is unchanged by the shift (it cancels in the ratio), and so is its gradient:
    the gradient that flows into amax sums to zero.
    """
    _check_float(op, x)
    (d,) = m.normalize_dims(op, dim, len(x.shape)) or (None,)
    if d is not None and x.shape[d] == 0:
        return x  # nothing to normalise, and no maximum to subtract
    return sub(x, amax(x, dim=d, keepdim=True))


def _softmax_decomposition(x, dim: int):
    # softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m),  m = max_j x_j
    e = exp(_minus_max("softmax", x, dim))
    return div(e, sum(e, dim=dim, keepdim=True))


def _log_softmax_decomposition(x, dim: int):
    # log_softmax(x)_i = (x_i - m) - log(sum_j exp(x_j - m)): no exp of a large number, and
    # no log of a tiny ratio (log(softmax) would give -inf where this gives a finite number)
    shifted = _minus_max("log_softmax", x, dim)
    return sub(shifted, log(sum(exp(shifted), dim=dim, keepdim=True)))


softmax = register(
    OpDef("softmax", "composite", None, decomposition=_softmax_decomposition, saves_output=True)
)
log_softmax = register(
    OpDef(
        "log_softmax",
        "composite",
        None,
        decomposition=_log_softmax_decomposition,
        saves_output=True,
    )
)

# ---- two outputs: (values, indices) ------------------------------------------------------
# Composites over the rows above: see [Note: max with a dim].


def _values_at(x, indices, dim: int, keepdim: bool) -> tuple:
    """(x at `indices` along dim, indices), without the size-1 dim unless keepdim."""
    values = gather(x, dim, indices)
    if not keepdim:
        shape = rm.reduced_shape(tuple(x.shape), m.normalize_dims("max", dim, x.ndim), False)
        values, shown = reshape(values, shape), reshape(indices, shape)
        # gather's backward reads `indices`: a write into the ones the caller gets (the same
        # memory) must fail its version check, as a write into PyTorch's saved indices does.
        shown._version_counter = indices._shared_version_counter()
        indices = shown
    return values, indices


def _max_decomposition(x, dim: int, keepdim: bool = False) -> tuple:
    return _values_at(x, argmax(x, dim=dim, keepdim=True), dim, keepdim)


def _min_decomposition(x, dim: int, keepdim: bool = False) -> tuple:
    return _values_at(x, argmin(x, dim=dim, keepdim=True), dim, keepdim)


def _topk_decomposition(
    x, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> tuple:
    indices = topk_indices(x, k, dim=dim, largest=largest, sorted=sorted)
    return gather(x, dim, indices), indices


def _sort_decomposition(x, dim: int = -1, descending: bool = False, stable: bool = False):
    """Every entry along `dim` in order: topk with k the dim's size. Equal values keep their
    order (a stable sort, which `stable=False` allows too); NaN counts as the largest."""
    d = m.normalize_dims("sort", dim, x.ndim)
    n = x.shape[d[0]] if d else 1
    return _topk_decomposition(x, n, dim, largest=descending)


# (values, indices) along a dim; the gradient goes to the returned index only
max = register(OpDef("max", "composite", None, decomposition=_max_decomposition))
min = register(OpDef("min", "composite", None, decomposition=_min_decomposition))
topk = register(OpDef("topk", "composite", None, decomposition=_topk_decomposition))
sort = register(OpDef("sort", "composite", None, decomposition=_sort_decomposition))
