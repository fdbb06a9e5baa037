"""Public view, indexing and joining functions (`minitorch.reshape`, `minitorch.cat`, ...) and
their Tensor methods (`x.view`, `x.T`, ...); `x[key]` is in indexing.py.

Every function that returns a view marks it as one (`_viewed`), so that the view shares its
base's version counter and an in-place write through it reaches the base's autograd history
too: see [Note: views] in minitorch/tensor.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from minitorch import ops
from minitorch.device import module_of
from minitorch.errors import DTypeError, InvalidArgumentError, ShapeError, at_user_line
from minitorch.fake import MetaArray, is_fake
from minitorch.functional._common import check_tensor, shape_arg
from minitorch.ops.views_meta import normalize_dim, normalize_index
from minitorch.overrides import make_overridable, overridable

# the public functions of this family
__all__ = [
    "cat",
    "chunk",
    "clone",
    "concat",
    "expand",
    "flatten",
    "permute",
    "reshape",
    "roll",
    "split",
    "squeeze",
    "stack",
    "t",
    "transpose",
    "unsqueeze",
]


def _viewed(out, input, replay: Callable):
    """Mark `out` as a view of `input`; `replay(t)` makes the same view of any tensor t."""
    if out is not input and not is_fake(input):
        out._make_view_of(input, replay)
    return out


def _viewed_if_shared(out, input, replay: Callable):
    """reshape and flatten copy when the strides do not allow a view: mark only real views."""
    data = input._data
    if out is input or type(data) is MetaArray:
        return out
    if not module_of(data).may_share_memory(out._data, data):
        return out
    return _viewed(out, input, replay)


# ---- views -------------------------------------------------------------------------------


def reshape(input, shape):
    """`input` with a new shape of as many elements (one dim may be -1): a view if the strides
    allow, else a copy."""
    check_tensor("reshape", input)
    shape = tuple(shape)
    return _viewed_if_shared(ops.reshape(input, shape), input, lambda t: ops.reshape(t, shape))


def expand(input, shape):
    """Stretch size-1 dims (and add leading dims) to `shape` without copying; -1 keeps a size."""
    check_tensor("expand", input)
    shape = tuple(shape)
    return _viewed(ops.expand(input, shape), input, lambda t: ops.expand(t, shape))


def permute(input, dims):
    """Reorder the dims: x.permute(2, 0, 1)[i, j, k] == x[j, k, i]."""
    check_tensor("permute", input)
    dims = tuple(dims)
    return _viewed(ops.permute(input, dims), input, lambda t: ops.permute(t, dims))


def transpose(input, dim0: int, dim1: int):
    """Swap two dims: transpose(x, 0, 1)[i, j] == x[j, i]."""
    check_tensor("transpose", input)
    return _viewed(ops.transpose(input, dim0, dim1), input, lambda t: ops.transpose(t, dim0, dim1))


def t(input):
    """The transpose of a matrix; a 0-d or 1-d tensor is returned as a view of itself."""
    check_tensor("t", input)
    if input.ndim > 2:
        raise ShapeError(
            at_user_line(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
        )
    return transpose(input, 0, -1)


def squeeze(input, dim: int | tuple[int, ...] | None = None):
    """Drop size-1 dims: all of them, or those among `dim`."""
    check_tensor("squeeze", input)
    return _viewed(ops.squeeze(input, dim), input, lambda t: ops.squeeze(t, dim))


def unsqueeze(input, dim: int):
    """Insert a size-1 dim at position `dim` of the result: (2, 3) with dim=-1 -> (2, 3, 1)."""
    check_tensor("unsqueeze", input)
    return _viewed(ops.unsqueeze(input, dim), input, lambda t: ops.unsqueeze(t, dim))


def flatten(input, start_dim: int = 0, end_dim: int = -1):
    """Merge dims start_dim..end_dim into one: a view if the strides allow, else a copy."""
    check_tensor("flatten", input)
    return _viewed_if_shared(
        ops.flatten(input, start_dim, end_dim), input, lambda t: ops.flatten(t, start_dim, end_dim)
    )


def view(input, shape):
    """Like reshape, but never copies: a layout that needs a copy is an error."""
    shape = tuple(shape)
    return _viewed(ops.view(input, shape), input, lambda t: ops.view(t, shape))


def index(input, key):
    """input[key] for a basic key: ints, slices (steps > 0), None and `...`; always a view."""
    key = normalize_index(tuple(input.shape), key)
    return _viewed(ops.index(input, key), input, lambda t: ops.index(t, key))


# ---- pieces: split and chunk ------------------------------------------------------------


def split(tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Cut `tensor` along dim into views: pieces of split_size (the last may be smaller), or
    of the sizes in a list, which must add up to the dim's size."""
    check_tensor("split", tensor)
    spec = split_size_or_sections
    if not isinstance(spec, int):
        spec = list(spec)
    pieces = ops.split(tensor, spec, dim)
    return tuple(
        _viewed(piece, tensor, lambda t, i=i: ops.split(t, spec, dim)[i])
        for i, piece in enumerate(pieces)
    )


