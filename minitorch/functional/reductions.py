"""Public reductions (`minitorch.sum`, `minitorch.max`, `minitorch.softmax`, ...) and their
Tensor methods.

    >>> x = minitorch.tensor([[1.0, 5.0], [4.0, 2.0]])
    >>> x.max(dim=1)
    minitorch.return_types.max(
    values=tensor([5., 4.]),
    indices=tensor([1, 0]))
"""

from __future__ import annotations

from typing import Any, NamedTuple

from minitorch import ops
from minitorch.dtype import DType
from minitorch.errors import DTypeError, MinitorchError, ShapeError, at_user_line
from minitorch.functional import pointwise
from minitorch.functional._common import check_tensor
from minitorch.ops.meta import check_dtype, normalize_dims
from minitorch.overrides import make_overridable

# the public functions of this family (and PyTorch's namespace of named result pairs)
__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "argsort",
    "gather",
    "log_softmax",
    "max",
    "mean",
    "min",
    "return_types",
    "softmax",
    "sort",
    "sum",
    "topk",
    "var",
]

# ---- arguments ---------------------------------------------------------------------------


def _dims(op: str, dim, input) -> tuple[int, ...] | None:
    """A dim, a tuple of dims, or None (and PyTorch's `dim=()`) for every dim."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return None
    return normalize_dims(op, dim, input.ndim)


def _one_dim(op: str, dim, input) -> int:
    """One dim, as a non-negative int (0 for a 0-d tensor, which accepts 0 and -1)."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise DTypeError(at_user_line(f"{op}(): dim must be an int, got {dim!r}"))
    dims = normalize_dims(op, dim, input.ndim)
    return dims[0] if dims else 0


def _converted(op: str, input, dtype: DType | None):
    """PyTorch's `dtype=` on reductions: convert the input before reducing."""
    if dtype is None or dtype is input.dtype:
        return input
    return ops.to_copy(input, dtype=check_dtype(op, dtype))


def _check_orderable(op: str, input) -> None:
    if input.dtype.category == 0:  # PyTorch implements these for numbers only
        raise DTypeError(at_user_line(f"{op}(): not implemented for dtype {input.dtype.name}"))


def _check_nonempty(op: str, input) -> None:
    if input.numel() == 0:
        raise ShapeError(
            at_user_line(
                f"{op}(): the input {tuple(input.shape)} is empty; pass dim= to reduce over a "
                "non-empty dim"
            )
        )


# ---- (values, indices) pairs -------------------------------------------------------------


class _ValuesIndices(NamedTuple):
    """(values, indices): unpacks like a tuple, and has names."""

    values: Any
    indices: Any

    def __repr__(self) -> str:
        return (
            f"minitorch.return_types.{type(self).__name__}(\n"
            f"values={self.values!r},\nindices={self.indices!r})"
        )


class return_types:  # noqa: N801 - named after torch.return_types
    """The named pairs that `max`, `min`, `topk` and `sort` return, as `torch.return_types`."""

    class max(_ValuesIndices):
        __slots__ = ()

    class min(_ValuesIndices):
        __slots__ = ()

    class topk(_ValuesIndices):
        __slots__ = ()

    class sort(_ValuesIndices):
        __slots__ = ()


# ---- sums and statistics -----------------------------------------------------------------


def sum(input, dim=None, keepdim: bool = False, *, dtype: DType | None = None):
    """Sum over `dim` (an int, a tuple, or None for every dim).

    Integers sum in int64, as in PyTorch; `dtype=` converts the input first (and the result,
    when an integer sum would otherwise widen it).
    """
    check_tensor("sum", input)
    out = ops.sum(_converted("sum", input, dtype), dim=_dims("sum", dim, input), keepdim=keepdim)
    return _converted("sum", out, dtype)


def mean(input, dim=None, keepdim: bool = False, *, dtype: DType | None = None):
    """sum / count over `dim`; an integer input needs `dtype=` (PyTorch will not guess one)."""
    check_tensor("mean", input)
    dims = _dims("mean", dim, input)
    return ops.mean(_converted("mean", input, dtype), dim=dims, keepdim=keepdim)


def var(
    input,
    dim=None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
):
    """sum((x - mean)^2) / (N - correction) over `dim`.

    correction=1 (the default; `unbiased=True`) is Bessel's correction, the sample variance;
    correction=0 (`unbiased=False`) is the population variance. As in PyTorch, `var(x, True)`
    passes `unbiased` positionally.
    """
    check_tensor("var", input)
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise MinitorchError(at_user_line("var(): pass either unbiased or correction, not both"))
    if correction is None:
        correction = 0 if unbiased is False else 1
    return ops.var(input, dim=_dims("var", dim, input), correction=correction, keepdim=keepdim)


# ---- extremes ----------------------------------------------------------------------------


def max(input, dim=None, keepdim: bool = False, *, other=None):
    """The largest element (0-d); along `dim`, `(values, indices)`; with a tensor, `maximum`.

    Over every element, ties share the gradient evenly; along a dim, it goes to the returned
    index, as in PyTorch.
    """
    check_tensor("max", input)
    if other is not None or _is_tensor(dim):
        return pointwise.maximum(input, dim if other is None else other)  # max(a, b)
    if dim is None:
        _check_nonempty("max", input)
        return ops.amax(input)
    values, indices = ops.max(input, _one_dim("max", dim, input), keepdim)
    return return_types.max(values, indices)


