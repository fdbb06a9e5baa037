"""Public arrangements, statistics and scans (`minitorch.outer`, `minitorch.diag`,
`minitorch.flip`, `minitorch.std`, `minitorch.cumsum`, ...) and their Tensor methods
(`x.repeat`, `x.any`, ...).

    >>> x = minitorch.tensor([[1, 2], [3, 4]])
    >>> x.repeat(1, 2)
    tensor([[1, 2, 1, 2],
            [3, 4, 3, 4]])
    >>> minitorch.cumsum(x, dim=1)
    tensor([[1, 3],
            [3, 7]])

The rows of the op table they call are in minitorch/ops/extra.py, which says how each one
compiles.
"""

from __future__ import annotations

import numpy as np

from minitorch import ops
from minitorch.dtype import DType, int32, int64
from minitorch.errors import (
    ArgumentTypeError,
    DataDependentError,
    DTypeError,
    MinitorchError,
    ShapeError,
    at_user_line,
)
from minitorch.fake import is_fake
from minitorch.functional._common import check_tensor, shape_arg
from minitorch.functional.reductions import _converted, _dims, _one_dim
from minitorch.functional.views import flatten, index, permute, split, squeeze
from minitorch.overrides import make_overridable

# the public functions of this family
__all__ = [
    "all",
    "any",
    "cumprod",
    "cumsum",
    "diag",
    "diagonal",
    "flip",
    "fliplr",
    "flipud",
    "outer",
    "repeat_interleave",
    "std",
    "unbind",
]

# ---- arrangements ------------------------------------------------------------------------


def outer(input, vec2):
    """The outer product of two vectors: out[i, j] = input[i] * vec2[j]."""
    check_tensor("outer", input)
    check_tensor("outer", vec2)
    return ops.outer(input, vec2)


def diag(input, diagonal: int = 0):
    """A 1-D input onto the `diagonal`-th diagonal of a square matrix (zeros elsewhere); a 2-D
    input's `diagonal`-th diagonal as a 1-D tensor (a copy: PyTorch's is too)."""
    check_tensor("diag", input)
    return ops.diag(input, diagonal)


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """The diagonal of the (dim1, dim2) planes, as the last dim: a view, as in PyTorch, so a
    write into it (x.diagonal().fill_(0)) reaches the input.

    The view is a strided read of the two dims flattened: element i of the diagonal of an
    (n, m) plane stored row-major is at i * (m + 1) + start. NOTE: that needs the plane's
    elements dense in row-major order (any tensor made here, and its transpose's permute back);
    otherwise the diagonal is a copy (a gather, ops.diagonal), and writing into it does not
    reach the input.
    """
    check_tensor("diagonal", input)
    if input.ndim < 2:
        return ops.diagonal(input, offset, dim1, dim2)  # which names the error
    d1, d2 = _one_dim("diagonal", dim1, input), _one_dim("diagonal", dim2, input)
    if d1 == d2:
        return ops.diagonal(input, offset, dim1, dim2)  # which names the error
    rest = tuple(d for d in range(input.ndim) if d not in (d1, d2))
    planes = permute(input, rest + (d1, d2))  # (..., n, m), a view
    n, m = planes.shape[-2:]
    if planes.stride(-1) != 1 or planes.stride(-2) != m:
        return ops.diagonal(input, offset, dim1, dim2)
    length = max(min(n, m - offset) if offset >= 0 else min(n + offset, m), 0)
    start = offset if offset >= 0 else -offset * m
    flat = flatten(planes, -2)  # (..., n * m), a view: the plane is dense
    return index(flat, (..., slice(start, start + length * (m + 1), m + 1)))  # (..., length)


def unbind(input, dim: int = 0) -> tuple:
    """The slices along `dim`, without it: unbind(x)[i] is x[i]. Views, as in PyTorch."""
    check_tensor("unbind", input)
    d = _one_dim("unbind", dim, input)
    if input.ndim == 0:
        raise ShapeError(at_user_line("unbind(): a 0-d tensor has no dim to unbind"))
    return tuple(squeeze(part, d) for part in split(input, 1, d))


