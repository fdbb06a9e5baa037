"""Samples of the reductions: sums, extremes, statistics, softmax, gather and scatter_add."""

from __future__ import annotations

import numpy as np

from op_samples.common import OpSpec, S, T, f64, float_result, i32, i64


def _sum_dtype(arrays: list, **kwargs) -> str:
    kind = arrays[0].dtype.name
    return kind if kind.startswith("float") else "int64"  # integer sums accumulate in int64


def _index_dtype(arrays: list, **kwargs) -> str:
    return "int64"


def _reducing(reference):
    """numpy's reduction over `dim` (None, an int or a tuple), as PyTorch calls it.

    PyTorch lets a 0-d tensor reduce over dim 0 or -1 (it holds one element); numpy does not.
    """

    def run(a, dim=None, keepdim=False, **kwargs):
        if a.ndim == 0:
            return reference(a.reshape(1), axis=0, **kwargs).reshape(())
        return reference(a, axis=dim, keepdims=keepdim, **kwargs)

    return run


def _np_arg(find):
    def run(a, dim=None, keepdim=False):
        if dim is None or a.ndim == 0:
            return np.asarray(find(a.reshape(-1))).reshape((1,) * a.ndim if keepdim else ())
        return find(a, axis=dim, keepdims=keepdim)

    return run


def _np_topk_indices(a, k, dim=-1, largest=True, sorted=True):
    if a.ndim == 0:
        return np.asarray(0)
    order = np.argsort(-a if largest else a, axis=dim, kind="stable")  # ties: first come first
    return np.take(order, np.arange(k), axis=dim)


def _np_extreme_with_index(reduce, find):
    """max/min along a dim: (values, indices), the first extreme on ties."""

    def run(a, dim, keepdim=False):
        if a.ndim == 0:
            return a.copy(), np.asarray(0)
        indices = find(a, axis=dim, keepdims=True)
        values = np.take_along_axis(a, indices, axis=dim)
        if not keepdim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
        return values, indices

    return run


def _np_topk(a, k, dim=-1, largest=True, sorted=True):
    indices = _np_topk_indices(a, k, dim, largest, sorted)
    return (a.copy() if a.ndim == 0 else np.take_along_axis(a, indices, axis=dim)), indices


def _np_sort(a, dim=-1, descending=False, stable=False):
    if a.ndim == 0:
        return a.copy(), np.asarray(0)
    indices = np.argsort(-a if descending else a, axis=dim, kind="stable")  # ties: in order
    return np.take_along_axis(a, indices, axis=dim), indices


def _values_and_index_dtypes(arrays: list, **kwargs) -> tuple:
    return arrays[0].dtype.name, "int64"


def _np_gather(a, dim, index):
    if a.ndim == 0:
        return a.copy()
    dim %= a.ndim
    leading = tuple(slice(0, n) for n in index.shape)  # the index may be smaller off `dim`
    leading = leading[:dim] + (slice(None),) + leading[dim + 1 :]
    return np.take_along_axis(a[leading], index, axis=dim)


def _np_scatter_add(a, dim, index, src):
    out = a.copy()
    if a.ndim == 0:
        return out + src
    dim %= a.ndim
    where = list(np.indices(index.shape))
    where[dim] = index
    np.add.at(out, tuple(where), src)
    return out


