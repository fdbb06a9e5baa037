"""The reference interpreter: what a kernel means, computed with numpy.

[Note: the reference interpreter]
This file is the definition of the loop IR; every backend is tested against it. A kernel means

    for index in product(ranges):                       # row-major: the rows
        for loop in loops:                              # in order ([Note: fusion])
            for rindex in product(loop.ranges):         # once, if loop.ranges is ()
                for node in loop.nodes:
                    Pointwise: v = inner_fn(node_index(...))     # its dims named i0.., r0..
                    Reduction: acc = combine(acc, inner_fn(index, rindex))
                    remember v as the value of node.name here
                    if node.name in writes: store v at node.layout.indexer()(its index)
            after the loop: each reduction's v = acc, remembered (and stored if written),
            and the loop's element values are forgotten

and a load of a node remembered at this index returns the remembered value; a load of a
forgotten one reads memory, where its loop stored it. The reductions
(`sum`, `max`, `min`, `argmax`, `argmin`: ir/ops_handler.py's REDUCTIONS) are defined by the
numpy code below, and every op a body may call by its numpy meaning in ir/op_table.py ([Note:
the loop-IR ops]). Ranges and
index expressions may mention size symbols (s0, s1, ...: [Note: symbolic sizes]); `run_kernel`
takes their values.

We run all iterations at once instead of one by one: each loop variable is an `np.arange`
shaped to broadcast along its own axis (i0 has shape (n0, 1), i1 shape (1, n1)), so an index
expression like `4*i0 + i1` evaluates to the array of every offset, a load is one gather, and
`ops.sin` is one `np.sin` over the whole iteration space. A reduction evaluates its body over
ranges + reduction_ranges and reduces the reduction axes away; so does a loop's element
node, and a node run once per row evaluates over ranges only. Since every iteration of a loop
is done before the next loop starts, loops run in order is all their meaning asks.

Values carry their dtype, and the ops check what a typed backend would need: both operands of a
binary op have the same dtype, and a node computes exactly its declared dtype.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.indexing import Expr, Var, index_error, index_vars, is_size_symbol
from ir.memory import allocate
from ir.nodes import ComputedBuffer, Layout, LoweredProgram, Pointwise
from ir.op_table import LoopOp
from ir.ops_handler import OpsHandler, set_ops_handler
from ir.scheduler import FusedKernel, node_index, schedule, store_index
from minitorch.dtype import DType
from minitorch.errors import (
    CompileError,
    DTypeError,
    ShapeError,
)


class NumpyHandler(OpsHandler):
    """Values are numpy arrays holding one element per iteration of the kernel.

    Every op of the table, composite ones too, is its numpy meaning (`LoopOp.evaluate`, [Note:
    the loop-IR ops]), never a decomposition that could round differently; the ops that read
    the kernel are written here.
    """

    def __init__(
        self, memory: dict[str, np.ndarray], loop_vars: dict[str, np.ndarray | int], shape: tuple
    ) -> None:
        self.memory = memory  # buffer name -> the array holding it (any strides)
        self.shape = shape  # the iteration space: ranges + reduction_ranges
        self.loop_vars = loop_vars  # 'i0' -> np.arange(n0) shaped along axis 0; 's0' -> 7
        self.registers: dict[str, tuple[Expr, np.ndarray]] = {}  # name -> (store index, value)
        self.indirect_count = 0  # index variables made by indirect_indexing: ind0, ind1, ...

    def table_op(self, op: LoopOp, *args: Any) -> np.ndarray:
        return op.evaluate(*args)

    def load(self, name: str, index: Expr) -> np.ndarray:
        if name in self.registers:
            stored_at, value = self.registers[name]
            if index != stored_at:
                raise CompileError(
                    f"load of {name} at {index}, but this kernel has it at {stored_at}"
                )
            return value
        if name not in self.memory:
            raise CompileError(f"load of {name}, which this kernel neither has nor reads")
        flat, start = flat_view(self.memory[name])
        offsets = np.broadcast_to(index.evaluate(self.loop_vars), self.shape)
        return flat[start + offsets]

    def constant_like(self, value: float | int, like: np.ndarray) -> np.ndarray:
        return np.asarray(value, dtype=np.result_type(like))

    # -- indices ([Note: indirect loads]) ------------------------------------------------------

    def index_expr(self, expr: Expr, dtype: DType) -> np.ndarray:
        return np.asarray(expr.evaluate(self.loop_vars), dtype=dtype.np)

    def indirect_indexing(self, value: np.ndarray, size: int, wrap_negative: bool) -> Expr:
        var = Var(f"ind{self.indirect_count}")
        self.indirect_count += 1
        self.loop_vars[var.name] = checked_index(value, size, wrap_negative)
        return var


def checked_index(value: np.ndarray, size: int, wrap_negative: bool) -> np.ndarray:
    """The integers `value` as indices into a dim of `size`: negative ones wrapped around if
    `wrap_negative`; any still outside [0, size) is an IndexOutOfRangeError."""
    value = np.asarray(value).astype(np.int64)
    low = -size if wrap_negative else 0
    bad = value[(value < low) | (value >= size)]
    if bad.size:
        raise index_error(int(bad.flat[0]), size)
    return np.where(value < 0, value + size, value) if wrap_negative else value


def run_kernel(
    kernel: FusedKernel, memory: dict[str, np.ndarray], sizes: dict[str, int] | None = None
) -> None:
    """Run one kernel: read `kernel.reads` from memory and store `kernel.writes` into it.

    `sizes` gives the size symbols the kernel mentions their values ({'s0': 7}); the arrays
    in `memory` must already have those sizes.
    """
    sizes = sizes or {}
    not_sizes = [name for name in sizes if not is_size_symbol(name)]
    if not_sizes:
        raise CompileError(f"{kernel.name}: {not_sizes} are not size symbols (s0, s1, ...)")
    ranges = tuple(_size(n, sizes) for n in kernel.ranges)
    reduction_ranges = tuple(_size(n, sizes) for n in kernel.reduction_ranges)
    shape = ranges + reduction_ranges  # the whole iteration space
    if 0 in ranges:
        return  # no iterations, nothing to store
    index = index_vars("i", len(ranges))
    rindex = index_vars("r", len(reduction_ranges))
    loop_vars: dict[str, np.ndarray | int] = dict(sizes)  # 's0' -> 7, for index expressions
    for axis, (var, n) in enumerate(zip(index + rindex, shape, strict=True)):
        axes = [1] * len(shape)
        axes[axis] = n
        loop_vars[var.name] = np.arange(n).reshape(axes)  # 'i1' -> shape (1, n1, 1, ...)

    handler = NumpyHandler(memory, loop_vars, shape)
    row_shape = ranges + (1,) * len(reduction_ranges)  # a value per row: a reduction's
    with set_ops_handler(handler):
        for loop in kernel.loops:
            for node in loop.nodes:
                index = node_index(kernel.ranges, loop.ranges, node)
                once_per_row = isinstance(node.data, Pointwise) and not loop.ranges
                handler.shape = row_shape if once_per_row else shape  # what loads gather
                value = _compute(node, index, rindex, handler.shape)
                handler.registers[node.name] = (store_index(node, index), value)
                if node.name in kernel.writes:
                    flat, start = flat_view(memory[node.name])
                    offsets = start + store_index(node, index).evaluate(loop_vars)
                    offsets, value = np.broadcast_arrays(offsets, value)
                    flat[offsets] = value
            if loop.ranges:  # the loop's elements are gone; its reductions stay, one per row
                for node in loop.nodes:
                    if isinstance(node.data, Pointwise):
                        del handler.registers[node.name]


def _compute(
    node: ComputedBuffer, index: tuple[Expr, ...], rindex: tuple[Expr, ...], shape: tuple
) -> np.ndarray:
    """The value of `node` at every iteration: a pointwise's broadcast to `shape`, a
    reduction's with the reduced axes kept (as size 1)."""
    data = node.data
    if isinstance(data, Pointwise):
        value = np.broadcast_to(data.inner_fn(index), shape)
    else:
        if data.reduction_type not in _REDUCE:
            raise CompileError(f"{node.name}: no reduction {data.reduction_type!r}")
        terms = np.broadcast_to(data.inner_fn(index, rindex), shape)
        reduction_axes = tuple(range(len(index), len(shape)))
        value = _REDUCE[data.reduction_type](terms, reduction_axes, data.dtype)
    if value.dtype != data.dtype.np:
        raise CompileError(f"{node.name} computes {value.dtype}, not {data.dtype.name}")
    return value


