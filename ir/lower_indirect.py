"""Lowerings of the ops that choose which element to read: gather, embedding, x[indices], cat
and dropout.

[Note: lowering indirect reads]
A view reads the element its index names through an affine map (ir/lowering.py); these ops
read one chosen by data, by a range, or by a hash:

    gather(x, 1, idx)      out[i0, i1] = x[i0, idx[i0, i1]]
                               tmp0 = ops.load('idx', 3*i0 + i1)
                               ind0 = ops.indirect_indexing(tmp0, 4, False)
                               tmp1 = ops.load('x', 4*i0 + ind0)
    embedding(w, idx)      out[i0, i1] = w[idx[i0], i1]: a whole row, by a loaded index
    index_tensor(x, None, idx)
                           out[i0, i1] = x[i0, idx[i1]] (x[:, idx]), negative indices wrapped
    cat((a, b), dim=0)     out[i0] = a[i0] if i0 < 3 else b[i0 - 3]: a select over the inputs
    dropout_keep(x, p, s)  out[i0] = rand(seed, offset + i0) >= p: ops.rand, a hash of the
                           element's counter ([Note: counter-based random numbers])

The data-chosen index goes through ops.indirect_indexing, which checks it against the dim
([Note: indirect loads] in ir/ops_handler.py): an index out of range raises
IndexOutOfRangeError, as eager mode does, and never reads outside the buffer.

cat reads every input at every index and selects one: the interpreter computes both sides of a
where over the whole array at once, and LLVM's select evaluates both too. So input k, which
covers [start, start + n) along the dim, is read at (i - start) mod n, written `(i + c) % n`
with c = (-start) mod n so that no operand of % is negative ([Note: index expressions]): that
is i - start where the input is selected, and some element of it elsewhere.
"""

from __future__ import annotations

from typing import Any

import minitorch.ops as table
from ir.indexing import Const, Expr
from ir.lower_pointwise import Extern, Index, TensorValue, broadcast, operand
from ir.nodes import Layout, Pointwise
from ir.ops_handler import ops
from minitorch.dtype import float64, int64
from minitorch.ops.meta import broadcast_shapes
from minitorch.ops.registry import TensorMeta
from minitorch.ops.views_meta import cat_offsets, normalize_dim


def _gather(out: TensorMeta, x: TensorValue, dim: int, index: TensorValue) -> Pointwise:
    """out[p] = x[p with index[p] along dim]; index's other dims are no longer than x's."""
    if not x.shape:
        raise Extern("gather of a 0-d tensor is one element: not a loop")
    dim = normalize_dim("gather", dim, len(x.shape))

    def load(i: Index) -> Any:
        position = ops.indirect_indexing(index.loader(i), x.shape[dim], False)
        return x.loader((*i[:dim], position, *i[dim + 1 :]))

    return Pointwise(out.dtype, out.shape, load)


def _embedding(
    out: TensorMeta, weight: TensorValue, indices: TensorValue, padding_idx: int | None = None
) -> Pointwise:
    """out[p, j] = weight[indices[p], j]; padding_idx matters to the gradient only."""

    def load(i: Index) -> Any:
        row = ops.indirect_indexing(indices.loader(i[:-1]), weight.shape[0], False)
        return weight.loader((row, i[-1]))

    return Pointwise(out.dtype, out.shape, load)


def _index_tensor(out: TensorMeta, x: TensorValue, *indices: TensorValue | None) -> Pointwise:
    """x[i0, i1, ...] with integer tensors (None: a whole dim), negative indices counting from
    the end; where the broadcast index dims go is [Note: advanced indexing] (ops/indexing.py)."""
    where = [d for d, i in enumerate(indices) if i is not None]
    batch = broadcast_shapes("index", *(indices[d].shape for d in where))
    readers = {d: broadcast(indices[d], batch) for d in where}
    adjacent = where[-1] - where[0] + 1 == len(where)
    first = where[0] if adjacent else 0  # where the batch dims sit in the result

    def load(i: Index) -> Any:
        b = i[first : first + len(batch)]
        rest = iter((*i[:first], *i[first + len(batch) :]))  # the other dims, in order
        x_index = []
        for d, n in enumerate(x.shape):
            if d in readers:
                x_index.append(ops.indirect_indexing(readers[d](b), n, True))
            else:
                x_index.append(next(rest))
        return x.loader(tuple(x_index))

    return Pointwise(out.dtype, out.shape, load)


def _cat(out: TensorMeta, *tensors: TensorValue, dim: int = 0) -> Pointwise:
    """Each output element from the input whose range along `dim` holds it (see the Note)."""
    spans = cat_offsets(tensors, dim)
    dim = normalize_dim("cat", dim, len(out.shape))
    parts = []  # (the input's loader, in the promoted dtype; where it starts; where it stops)
    for t, span in zip(tensors, spans, strict=True):
        if span is not None and span[1] > span[0]:  # an input with nothing along dim: skip
            parts.append((operand(t, t.shape, out.dtype), *span))
    if not parts:
        raise Extern("cat of empty tensors makes no elements")

    def read(load: Any, start: int, stop: int, i: Index) -> Any:
        n = stop - start
        along: Expr = i[dim] - start if len(parts) == 1 else (i[dim] + (-start) % n) % n
        return load((*i[:dim], along, *i[dim + 1 :]))

    def load(i: Index) -> Any:
        *before, last = parts
        value = read(*last, i)
        for part in reversed(before):  # the last input whose range starts at or before i
            inside = ops.lt(ops.index_expr(i[dim], int64), ops.constant(part[2], int64))
            value = ops.where(inside, read(*part, i), value)
        return value

    return Pointwise(out.dtype, out.shape, load)


def _dropout_keep(out: TensorMeta, x: TensorValue, p: float, state: TensorValue) -> Pointwise:
    """out[p] = uniform(seed, offset + the flat position of p) >= p, as the eager kernel."""
    flat = Layout.contiguous(out.shape, out.dtype).indexer()  # row-major position

    def load(i: Index) -> Any:
        seed, offset = state.loader((Const(0),)), state.loader((Const(1),))
        counter = ops.add(offset, ops.index_expr(flat(i), int64))
        return ops.ge(ops.rand(seed, counter), ops.constant(float(p), float64))

    return Pointwise(out.dtype, out.shape, load)


# The ops that turn loaded data into an index, checked against its dim. They read their first
# operand only at the elements data chooses: lowering computes all of that operand (realizes
# it) when its inlined loader checks an index of its own ([Note: inlining], rule 4).
INDIRECT_READS = frozenset({table.gather, table.embedding, table.index_tensor})

INDIRECT = {
    table.gather: _gather,
    table.embedding: _embedding,
    table.index_tensor: _index_tensor,
    table.cat: _cat,
    table.dropout_keep: _dropout_keep,
}  # fmt: skip
