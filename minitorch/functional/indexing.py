"""`x[key]` and `x[key] = value` for every key PyTorch accepts: the split into basic and
advanced indexing.

A key mixes *basic* items (ints, slices, None, `...`), which select a view (the op `index`,
[Note: basic indexing keys]), and *advanced* ones (integer tensors, lists, tuples and ranges of
ints, boolean masks), which gather a copy (the op `index_tensor`, [Note: advanced indexing]).

[Note: splitting an indexing key]
As PyTorch does, the basic items are applied first, as one view, and the advanced ones then
index that view; an int is basic (a select), even next to a tensor:

    x.shape == (5, 6, 7, 8)
    x[i, 0, :, j]  ->  v = x[:, 0]            (5, 7, 8)   the basic view: ints and slices
                       index_tensor(v, i, None, j)         each tensor at its dim of v

So `x[:, 0, :, j]` is (5, 7, len(j)) here, where numpy, which treats the 0 as an index array
too, gives (len(j), 5, 7). Sequences of ints become int64 tensors; a boolean mask covers as
many dims as it has and stands for the positions where it is True (`mask.nonzero()`), so
`x[x > 0]` is 1-d. That count is known only from the mask's values: eagerly it is read, and
while tracing (fake tensors) a read is a `DataDependentError`, a graph break.

A write `x[key] = value` is the same split: the basic view is the region written, the
advanced indices say where in it (`index_put`). A write through a single mask whose value does
not depend on the count (`x[x < 0] = 0`, `x[m] = row`) needs no count at all: it is
`where(mask, value, x)`, so it traces, and compiles, whole.
"""

from __future__ import annotations

import numpy as np

from minitorch import ops
from minitorch.device import module_of
from minitorch.dtype import bool_, int64
from minitorch.errors import (
    DataDependentError,
    IndexOutOfRangeError,
    ShapeError,
    at_user_line,
)
from minitorch.fake import is_fake
from minitorch.functional.views import index
from minitorch.ops.indexing import numpy_key
from minitorch.ops.views_meta import broadcasts_to, normalize_index
from minitorch.overrides import make_overridable, overridable

# the public functions of this family
__all__ = ["index_put"]


class _Advanced:
    """An advanced item of a key, with the dims of the basic view it covers."""

    def __init__(self, tensor, dim: int, known: list | None = None) -> None:
        self.tensor = tensor  # an int64/int32 index or a bool mask
        self.dim = dim  # its first dim in the basic view
        self.is_mask = tensor.dtype is bool_
        self.known = known  # the Python sequence it was made from: values known when traced

    @property
    def ndim(self) -> int:
        """How many dims it covers: a mask covers all of its own, an index one."""
        return self.tensor.ndim if self.is_mask else 1


def is_advanced(key) -> bool:
    """Does `key` hold an item that basic indexing does not take? (cheap: __getitem__ asks
    this on every call)"""
    items = key if type(key) is tuple else (key,)
    return any(_is_advanced_item(item) for item in items)


def _is_advanced_item(item) -> bool:
    if isinstance(item, (list, tuple, range, bool)):  # a tuple inside the key's tuple
        return True
    ndim = getattr(item, "ndim", None)  # a tensor: 0-d integer ones are ints (as in PyTorch)
    return ndim is not None and hasattr(item, "_data") and (ndim > 0 or item.dtype is bool_)


def _as_index_tensor(item):
    """The tensor an advanced item stands for (sequences and bools become tensors)."""
    from minitorch.factories import tensor

    if isinstance(item, (list, tuple, range)):
        values = list(item)
        return tensor(values, dtype=None if values else int64)
    return tensor(item) if isinstance(item, bool) else item


def split_key(shape: tuple[int, ...], key) -> tuple[tuple, list[_Advanced]]:
    """`key` as a canonical basic key and the advanced items that then index its view; see
    [Note: splitting an indexing key]."""
    items = key if type(key) is tuple else (key,)
    tensors = [_as_index_tensor(i) if _is_advanced_item(i) else None for i in items]
    spans = [_span(i, t) for i, t in zip(items, tensors)]  # the dims of x each item reads
    under_ellipsis = len(shape) - sum(spans)
    basic: list = []
    advanced: list[_Advanced] = []
    dim = 0  # the dim of the basic view the next item lands on
    for item, t in zip(items, tensors):
        if t is None:
            basic.append(item)
            if item is Ellipsis:
                dim += max(under_ellipsis, 0)
            elif item is None or type(item) is slice:
                dim += 1
            continue
        if t.ndim == 0:  # True or False: a new dim of size 1, masked (PyTorch's x[True])
            basic.append(None)
            t = t.reshape(1)
        else:
            basic.extend([slice(None)] * _span(item, t))  # the view keeps the dims it indexes
        known = list(item) if isinstance(item, (list, tuple, range)) else None
        advanced.append(_Advanced(t, dim, known))
        dim += advanced[-1].ndim
    return normalize_index(shape, tuple(basic)), advanced


def _span(item, t) -> int:
    """How many dims of the indexed tensor an item reads."""
    if t is None:
        return 0 if item is None or item is Ellipsis else 1
    return t.ndim if t.dtype is bool_ else 1


