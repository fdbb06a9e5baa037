"""Attention fusion: nanoGPT's attention, as AOT autograd writes it, becomes one op.

    att = (q @ k.transpose(-2, -1)) * scale              # (B, H, T, S)
    att = att.masked_fill(mask == 0, float("-inf"))
    out = F.softmax(att, dim=-1) @ v                     # (B, H, T, D)

reaches the compiler as thirteen ops of the op table (the products flattened to bmm, the
softmax decomposed):

    reshape(bmm(reshape(q), reshape(permute(k, (0, 1, 3, 2)))), (B, H, T, S))
    -> mul(_, scale) -> where(hidden, -inf, _) -> amax, sub, exp, sum, div
    -> reshape(_, (B*H, T, S)) -> bmm(_, reshape(v)) -> reshape(_, (B, H, T, D))

`fuse_attention(graph)` puts `ops.fused_attention(q, k, v, hidden, scale)` in their place
(minitorch/ops/attention.py), which the LLVM backend runs as one kernel with an online softmax
(codegen/llvm/attention.py); every other backend runs its eager kernel, the same math op by op.
F.scaled_dot_product_attention's decomposition is the same with its safe softmax around it
(`dead = all(scores == -inf, dim=-1)`; `where(dead, 0, ...)` before and after the softmax), and
becomes `fused_attention(..., safe=True)`. The driver calls it with the transposed products,
on every graph it compiles, when config.fused_attention is on (an extra: [Note: the core and
its extras] in config.py).

[Note: when attention is fused]
The rewrite must not change what the graph computes, so it fires only on the exact pattern:
- the softmax is the plain one or scaled_dot_product_attention's safe one, read op for op;
- the mask is applied after the scale, with -inf (masked_fill's `where(hidden, -inf, x)`), or
  there is no mask; a scale is a Python number multiplied after the product, or absent;
- the softmax is over the last dim, and each op between the two products is read only by the
  next ones: in a training graph the softmax's output is saved for the backward (an output of
  the forward graph), so the pattern is left alone there, and so is anything else that reads a
  value in the middle;
- q, k and v are 4-d (B, H, T, D), one float dtype and head dim, no size 0; the mask
  broadcasts over batch and head ((T, S), (1, 1, T, S), ...): the kernel reads one (T, S).
Anything else stays as it was. Like the transposed products, the rewrite makes a new graph and
leaves the one it was given as traced.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

from minitorch import ops
from minitorch.fake import FakeTensorMode
from tracer.fx import Graph
from tracer.fx.node import Node

_FLOATS = ("float32", "float64")


@dataclass
class _Attention:
    """One match: the inputs of the fused op, and the nodes it replaces."""

    q: Node
    k: Node
    v: Node
    hidden: Node | None  # where True, the score is -inf
    scale: float
    safe: bool  # a row of -inf's is 0 (scaled_dot_product_attention's safe softmax), not NaN
    out: Node  # the second product, or the reshape of it to (B, H, T, D)
    inner: list[Node]  # out and the nodes before it, readers first: erased
    views: list[Node]  # the reshapes and the permute of q, k, v: erased if nothing else reads them


def fuse_attention(graph: Graph) -> Graph:
    """Each attention in `graph` as one `ops.fused_attention` ([Note: when attention is
    fused]), in a new graph; `graph` itself where nothing matches."""
    if not any(_match(node) for node in graph.nodes):
        return graph
    graph = copy.deepcopy(graph)  # new nodes, the same names, targets and meta values
    for node in list(graph.nodes):
        found = _match(node)
        if found is None:
            continue
        args = (found.q, found.k, found.v, found.hidden, found.scale, found.safe)
        with graph.inserting_before(found.out):
            fused = graph.call_function(ops.fused_attention, args)
        fused.meta = {k: v for k, v in found.out.meta.items() if k != "val"}  # its provenance
        with FakeTensorMode():
            fused.meta["val"] = ops.fused_attention(
                *(a.meta["val"] if isinstance(a, Node) else a for a in args)
            )
        found.out.replace_all_uses_with(fused)
        for dead in found.inner + found.views:
            if not dead.users:
                graph.erase_node(dead)
    return graph


def _match(node: Node) -> _Attention | None:
    """The attention whose last node is `node`, or None."""
    if not (_is(node, ops.reshape) and _is(node.args[0], ops.bmm)):
        return None  # bmm's (B*H, T, D) back to (B, H, T, D)
    out, node = node, node.args[0]
    p_flat, v_flat = node.args
    div, v = _unflatten(p_flat), _unflatten(v_flat)
    inner = [out, node, p_flat]
    dead = None  # scaled_dot_product_attention's safe softmax: its rows of -inf's
    if _is(div, ops.where) and _is_zero(div.args[1]):
        inner.append(div)
        dead, div = div.args[0], div.args[2]
    if v is None or not _is(div, ops.div):
        return None
    exp, total = div.args
    if not (_is(exp, ops.exp) and _is(total, ops.sum) and total.args[0] is exp):
        return None
    if not (_last_dim(total) and _is(exp.args[0], ops.sub)):
        return None
    scores, amax = exp.args[0].args
    if not (_is(amax, ops.amax) and amax.args[0] is scores and _last_dim(amax)):
        return None
    inner += [div, total, exp, exp.args[0], amax, scores]
    if dead is not None:  # where(dead, 0, scores) before the softmax too, and dead's ops
        if not (_is(scores, ops.where) and scores.args[0] is dead and _is_zero(scores.args[1])):
            return None
        scores = scores.args[2]
        rows = _rows_of_minus_inf(dead, scores)
        if rows is None:
            return None
        inner += [*rows, scores]
    hidden = None
    if _is(scores, ops.where) and _is_minus_inf(scores.args[1]):
        hidden, scores = scores.args[0], scores.args[2]
        inner.append(scores)
    scale = 1.0
    if _is(scores, ops.mul) and _is_number(scores.args[1]):
        scale, scores = float(scores.args[1]), scores.args[0]
        inner.append(scores)
    if not _is(scores, ops.reshape) or not _is(scores.args[0], ops.bmm):
        return None
    product = scores.args[0]
    q, k_t = _unflatten(product.args[0]), _unflatten(product.args[1])
    inner += [product]
    if q is None or not (_is(k_t, ops.permute) and tuple(k_t.args[1]) == (0, 1, 3, 2)):
        return None
    if not isinstance(hidden, Node | None):
        return None
    views = [product.args[0], product.args[1], k_t, v_flat]
    found = _Attention(q, k_t.args[0], v, hidden, scale, dead is not None, out, inner, views)
    return found if _fits(found) else None


def _rows_of_minus_inf(dead: Node, scores: Node) -> list[Node] | None:
    """[dead, sum, eq, eq] where `dead` is all(scores == -inf, dim=-1, keepdim=True) as the
    op table decomposes it: eq(sum(eq(eq(scores, -inf), 0), dim=-1, keepdim=True), 0)."""
    chain = [dead]
    for op in (ops.eq, ops.sum, ops.eq, ops.eq):
        node = chain[-1]
        if not _is(node, op):
            return None
        chain.append(node.args[0])
    checks = (
        _is_zero(dead.args[1]),
        _last_dim(chain[1]),
        _is_zero(chain[2].args[1]),
        _is_minus_inf(chain[3].args[1]),
        chain[4] is scores,
    )
    return chain[:4] if all(checks) else None


def _fits(found: _Attention) -> bool:
    """The shapes, dtypes and readers the fused op stands for ([Note: when attention is
    fused])."""
    vals = [found.q.meta.get("val"), found.k.meta.get("val"), found.v.meta.get("val")]
    if any(v is None or len(v.shape) != 4 or 0 in v.shape for v in vals):
        return False
    q, k, v = vals
    if not (q.dtype.name in _FLOATS and q.dtype is k.dtype is v.dtype):
        return False
    if tuple(found.out.meta["val"].shape) != q.shape or v.shape[3] != q.shape[3]:
        return False
    if found.hidden is not None:
        mask = found.hidden.meta.get("val")
        if mask is None or mask.dtype.name != "bool" or len(mask.shape) > 4:
            return False
        if any(size != 1 for size in mask.shape[:-2]):
            return False
    members = set(found.inner)
    # every value between the products is read only by the next ops of the pattern
    return all(set(n.users) <= members for n in found.inner if n is not found.out)


def _unflatten(node: Node) -> Node | None:
    """x where `node` is reshape(x, (B*H, n, m)) of a 4-d x (B, H, n, m), or None."""
    if not _is(node, ops.reshape):
        return None
    source = node.args[0]
    shape = source.meta.get("val").shape if "val" in source.meta else ()
    if len(shape) != 4 or tuple(node.args[1]) != (shape[0] * shape[1], shape[2], shape[3]):
        return None
    return source


def _last_dim(node: Node) -> bool:
    """Whether a reduction `node` is over the last dim of its 4-d input, keeping it."""
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    return keepdim is True and dims in ((-1,), (3,))


def _is(node: object, op: object) -> bool:
    return isinstance(node, Node) and node.op == "call_function" and node.target is op


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_zero(value: object) -> bool:
    return _is_number(value) and value == 0


def _is_minus_inf(value: object) -> bool:
    return isinstance(value, float) and math.isinf(value) and value < 0