def min(input, dim=None, keepdim: bool = False, *, other=None):
    """The smallest element (0-d); along `dim`, `(values, indices)`; with a tensor, `minimum`."""
    check_tensor("min", input)
    if other is not None or _is_tensor(dim):
        return pointwise.minimum(input, dim if other is None else other)  # min(a, b)
    if dim is None:
        _check_nonempty("min", input)
        return ops.amin(input)
    values, indices = ops.min(input, _one_dim("min", dim, input), keepdim)
    return return_types.min(values, indices)


def amax(input, dim=(), keepdim: bool = False):
    """The maximum over `dim` (a tuple; `()` means every dim); ties share the gradient."""
    check_tensor("amax", input)
    return ops.amax(input, dim=_dims("amax", dim, input), keepdim=keepdim)


def amin(input, dim=(), keepdim: bool = False):
    """The minimum over `dim` (a tuple; `()` means every dim); ties share the gradient."""
    check_tensor("amin", input)
    return ops.amin(input, dim=_dims("amin", dim, input), keepdim=keepdim)


def argmax(input, dim: int | None = None, keepdim: bool = False):
    """The index of the first maximum along `dim`, or in the flattened tensor if dim is None."""
    check_tensor("argmax", input)
    _check_orderable("argmax", input)
    dim = None if dim is None else _one_dim("argmax", dim, input)
    return ops.argmax(input, dim=dim, keepdim=keepdim)


def argmin(input, dim: int | None = None, keepdim: bool = False):
    """The index of the first minimum along `dim`, or in the flattened tensor if dim is None."""
    check_tensor("argmin", input)
    _check_orderable("argmin", input)
    dim = None if dim is None else _one_dim("argmin", dim, input)
    return ops.argmin(input, dim=dim, keepdim=keepdim)


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """The k largest (or smallest) entries along `dim` and their indices, largest first.

    Equal values come in the order they appear. (`sorted=False` also returns them sorted.)
    """
    check_tensor("topk", input)
    _check_orderable("topk", input)
    values, indices = ops.topk(input, k, _one_dim("topk", dim, input), largest, sorted)
    return return_types.topk(values, indices)


def sort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    """(values, indices): the entries along `dim` in ascending (or descending) order.

    Equal values keep the order they had (the sort is always stable); NaN sorts as the
    largest value, as in PyTorch.
    """
    check_tensor("sort", input)
    _check_orderable("sort", input)
    values, indices = ops.sort(input, _one_dim("sort", dim, input), descending, stable)
    return return_types.sort(values, indices)


def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False):
    """The indices that sort `input` along `dim`: sort(...).indices."""
    return sort(input, dim, descending, stable).indices


# ---- softmax and selection ---------------------------------------------------------------


def softmax(input, dim: int, dtype: DType | None = None):
    """exp(x) / sum(exp(x)) along `dim`, computed as exp(x - max) so nothing overflows."""
    check_tensor("softmax", input)
    return ops.softmax(_converted("softmax", input, dtype), _one_dim("softmax", dim, input))


def log_softmax(input, dim: int, dtype: DType | None = None):
    """log(softmax(x)) along `dim`, as (x - max) - log(sum(exp(x - max))): finite where
    softmax underflows to 0."""
    check_tensor("log_softmax", input)
    dim = _one_dim("log_softmax", dim, input)
    return ops.log_softmax(_converted("log_softmax", input, dtype), dim)


def gather(input, dim: int, index):
    """Values of `input` at `index` along `dim`; the result has the index's shape.

    out[i][j] = input[index[i][j]][j]   (dim=0)
    out[i][j] = input[i][index[i][j]]   (dim=1)
    """
    check_tensor("gather", input)
    check_tensor("gather", index)
    return ops.gather(input, _one_dim("gather", dim, input), index)


def _is_tensor(x) -> bool:
    return isinstance(x, ReductionMethods)  # every Tensor is one (and tensor.py imports us)


class ReductionMethods:
    """The reductions as Tensor methods (mixed into Tensor)."""

    def sum(self, dim=None, keepdim: bool = False, *, dtype: DType | None = None):
        return sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim=None, keepdim: bool = False, *, dtype: DType | None = None):
        return mean(self, dim, keepdim, dtype=dtype)

    def var(
        self,
        dim=None,
        unbiased: bool | None = None,
        keepdim: bool = False,
        *,
        correction: float | None = None,
    ):
        return var(self, dim, unbiased, keepdim, correction=correction)

    def max(self, dim=None, keepdim: bool = False, *, other=None):
        return max(self, dim, keepdim, other=other)

    def min(self, dim=None, keepdim: bool = False, *, other=None):
        return min(self, dim, keepdim, other=other)

    def amax(self, dim=(), keepdim: bool = False):
        return amax(self, dim, keepdim)

    def amin(self, dim=(), keepdim: bool = False):
        return amin(self, dim, keepdim)

    def argmax(self, dim: int | None = None, keepdim: bool = False):
        return argmax(self, dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False):
        return argmin(self, dim, keepdim)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
        return topk(self, k, dim, largest, sorted)

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False):
        return sort(self, dim, descending, stable)

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False):
        return argsort(self, dim, descending, stable)

    def softmax(self, dim: int, dtype: DType | None = None):
        return softmax(self, dim, dtype)

    def log_softmax(self, dim: int, dtype: DType | None = None):
        return log_softmax(self, dim, dtype)

    def gather(self, dim: int, index):
        return gather(self, dim, index)


# Every public function hands a Proxy (any __torch_function__ type) to it: see
# [Note: __torch_function__] in minitorch/overrides.py.
make_overridable(globals(), __all__)