def chunk(input, chunks: int, dim: int = 0) -> tuple:
    """Cut `input` into `chunks` views of ceil(size / chunks) along dim (fewer if they run
    out: chunk of 5 into 4 gives sizes 2, 2, 1)."""
    check_tensor("chunk", input)
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks <= 0:
        raise ShapeError(
            at_user_line(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        )
    size = input.shape[normalize_dim("chunk", dim, input.ndim)]
    if size == 0:
        return split(input, [0] * chunks, dim)
    return split(input, -(-size // chunks), dim)


def roll(input, shifts, dims=None):
    """Shift entries along `dims` (every entry, flattened, if None), wrapping around:
    roll([1, 2, 3, 4], 1) is [4, 1, 2, 3]. A copy."""
    check_tensor("roll", input)
    return ops.roll(input, shifts, dims)


# ---- copies and joins --------------------------------------------------------------------


def clone(input):
    """A copy of `input` in new memory; gradients flow back to `input`."""
    check_tensor("clone", input)
    return ops.clone(input)


def _tensor_list(op: str, tensors) -> tuple:
    from minitorch.tensor import Tensor

    if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence):
        raise DTypeError(
            at_user_line(
                f"{op}(): argument 'tensors' must be a tuple or list of Tensors, "
                f"not {type(tensors).__name__}"
            )
        )
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise DTypeError(
                at_user_line(
                    f"{op}(): expected a Tensor as element {i} of 'tensors', got {type(x).__name__}"
                )
            )
    return tuple(tensors)


def cat(tensors: Sequence, dim: int = 0):
    """Join tensors along an existing dim; their other sizes must match; dtypes promote."""
    return ops.cat(*_tensor_list("cat", tensors), dim=dim)


def concat(tensors: Sequence, dim: int = 0):
    """An alias of `cat`."""
    return ops.cat(*_tensor_list("concat", tensors), dim=dim)


def stack(tensors: Sequence, dim: int = 0):
    """Join equal-shaped tensors along a new dim `dim`: n tensors of (2, 3) -> (n, 2, 3)."""
    return ops.stack(*_tensor_list("stack", tensors), dim=dim)


class ViewMethods:
    """The view, indexing and joining ops as Tensor methods (mixed into Tensor)."""

    def reshape(self, *shape):
        return reshape(self, shape_arg(shape))

    # NOTE: @overridable on the methods that do not just call a covered function, so that a
    # Proxy argument records ([Note: __torch_function__] in minitorch/overrides.py).
    @overridable
    def reshape_as(self, other):
        return reshape(self, tuple(other.shape))

    @overridable
    def view(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
            raise DTypeError(
                at_user_line(
                    f"view(): expected a shape, got {shape[0]!r} (view(dtype) is not supported)"
                )
            )
        return view(self, shape_arg(shape))

    @overridable
    def view_as(self, other):
        return view(self, tuple(other.shape))

    def expand(self, *shape):
        return expand(self, shape_arg(shape))

    @overridable
    def expand_as(self, other):
        return expand(self, tuple(other.shape))

    def permute(self, *dims):
        return permute(self, shape_arg(dims))

    def transpose(self, dim0: int, dim1: int):
        return transpose(self, dim0, dim1)

    def t(self):
        return t(self)

    @property
    def T(self):  # noqa: N802 - PyTorch's name
        """All dims reversed (the matrix transpose for 2-d tensors)."""
        return permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):  # noqa: N802 - PyTorch's name
        """The last two dims swapped: a batch of transposed matrices."""
        if self.ndim < 2:
            raise ShapeError(
                at_user_line(
                    "tensor.mT is only supported on matrices or batches of matrices. "
                    f"Got {self.ndim}-D tensor."
                )
            )
        return transpose(self, -2, -1)

    def squeeze(self, dim: int | tuple[int, ...] | None = None):
        return squeeze(self, dim)

    def unsqueeze(self, dim: int):
        return unsqueeze(self, dim)

    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        return flatten(self, start_dim, end_dim)

    def split(self, split_size, dim: int = 0) -> tuple:
        return split(self, split_size, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        return chunk(self, chunks, dim)

    def roll(self, shifts, dims=None):
        return roll(self, shifts, dims)

    def contiguous(self, memory_format=None):
        """`self` if its elements are already in row-major order, else a row-major copy.

        `memory_format=` is accepted and checked; the copy is row-major whatever it says (the
        values are the same: minitorch/memory_format.py).
        """
        if memory_format is not None:
            _check_contiguous_format(memory_format)
        return self if self.is_contiguous() else ops.clone(self)

    def clone(self):
        return clone(self)


def _check_contiguous_format(fmt) -> None:
    from minitorch.memory_format import check_memory_format, preserve_format

    if check_memory_format("contiguous()", fmt) is preserve_format:
        raise InvalidArgumentError(
            at_user_line(
                "contiguous(): preserve_format is not supported by the contiguous operator"
            )
        )


# Every public function hands a Proxy (any __torch_function__ type) to it: see
# [Note: __torch_function__] in minitorch/overrides.py.
make_overridable(globals(), __all__)