def _np_softmax(a, dim):
    e = np.exp(a - np.max(a, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def _np_log_softmax(a, dim):
    shifted = a - np.max(a, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


_EXTREME_SAMPLES = [
    S(T((2, 3))),
    S(T(())),
    S(T((2, 3)), dim=0),
    S(T((2, 3, 4), f64), dim=-1),
    S(T((2, 3, 4)), dim=(0, -1)),
    S(T((2, 3, 4)), dim=(2, 0), keepdim=True),
    S(T((2, 3)), 1, True),  # dim and keepdim passed positionally
    S(T(()), dim=0, keepdim=True),
    S(T((3, 4), i32, -3, 3), dim=1),  # integers keep their dtype
    S(T((5,), i64, -2, 2)),
]

_ARG_SAMPLES = [
    S(T((2, 3))),  # dim=None: the index into the flattened tensor
    S(T((2, 3)), keepdim=True),  # ... kept as a (1, 1) tensor, as PyTorch does
    S(T(())),
    S(T(()), dim=0),
    S(T((2, 3)), dim=0),
    S(T((2, 3, 4), f64), dim=-1, keepdim=True),
    S(T((4, 5), i64, -2, 2), dim=1),  # many ties: the first one wins, as in PyTorch
    S(T((6,), i32, 0, 1)),
]

_WITH_INDEX_SAMPLES = [
    S(T((2, 3)), 1),
    S(T((2, 3)), 0, keepdim=True),
    S(T((2, 3, 4), f64), -1),
    S(T((2, 3, 4)), 1, True),
    S(T(()), 0),
    S(T((4, 5), i64, -2, 2), 1),  # ties: the first index, and its value
    S(T((3, 4), "bool"), 0),  # bool has a max along a dim (not an argmax, in PyTorch)
]

SPECS: dict[str, OpSpec] = {
    "sum": OpSpec(
        [
            S(T((2, 3))),
            S(T(())),
            S(T((2, 3)), dim=0),
            S(T((2, 3, 4), f64), dim=-1),
            S(T((2, 3, 4)), dim=(0, -1)),
            S(T((2, 3, 4)), dim=(2, 0), keepdim=True),
            S(T((2, 3)), 1, True),  # dim and keepdim passed positionally
            S(T((2, 3)), dim=None, keepdim=True),
            S(T(()), dim=0),  # a 0-d tensor accepts dim 0 and -1, as in PyTorch
            S(T((2, 0))),  # an empty sum is 0
            S(T((2, 3), i32, -3, 3), dim=1),  # integer sums accumulate in int64
        ],
        _reducing(np.sum),
        _sum_dtype,
    ),
    "mean": OpSpec(
        [
            S(T((2, 3))),
            S(T(())),
            S(T((2, 3), f64), dim=0),
            S(T((2, 3, 4)), dim=-2),
            S(T((2, 3, 4)), dim=(0, -1), keepdim=True),
            S(T((2, 3, 4), f64), dim=(1,)),
        ],
        _reducing(np.mean),
        float_result,
    ),
    "var": OpSpec(
        [
            S(T((5,))),
            S(T((2, 3), f64), dim=1),
            S(T((2, 3, 4)), dim=(0, 2), keepdim=True),
            S(T((3, 4), f64), dim=0, correction=0),  # the population variance
            S(T((4, 3)), dim=-2, correction=2),
            S(T((2, 3, 4), f64), dim=None, keepdim=True),
        ],
        lambda a, dim=None, correction=1, keepdim=False: np.var(
            a, axis=dim, ddof=correction, keepdims=keepdim
        ),
    ),
    "amax": OpSpec(_EXTREME_SAMPLES, _reducing(np.amax)),
    "amin": OpSpec(_EXTREME_SAMPLES, _reducing(np.amin)),
    # Integer results have no gradient.
    "argmax": OpSpec(_ARG_SAMPLES, _np_arg(np.argmax), _index_dtype, grad=False),
    "argmin": OpSpec(_ARG_SAMPLES, _np_arg(np.argmin), _index_dtype, grad=False),
    "max": OpSpec(
        _WITH_INDEX_SAMPLES, _np_extreme_with_index(np.amax, np.argmax), _values_and_index_dtypes
    ),
    "min": OpSpec(
        _WITH_INDEX_SAMPLES, _np_extreme_with_index(np.amin, np.argmin), _values_and_index_dtypes
    ),
    "topk": OpSpec(
        [
            S(T((7,)), 3),
            S(T((3, 5), f64), 2, dim=0),
            S(T((3, 5)), 5, dim=1, largest=False),
            S(T((2, 4, 3)), 1, -2),
            S(T((4, 6), i64, -2, 2), 4),
            S(T(()), 1),
        ],
        _np_topk,
        _values_and_index_dtypes,
    ),
    "topk_indices": OpSpec(
        [
            S(T((7,)), 3),
            S(T((3, 5), f64), 2, dim=0),
            S(T((3, 5)), 5, dim=1, largest=False),
            S(T((2, 4, 3)), 1, -2),
            S(T((4, 6), i64, -2, 2), 4),  # ties keep their order
            S(T((4, 6), i32, -2, 2), 3, largest=False),
            S(T((3, 4)), 0),
            S(T(()), 1),
        ],
        _np_topk_indices,
        _index_dtype,
        grad=False,
    ),
    "gather": OpSpec(
        [
            S(T((3, 4)), 1, T((3, 2), i64, 0, 3)),
            S(T((3, 4), f64), 0, T((5, 4), i64, 0, 2)),  # repeated rows: gradients add up
            S(T((3, 4)), -1, T((2, 3), i64, 0, 3)),  # an index smaller than the input off `dim`
            S(T((2, 3, 4)), 1, T((2, 1, 4), i64, 0, 2)),
            S(T((4,), i64, -5, 5), 0, T((6,), i64, 0, 3)),
            S(T(()), 0, T((), i64, 0, 0)),
        ],
        _np_gather,
    ),
    "scatter_add": OpSpec(
        [
            S(T((3, 4)), 1, T((3, 2), i64, 0, 3), T((3, 2))),
            S(T((3, 4), f64), 0, T((5, 4), i64, 0, 2), T((5, 4), f64)),  # positions repeat
            S(T((3, 4)), -1, T((2, 3), i64, 0, 3), T((2, 3))),
            S(T((2, 3, 4)), 2, T((2, 3, 6), i64, 0, 3), T((2, 3, 6))),
            S(T((4,), i64, -5, 5), 0, T((6,), i64, 0, 3), T((6,), i64, -5, 5)),
            S(T(()), 0, T((), i64, 0, 0), T(())),
        ],
        _np_scatter_add,
    ),
    "softmax": OpSpec(
        [
            S(T((5,)), 0),
            S(T((3, 4), f64), 1),
            S(T((3, 4)), -2),
            S(T((2, 3, 4), f64), 1),
            S(T((2, 3), low=-50, high=50), 1),  # large values: exp(x) alone would overflow
            S(T(()), 0),
        ],
        lambda a, dim: _np_softmax(a, dim) if a.ndim else np.ones(()),
    ),
    "log_softmax": OpSpec(
        [
            S(T((5,)), 0),
            S(T((3, 4), f64), 1),
            S(T((3, 4)), -2),
            S(T((2, 3, 4), f64), 1),
            S(T((2, 3), low=-50, high=50), 1),
            S(T(()), 0),
        ],
        lambda a, dim: _np_log_softmax(a, dim) if a.ndim else np.zeros(()),
    ),
    "sort": OpSpec(
        [
            S(T((7,))),
            S(T((3, 5), f64), 0),
            S(T((3, 5)), 1, True),  # descending
            S(T((4, 6), i64, -2, 2)),  # ties keep their order
            S(T((4, 6), i32, -2, 2), -1, descending=True, stable=True),
            S(T(())),
            S(T((2, 0)), 1),
        ],
        _np_sort,
        _values_and_index_dtypes,
    ),
}
