"""The op table, attention as one op: `fused_attention`, which only the compiler writes.

See [Note: the op table] in registry.py. No user calls it: tracer/fx/passes/fuse_attention.py
puts it in an inference graph in place of the ops nanoGPT's attention is made of,

    att = (q @ k.transpose(-2, -1)) * scale             # bmm, mul
    att = att.masked_fill(hidden, float("-inf"))         # where
    out = softmax(att, dim=-1) @ v                       # amax, sub, exp, sum, div, bmm

and the LLVM backend runs it with a generated kernel (codegen/llvm/attention.py, [Note: online
softmax]). Its eager kernel here is exactly that math, op by op in numpy, so that eager mode,
the reference interpreter and every other backend compute what the ops it replaced compute
(a row whose every key is hidden is NaN, as softmax of -inf's is).

[Note: why fused_attention is a primitive]
Written in the ops above it would be a composite, and a composite is decomposed before the
compiler sees it: the fusion would be undone at once. It is a row of its own so that a graph
can hold the whole pattern as one node, which the backend can run as one kernel; it has no
derivative, because the pass leaves graphs that need one alone.
"""

from __future__ import annotations

import contextlib

import numpy as np

from minitorch.errors import DTypeError, ShapeError, at_user_line
from minitorch.ops.registry import OpDef, TensorMeta, register

# the ops this family registers
__all__ = ["fused_attention"]


def _fused_attention_meta(q, k, v, hidden, scale: float, safe: bool = False) -> TensorMeta:
    """q (..., T, D), k (..., S, D), v (..., S, Dv), one float dtype; hidden broadcasts to
    (..., T, S). The result is (..., T, Dv)."""
    sq, sk, sv = tuple(q.shape), tuple(k.shape), tuple(v.shape)
    if not (len(sq) == len(sk) == len(sv) >= 2) or sq[:-2] != sk[:-2] or sk[:-1] != sv[:-1]:
        raise ShapeError(at_user_line(f"fused_attention: shapes q {sq}, k {sk}, v {sv}"))
    if sq[-1] != sk[-1]:
        raise ShapeError(at_user_line(f"fused_attention: q {sq} and k {sk} differ in D"))
    if not (q.dtype is k.dtype is v.dtype) or q.dtype.category != 2:
        raise DTypeError(at_user_line("fused_attention: q, k and v must share a float dtype"))
    if hidden is not None:
        scores = sq[:-1] + sk[-2:-1]
        shape = tuple(hidden.shape)
        fits = len(shape) <= len(scores) and all(
            a in (1, b) for a, b in zip(reversed(shape), reversed(scores), strict=False)
        )
        if not fits or hidden.dtype.name != "bool":
            raise ShapeError(at_user_line(f"fused_attention: mask {shape} for scores {scores}"))
    return TensorMeta(sq[:-1] + sv[-1:], q.dtype)


def _fused_attention(xp, q, k, v, hidden, scale: float, safe: bool = False):
    """The ops it stands for, in order: (q @ kᵀ) * scale, where(hidden, -inf, ...), softmax
    as amax, sub, exp, sum, div, then @ v. `safe`: softmax as scaled_dot_product_attention's
    _safe_softmax, 0 for a row whose every score is -inf (where(dead, 0, ...) before and after)."""
    att = xp.matmul(q, xp.swapaxes(k, -1, -2)) * q.dtype.type(scale)
    if hidden is not None:
        att = xp.where(hidden, q.dtype.type(float("-inf")), att)
    quiet = np.errstate(invalid="ignore") if xp is np else contextlib.nullcontext()
    zero = q.dtype.type(0)
    if safe:
        dead = (att == float("-inf")).all(axis=-1, keepdims=True)
        att = xp.where(dead, zero, att)
    with quiet:  # a row of -inf's: -inf - -inf is NaN, as eager's softmax gives it
        shifted = att - att.max(axis=-1, keepdims=True)
        e = xp.exp(shifted)
        p = e / e.sum(axis=-1, keepdims=True)
        if safe:
            p = xp.where(dead, zero, p)
        return xp.matmul(p, v)  # 0 * inf: NaN, as the op-by-op product gives


# why primitive: the pattern as one node, so that a backend can run it as one kernel
# ([Note: why fused_attention is a primitive])
fused_attention = register(
    OpDef("fused_attention", "linalg", _fused_attention_meta, impl=_fused_attention)
)
