"""The op table, views: ops whose eager result shares memory with their input.

See [Note: the op table] in registry.py.
"""

from __future__ import annotations

from minitorch.ops import meta as m
from minitorch.ops.helpers import ArrayMeta, sum_to
from minitorch.ops.registry import OpDef, register

__all__ = ["expand", "reshape"]  # the ops this family registers

# ---- views -------------------------------------------------------------------------------

expand = register(OpDef(
    "expand", "view", m.expand_meta,
    impl=lambda xp, a, shape: xp.broadcast_to(a, m.expand_meta(ArrayMeta(a), shape).shape),
    backward=lambda g, out, x, shape: (sum_to(g, x),),
))
reshape = register(OpDef(
    "reshape", "view", m.reshape_meta,
    impl=lambda xp, a, shape: xp.reshape(a, m.infer_reshape("reshape", a.shape, shape)),
    backward=lambda g, out, x, shape: (reshape(g, tuple(x.shape)),),
))
