"""The loop-level IR: buffers, and the loop bodies that compute them.

[Note: loop IR]
After lowering, a graph is a list of *buffers*. An `InputBuffer` is memory the caller owns. A
`ComputedBuffer` is memory we fill, and says how to fill it: its `data` is a loop nest over
`ranges` (and, for a `Reduction`, an inner nest over `reduction_ranges`) whose body `inner_fn`
computes one element through the `ops` handler (see [Note: ops handlers]). For y = sin(x)**2:

    buf0: Pointwise(float32, ranges=(4096,))
    def inner_fn(index):
        (i0,) = index
        tmp0 = ops.load('arg0_1', i0)
        tmp1 = ops.sin(tmp0)
        tmp2 = ops.pow(tmp1, 2)
        return tmp2

A Pointwise means: for every index in ranges, buffer[layout.indexer()(index)] = inner_fn(index).
A Reduction means: for every index in ranges, buffer[...] = the sum (or max, or min: its
reduction_type) over every rindex in reduction_ranges of inner_fn(index, rindex). Loads take a
flat element offset, which the body computes from the source buffer's `Layout`.
ir/interpreter.py is the executable definition.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ir.indexing import Add, Const, Expr, FloorDiv, Mod, Mul, Var
from ir.printer import format_inner_fn
from minitorch.fake import contiguous_strides

if TYPE_CHECKING:
    from minitorch.dtype import DType
    from tracer.fx.provenance import Location


@dataclass(frozen=True)
class Layout:
    """Where a tensor's elements are: element (i0, i1, ...) sits at offset + i0*stride0 + ...

    Layout.contiguous((3, 4), float32).indexer()((i0, i1)) is the Expr `4*i0 + i1`.
    """

    size: tuple[int, ...]  # the logical shape
    stride: tuple[int, ...]  # elements between neighbours along each dim; may be 0 or negative
    dtype: DType  # the element type
    offset: int = 0  # elements from the buffer's start to element (0, 0, ...)

    @classmethod
    def contiguous(cls, size: Sequence[int], dtype: DType) -> Layout:
        """The row-major layout of a fresh buffer: stride[k] = size[k+1] * size[k+2] * ..."""
        return cls(tuple(size), contiguous_strides(tuple(size)), dtype)

    @property
    def numel(self) -> int:
        """The number of elements: the product of size."""
        return math.prod(self.size)

    def indexer(self) -> Callable[[Sequence[Expr]], Expr]:
        """The map from a logical index (one Expr per dim) to a flat element offset."""

        def index_to_offset(index: Sequence[Expr]) -> Expr:
            if len(index) != len(self.size):
                raise ValueError(f"index {tuple(map(str, index))} for a {len(self.size)}-d layout")
            if all(type(i) in _MEMOIZED for i in index):
                return _offset(self.size, self.stride, self.offset, tuple(index))
            return _offset.__wrapped__(self.size, self.stride, self.offset, index)

        return index_to_offset

    def __str__(self) -> str:
        offset = f", offset={self.offset}" if self.offset else ""
        return f"{self.dtype.name}, size={self.size}, stride={self.stride}{offset}"


# [Note: memoized offsets]
# A body runs many times while a graph compiles: the lowering, the scheduler's questions about
# its loads, the printer, the code generator. Each run asks its loads' layouts for the same
# offsets, and building an Expr is algebra (ir/indexing.py), so offsets are remembered for
# index tuples of plain Exprs (values: equal tuples give equal offsets). An index of other
# values (the interpreter's arrays) is computed each time.
_MEMOIZED = frozenset({Var, Const, Add, Mul, FloorDiv, Mod})


@functools.lru_cache(maxsize=4096)
def _offset(
    size: tuple[int, ...], stride: tuple[int, ...], offset: int, index: Sequence[Expr]
) -> Expr:
    result: Expr = Const(offset)
    for i, n, step in zip(index, size, stride, strict=True):
        # NOTE: a size-1 dim's index is always 0, so it adds nothing. Skipping it keeps
        # `i0` and `i0 + 0*i1` (from a (n, 1) buffer) the same address for the scheduler.
        if n != 1:
            result = result + i * step
    return result


@dataclass(frozen=True)
class InputBuffer:
    """A graph input: memory the caller owns, read through its layout."""

    name: str  # the placeholder's name, e.g. 'arg0_1'
    layout: Layout  # as the caller's array has it (any strides)

    def __str__(self) -> str:
        return f"{self.name}: InputBuffer({self.layout})"


@dataclass(frozen=True)
class Pointwise:
    """One element per index: out[index] = inner_fn(index) for index in product(ranges)."""

    dtype: DType  # of every value inner_fn returns
    ranges: tuple[int, ...]  # the loop nest's sizes, outermost first (the output shape)
    inner_fn: Callable[[tuple[Expr, ...]], Any]  # index -> value, through `ops`

    def __str__(self) -> str:
        header = f"Pointwise({self.dtype.name}, ranges={self.ranges})"
        return header + "\n" + format_inner_fn(self.inner_fn, self.ranges)


@dataclass(frozen=True)
class Reduction:
    """out[index] = reduce(inner_fn(index, rindex) for rindex in product(reduction_ranges)).

    `reduction_type` is one of ir/ops_handler.py's REDUCTIONS; the interpreter defines them:

    sum     the sum of the terms, in any order (backends reassociate; an integer sum wraps
            around, so every order gives the same bits)
    max     the largest term; NaN if any term is NaN, as numpy's max and eager amax
    min     the smallest term; NaN if any term is NaN
    argmax  the int64 position of the largest term, counting the reduction's iterations in
            row-major order: the first of equal terms, the first NaN if any is NaN
    argmin  the same for the smallest term
    The terms of argmax and argmin keep their own dtype, the others' are the Reduction's.
    Over zero terms: 0, -inf and inf (the identities; an integer's extremes for max and min);
    for bool, max is `any` and min `all`; an arg reduction has no answer (eager refuses it).
    """

    dtype: DType  # of the result (and of the terms, except argmax's and argmin's)
    ranges: tuple[int, ...]  # the kept dims (size 1 where keepdim kept a reduced dim)
    reduction_ranges: tuple[int, ...]  # the sizes of the reduced dims
    reduction_type: str  # 'sum', 'max', 'argmax', ... (ir/ops_handler.py's REDUCTIONS)
    inner_fn: Callable[[tuple[Expr, ...], tuple[Expr, ...]], Any]  # (index, rindex) -> value

    def __str__(self) -> str:
        header = (
            f"Reduction({self.dtype.name}, ranges={self.ranges}, "
            f"reduction_ranges={self.reduction_ranges}, reduction_type={self.reduction_type!r})"
        )
        body = format_inner_fn(self.inner_fn, self.ranges, self.reduction_ranges)
        return header + "\n" + body


@dataclass(frozen=True)
class ComputedBuffer:
    """A buffer we fill by running `data`'s loops; its layout is contiguous over data.ranges."""

    name: str  # 'buf0', 'buf1', ... in the order lowering created them
    layout: Layout  # Layout.contiguous(data.ranges, data.dtype)
    data: Pointwise | Reduction  # what to compute
    # [Note: provenance] in tracer/fx/provenance.py: the lowered graph's nodes whose values it
    # computes (those inlined into it too), and their source lines. Not part of what the
    # buffer computes: equality, the printer and the kernel cache's key ignore them.
    origins: tuple[str, ...] = field(default=(), compare=False)
    locations: tuple[Location, ...] = field(default=(), compare=False)

    @property
    def provenance(self) -> str:
        """`buf3: from sin_1, pow_2 (sincos.py:13)`: what a kernel's source says in a comment
        line before this buffer's code; '' when it has no origins."""
        if not self.origins:
            return ""
        text = f"{self.name}: from {', '.join(self.origins)}"
        if self.locations:
            text += f" ({', '.join(str(loc) for loc in self.locations)})"
        return text.replace("\n", " ")

    def __str__(self) -> str:
        return f"{self.name}: {self.data}"


Buffer = InputBuffer | ComputedBuffer


@dataclass(frozen=True)
class LoweredProgram:
    """A whole graph in loop IR: its inputs, the buffers to compute in order, and its outputs.

    inputs:
        arg0_1: InputBuffer(float32, size=(4,), stride=(1,))
    buf0: Pointwise(float32, ranges=(4,))
    def inner_fn(index):
        ...
    outputs: ('buf0',)
    """

    inputs: tuple[InputBuffer, ...]  # one per graph placeholder, in order
    buffers: tuple[ComputedBuffer, ...]  # in an order that computes producers first
    outputs: tuple[str, ...]  # the buffer holding each graph output (may be an input)

    def buffer(self, name: str) -> Buffer:
        """The input or computed buffer called `name`."""
        for buffer in (*self.inputs, *self.buffers):
            if buffer.name == name:
                return buffer
        raise KeyError(name)

    def dtypes(self) -> dict[str, DType]:
        """The dtype of every buffer, by name (what a backend's compile_kernel wants)."""
        return {b.name: b.layout.dtype for b in (*self.inputs, *self.buffers)}

    def format(self, kernels: Sequence[Any] | None = None) -> str:
        """The program as text: inputs, the buffers (or the kernels grouping them), outputs."""
        lines = ["inputs:"] + [f"    {b}" for b in self.inputs]
        body = self.buffers if kernels is None else kernels
        lines += [str(item) for item in body]
        lines.append(f"outputs: {self.outputs}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()