# [Note: indices known while tracing]
# An index a key spells as a Python list (`x[[0, 5]]`) is known whenever the key is, traced
# or not. The kernel checks every index against its dim, but a traced read whose result is
# never used is dead code, dropped with its check: eagerly `x[[0, 5]]` raises, compiled it
# would not. So such indices are checked here, before the op, in every mode. (Not in the
# op's shape rule: the meta cache serves that by shapes alone, [Note: the meta cache].)
def _index_list(view, advanced: list[_Advanced], op: str) -> list:
    """The advanced items as index_tensor's arguments: an integer tensor or None per dim of
    the view; each mask becomes one index per dim it covers (its True positions)."""
    indices: list = [None] * (advanced[-1].dim + advanced[-1].ndim)
    for item in advanced:
        t = item.tensor
        if not item.is_mask:
            indices[item.dim] = t  # its dtype is checked by the op
            if item.known is not None:  # see [Note: indices known while tracing]
                numpy_key(op, view, (None,) * item.dim + (np.asarray(item.known),))
            continue
        _check_mask_shape(op, view, item)
        for d, positions in enumerate(_true_positions(op, t)):
            indices[item.dim + d] = positions
    return indices


def _check_mask_shape(op: str, view, item: _Advanced) -> None:
    """A mask must have the shape of the dims it covers."""
    for d, n in enumerate(item.tensor.shape):
        size = view.shape[item.dim + d]
        if n != size:
            raise IndexOutOfRangeError(
                at_user_line(
                    f"{op}: the shape of the mask {list(item.tensor.shape)} at index {d} does not "
                    f"match the shape of the indexed tensor {list(view.shape)} at index "
                    f"{item.dim + d}"
                )
            )


def _true_positions(op: str, mask) -> list:
    """mask.nonzero(), one int64 tensor per dim: the positions where the mask is True."""
    from minitorch.tensor import Tensor

    if is_fake(mask):
        raise DataDependentError(
            at_user_line(
                f"{op}: indexing with a boolean mask of shape {list(mask.shape)}: the result's "
                "shape depends on how many elements are True (a data-dependent shape)"
            )
        )
    xp = module_of(mask._data)  # numpy, or cupy for a cuda mask
    return [Tensor._from_array(xp.asarray(p, dtype=np.int64)) for p in xp.nonzero(mask._data)]


# ---- reads and writes --------------------------------------------------------------------


def index_put(input, indices, values, accumulate: bool = False):
    """A copy of input with input[indices] = values; with accumulate=True, values are added
    there instead, and positions named twice get both (`x[idx] += v` would keep one).

        >>> minitorch.index_put(minitorch.zeros(3), (minitorch.tensor([0, 0]),),
        ...                     minitorch.tensor([1.0, 2.0]), accumulate=True)
        tensor([3., 0., 0.])
    """
    key = tuple(indices)
    if not accumulate:
        return setitem(input, key, values)
    _, advanced = split_key(tuple(input.shape), key)
    return ops.index_put(input, values, *_index_list(input, advanced, "index_put"), accumulate=True)


def getitem(input, key):
    """input[key]: a view for a basic key, else a copy (see the module docstring)."""
    if not is_advanced(key):
        return index(input, key)
    basic, advanced = split_key(tuple(input.shape), key)
    view = index(input, basic) if basic else input
    return ops.index_tensor(view, *_index_list(view, advanced, "index"))


def setitem(input, key, value):
    """The out-of-place form of `input[key] = value`: a new tensor, input with the positions
    key names replaced by value (which broadcasts to input[key]'s shape)."""
    if not is_advanced(key):
        return ops.index_scatter(input, value, normalize_index(tuple(input.shape), key))
    basic, advanced = split_key(tuple(input.shape), key)
    region = index(input, basic) if basic else input
    written = _masked_write(region, advanced, value)
    if written is None:
        written = ops.index_put(region, value, *_index_list(region, advanced, "index_put"))
    return ops.index_scatter(input, written, basic) if basic else written


def _masked_write(region, advanced: list[_Advanced], value):
    """region[mask] = value as where(mask, value, region), when one mask is the only advanced
    item and value does not depend on how many elements are True; else None."""
    if len(advanced) != 1 or not advanced[0].is_mask:
        return None
    item = advanced[0]
    shape = tuple(region.shape)
    value_shape = tuple(getattr(value, "shape", ()))
    read = (*shape[: item.dim], -1, *shape[item.dim + item.ndim :])  # -1: the count
    while len(value_shape) > len(read) and value_shape[0] == 1:
        value_shape = value_shape[1:]  # extra leading 1s broadcast away
    lead = len(read) - len(value_shape)
    if lead < 0 or (lead <= item.dim and value_shape[item.dim - lead] != 1):
        return None  # one value per True element: the count is needed
    _check_mask_shape("index_put", region, item)
    if not broadcasts_to(value_shape, tuple(1 if n == -1 else n for n in read)):
        raise ShapeError(
            at_user_line(
                f"index_put: shape mismatch: value tensor of shape {value_shape} cannot be "
                f"broadcast to indexing result of shape {read} (-1: the number of True elements)"
            )
        )
    if value_shape:
        padded = (1,) * lead + value_shape
        value = value.reshape((*padded[: item.dim], *(1,) * item.ndim, *padded[item.dim + 1 :]))
    trailing = len(shape) - item.dim - item.ndim
    mask = item.tensor.reshape((*(1,) * item.dim, *item.tensor.shape, *(1,) * trailing))
    out = ops.where(mask, value, region)
    return out if out.dtype is region.dtype else out.to(region.dtype)


class IndexingMethods:
    """`x[key]` and `x.index_put(...)` as Tensor methods (mixed into Tensor); the writes,
    `x[key] = v` and `index_put_`, are in-place ops (minitorch/inplace.py)."""

    @overridable  # `table[i]` records for a Proxy i: [Note: __torch_function__]
    def __getitem__(self, key):
        return getitem(self, key)

    def index_put(self, indices, values, accumulate: bool = False):
        return index_put(self, indices, values, accumulate)


# Every public function hands a Proxy (any __torch_function__ type) to it: see
# [Note: __torch_function__] in minitorch/overrides.py.
make_overridable(globals(), __all__)