def repeat_interleave(
    input, repeats=None, dim: int | None = None, *, output_size: int | None = None
):
    """Each element `repeats` times in a row along `dim` (over the flattened input when dim is
    None): repeat_interleave([1, 2], 2) is [1, 1, 2, 2]. `repeats` is an int, or a tensor with
    one count per element; `repeat_interleave(counts)` alone repeats arange(len(counts)).

    A tensor of counts makes the result's length depend on its values: compiled code breaks
    the graph there (a DataDependentError while tracing), as PyTorch's does without
    output_size.
    """
    if repeats is None:  # repeat_interleave(counts)
        check_tensor("repeat_interleave", input)
        from minitorch.factories import tensor

        counts = _counts(input, None)
        return tensor(np.repeat(np.arange(counts.size), counts), device=input.device)
    check_tensor("repeat_interleave", input)
    if isinstance(repeats, bool) or not isinstance(repeats, int) and not hasattr(repeats, "dtype"):
        raise ArgumentTypeError(
            at_user_line(
                f"repeat_interleave(): repeats must be an int or a Tensor, got "
                f"{type(repeats).__name__}"
            )
        )
    if isinstance(repeats, int):
        out = ops.repeat_interleave(input, repeats, dim)
    else:
        flat = input.reshape(-1) if dim is None else input
        d = 0 if dim is None else _one_dim("repeat_interleave", dim, input)
        length = flat.shape[d] if flat.ndim else 1
        out = _by_positions(flat if flat.ndim else flat.reshape(1), _counts(repeats, length), d)
    if output_size is not None and out.shape[0 if dim is None else dim] != output_size:
        raise ShapeError(
            at_user_line(
                f"repeat_interleave(): output_size={output_size} does not match the result's "
                f"length {out.shape[0 if dim is None else dim]}"
            )
        )
    return out


def _counts(repeats, length: int | None) -> np.ndarray:
    """The repeat counts a tensor holds, one per element (one count for all broadcasts)."""
    if repeats.dtype not in (int32, int64) or repeats.ndim > 1:
        raise DTypeError(
            at_user_line(
                f"repeat_interleave(): repeats must be a 0-d or 1-d int64 tensor, got "
                f"{repeats.dtype.name} of shape {tuple(repeats.shape)}"
            )
        )
    if is_fake(repeats):
        raise DataDependentError(
            at_user_line(
                "repeat_interleave(): the result's length depends on the values of repeats "
                "(a data-dependent shape)"
            )
        )
    counts = np.asarray(repeats.detach().cpu().numpy(), dtype=np.int64).reshape(-1)
    if length is not None and counts.size == 1:
        counts = np.full(length, counts[0])
    if length is not None and counts.size != length:
        raise ShapeError(
            at_user_line(
                f"repeat_interleave(): repeats must have the same size as input along dim, but "
                f"got repeats.size(0) = {counts.size} and input.size(dim) = {length}"
            )
        )
    if (counts < 0).any():
        raise ShapeError(at_user_line("repeat_interleave(): repeats can not be negative"))
    return counts


def _by_positions(input, counts: np.ndarray, d: int):
    """input read at arange(n) repeated `counts` times along dim d."""
    from minitorch.factories import tensor

    positions = tensor(np.repeat(np.arange(counts.size), counts), device=input.device)
    return ops.index_tensor(input, *(None,) * d, positions)


def flip(input, dims):
    """Reverse the order of the elements along each of `dims` (a copy, as in PyTorch)."""
    check_tensor("flip", input)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return ops.flip(input, dims)


def fliplr(input):
    """flip(input, [1]): left to right, for at least 2 dims."""
    check_tensor("fliplr", input)
    if input.ndim < 2:
        raise ShapeError(
            at_user_line(f"fliplr(): input must be >= 2-d, got shape {tuple(input.shape)}")
        )
    return ops.flip(input, (1,))


def flipud(input):
    """flip(input, [0]): upside down, for at least 1 dim."""
    check_tensor("flipud", input)
    if input.ndim < 1:
        raise ShapeError(at_user_line("flipud(): input must be >= 1-d, got a 0-d tensor"))
    return ops.flip(input, (0,))