def _size(n: int | Expr, sizes: dict[str, int]) -> int:
    """A loop size: an int as is, an Expr over the size symbols evaluated at `sizes`."""
    if not isinstance(n, Expr):
        return n
    missing = n.free_vars() - set(sizes)
    if missing:
        raise CompileError(f"the size {n} needs values for {sorted(missing)}: pass sizes=")
    return n.evaluate(sizes)


# The reductions. keepdims: the result stays broadcastable against the iteration space, for
# later loads. max and min start from their identities, so zero terms give -inf and inf (the
# dtype's extremes for integers; the eager amax refuses empty dims, so lowering never asks),
# and NaN propagates as in np.max.
def _sum(terms: np.ndarray, axes: tuple[int, ...], dtype: DType) -> np.ndarray:
    return np.sum(terms, axis=axes, dtype=dtype.np, keepdims=True)


def _max(terms: np.ndarray, axes: tuple[int, ...], dtype: DType) -> np.ndarray:
    return np.max(terms, axis=axes, keepdims=True, initial=lowest(dtype.np))


def _min(terms: np.ndarray, axes: tuple[int, ...], dtype: DType) -> np.ndarray:
    return np.min(terms, axis=axes, keepdims=True, initial=highest(dtype.np))


def lowest(dtype: np.dtype) -> bool | int | float:
    """The identity of max: -inf, the integer's minimum, or False (max of bools is `any`)."""
    if dtype.kind == "b":
        return False
    return int(np.iinfo(dtype).min) if dtype.kind == "i" else -np.inf


