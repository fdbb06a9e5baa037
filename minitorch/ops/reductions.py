"""The op table, reductions. See [Note: the op table] in registry.py."""

from __future__ import annotations

from minitorch.ops import meta as m
from minitorch.ops.helpers import ArrayMeta
from minitorch.ops.pointwise import div
from minitorch.ops.registry import OpDef, register

__all__ = ["sum", "mean"]  # the ops this family registers
from minitorch.ops.views import expand, reshape

# ---- sums --------------------------------------------------------------------------


def _sum_impl(xp, a, dim=None, keepdim=False):
    axes = m.normalize_dims("sum", dim, a.ndim)
    out_dtype = m.sum_meta(ArrayMeta(a), dim, keepdim).dtype.np
    return xp.sum(a, axis=axes, keepdims=keepdim, dtype=out_dtype)


def _sum_backward(g, out, x, dim=None, keepdim=False):
    # Every input element contributed once: put the reduced dims back, then broadcast.
    dims = m.normalize_dims("sum", dim, len(x.shape))
    if not keepdim:
        g = reshape(g, tuple(1 if i in dims else n for i, n in enumerate(x.shape)))
    return (expand(g, tuple(x.shape)),)


sum = register(OpDef(
    "sum", "reduction", m.sum_meta,
    impl=_sum_impl,
    backward=_sum_backward,
))


def _mean_decomposition(x, dim=None, keepdim=False):
    dims = m.normalize_dims("mean", dim, len(x.shape))
    count = 1
    for d in dims:
        count *= x.shape[d]
    return div(sum(x, dim=dims, keepdim=keepdim), count)


mean = register(OpDef("mean", "composite", None, decomposition=_mean_decomposition))