# ---- statistics --------------------------------------------------------------------------


def std(
    input,
    dim=None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
):
    """sqrt(var): the standard deviation over `dim`, with var's `unbiased`/`correction`
    (correction=1, Bessel's, by default)."""
    check_tensor("std", input)
    if isinstance(dim, bool):  # std(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise MinitorchError(at_user_line("std(): pass either unbiased or correction, not both"))
    if correction is None:
        correction = 0 if unbiased is False else 1
    return ops.std(input, dim=_dims("std", dim, input), correction=correction, keepdim=keepdim)


def any(input, dim=None, keepdim: bool = False):  # noqa: A001
    """Is any element nonzero (over `dim`, an int or a tuple; over all when None)? bool."""
    check_tensor("any", input)
    return ops.any(input, dim=_dims("any", dim, input), keepdim=keepdim)


def all(input, dim=None, keepdim: bool = False):  # noqa: A001
    """Is every element nonzero (over `dim`, an int or a tuple; over all when None)? bool."""
    check_tensor("all", input)
    return ops.all(input, dim=_dims("all", dim, input), keepdim=keepdim)


# ---- scans -------------------------------------------------------------------------------


def cumsum(input, dim: int, *, dtype: DType | None = None):
    """Running sums along `dim`: out[i] = input[0] + ... + input[i]. Bool and integers sum in
    int64 unless `dtype=` says otherwise (the input is converted first)."""
    check_tensor("cumsum", input)
    return ops.cumsum(_converted("cumsum", input, dtype), _one_dim("cumsum", dim, input))


def cumprod(input, dim: int, *, dtype: DType | None = None):
    """Running products along `dim`: out[i] = input[0] * ... * input[i]; the gradient is exact
    where an input is 0."""
    check_tensor("cumprod", input)
    return ops.cumprod(_converted("cumprod", input, dtype), _one_dim("cumprod", dim, input))


# ---- Tensor methods ----------------------------------------------------------------------


class ExtraMethods:
    """The functions above as Tensor methods (mixed into Tensor), and `x.repeat`."""

    def repeat(self, *sizes):
        """Tile the tensor: x.repeat(2, 3) lays x out 2 times down and 3 times across; extra
        sizes add leading dims. A copy."""
        return ops.repeat(self, shape_arg(sizes))

    def repeat_interleave(
        self, repeats=None, dim: int | None = None, *, output_size: int | None = None
    ):
        return repeat_interleave(self, repeats, dim, output_size=output_size)

    def outer(self, vec2):
        return outer(self, vec2)

    def diag(self, diagonal: int = 0):
        return diag(self, diagonal)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1):
        return diagonal(self, offset, dim1, dim2)

    def unbind(self, dim: int = 0) -> tuple:
        return unbind(self, dim)

    def flip(self, *dims, **keyword):
        """x.flip(0, 1), x.flip((0, 1)) or x.flip(dims=(0, 1))."""
        if set(keyword) - {"dims"} or (keyword and dims):
            raise ArgumentTypeError(
                at_user_line(
                    f"flip(): expected dims, positionally or as dims=, got {dims} and {keyword}"
                )
            )
        return flip(self, keyword["dims"] if keyword else shape_arg(dims))

    def fliplr(self):
        return fliplr(self)

    def flipud(self):
        return flipud(self)

    def std(
        self,
        dim=None,
        unbiased: bool | None = None,
        keepdim: bool = False,
        *,
        correction: float | None = None,
    ):
        return std(self, dim, unbiased, keepdim, correction=correction)

    def any(self, dim=None, keepdim: bool = False):
        return any(self, dim, keepdim)

    def all(self, dim=None, keepdim: bool = False):
        return all(self, dim, keepdim)

    def cumsum(self, dim: int, *, dtype: DType | None = None):
        return cumsum(self, dim, dtype=dtype)

    def cumprod(self, dim: int, *, dtype: DType | None = None):
        return cumprod(self, dim, dtype=dtype)


# Every public function hands a Proxy (any __torch_function__ type) to it: see
# [Note: __torch_function__] in minitorch/overrides.py.
make_overridable(globals(), __all__)