def highest(dtype: np.dtype) -> bool | int | float:
    """The identity of min: inf, the integer's maximum, or True (min of bools is `all`)."""
    if dtype.kind == "b":
        return True
    return int(np.iinfo(dtype).max) if dtype.kind == "i" else np.inf


def _argmax(terms: np.ndarray, axes: tuple[int, ...], dtype: DType) -> np.ndarray:
    return _position(np.argmax, terms, axes)


def _argmin(terms: np.ndarray, axes: tuple[int, ...], dtype: DType) -> np.ndarray:
    return _position(np.argmin, terms, axes)


def _position(find, terms: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The int64 position, in the row-major order of the reduced (trailing) axes, of the term
    `find` picks: the first extreme, and the first NaN if there is one (numpy's argmax)."""
    kept = terms.shape[: len(terms.shape) - len(axes)]
    flat = terms.reshape(kept + (-1,))  # (kept..., every term of one output)
    return find(flat, axis=-1).astype(np.int64).reshape(kept + (1,) * len(axes))


# reduction_type -> how to reduce the terms
_REDUCE = {"sum": _sum, "max": _max, "min": _min, "argmax": _argmax, "argmin": _argmin}


def run_reference(
    program: LoweredProgram,
    kernels: Sequence[FusedKernel] | None,
    inputs: Sequence[np.ndarray],
) -> list[np.ndarray]:
    """Run a lowered program on numpy arrays (one per program input); returns its outputs.

    kernels=None runs every buffer as its own kernel (schedule(program, fuse=False)).
    """
    if kernels is None:
        kernels = schedule(program, fuse=False)
    if len(inputs) != len(program.inputs):
        raise ShapeError(f"the program takes {len(program.inputs)} inputs, got {len(inputs)}")
    memory = {}
    for buffer, array in zip(program.inputs, inputs, strict=True):
        _check_matches_layout(buffer.name, array, buffer.layout)
        memory[buffer.name] = array
    memory.update(allocate(program, [name for k in kernels for name in k.writes]))
    for kernel in kernels:
        run_kernel(kernel, memory)
    return [memory[name] for name in program.outputs]


def disagreements(got: np.ndarray, want: np.ndarray, ulps: float = 0) -> np.ndarray:
    """Where a backend's `got` fails to agree with the interpreter's `want`, as a bool mask.

    Agreeing is [Note: where backends must agree]: NaN where want is NaN, the same infinities
    and signed zeros, other values within `ulps` units in the last place of want (ulps=0:
    equal). ir/agreement.py's MATH_ULPS says how many ulps each op may be off.
    """
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype:
        raise DTypeError(f"got {got.dtype}, but the interpreter computes {want.dtype}")
    if want.dtype.kind in "bi":  # bools and integers: exactly (float64 would round int64s)
        return got != want
    with np.errstate(invalid="ignore"):
        error = np.abs(got.astype(np.float64) - want)  # inf - inf is NaN: not <= anything
    within = error <= ulps * np.spacing(np.abs(want)).astype(np.float64)
    same = (got == want) & (np.signbit(got) == np.signbit(want))  # zeros, infinities, ...
    finite = np.isfinite(want) & (want != 0)
    return ~((np.isnan(got) & np.isnan(want)) | same | (finite & within))


def flat_view(array: np.ndarray) -> tuple[np.ndarray, int]:
    """(flat, start): a 1-d view of all the memory `array` spans, and where its element 0 is.

    The element `k` elements away from array's first element (k < 0 with negative strides) is
    flat[start + k]: that is how a flat index from a Layout addresses memory.
    """
    if array.size == 0:
        return array.reshape(-1), 0
    if array.ndim == 0:
        array = array.reshape(1)  # a view; indexing a 0-d array would give a copied scalar
    item = array.itemsize
    if any(b % item for b in array.strides):
        raise ShapeError(f"strides {array.strides} are not multiples of the item size {item}")
    dims = [(n, b // item) for n, b in zip(array.shape, array.strides, strict=True)]
    low = sum((n - 1) * s for n, s in dims if s < 0)  # farthest element backwards
    high = sum((n - 1) * s for n, s in dims if s > 0)  # farthest element forwards
    # A view that starts at the lowest address: the last element along dims that run backwards.
    corner = array[tuple(slice(n - 1, n) if s < 0 else slice(0, 1) for n, s in dims)]
    flat = np.lib.stride_tricks.as_strided(corner, shape=(high - low + 1,), strides=(item,))
    return flat, -low


def _check_matches_layout(name: str, array: np.ndarray, layout: Layout) -> None:
    """An input array must be what the program was lowered for: its shape and element strides."""
    if not isinstance(array, np.ndarray) or array.shape != layout.size:
        raise ShapeError(f"input {name}: expected an array of shape {layout.size}")
    if array.dtype != layout.dtype.np:
        raise DTypeError(f"input {name}: expected {layout.dtype.name}, got {array.dtype}")
    strides = tuple(b // array.itemsize for b in array.strides)
    for n, got, want in zip(layout.size, strides, layout.stride, strict=True):
        if n > 1 and got != want:  # a size-1 dim's stride is never used
            raise ShapeError(f"input {name}: strides {strides}, but its layout has {layout.stride}")
