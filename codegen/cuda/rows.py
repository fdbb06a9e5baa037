"""How a kernel's rows are spread over the grid: the code each launch strategy emits around
the kernel's loops (launch.py chooses the strategy; kernel.py emits the loops of one row).

    def block_per_row(rows: Rows) -> None:            # a strategy's `emit`
        with rows.grid.blocks() as (block, grid_dim):
            with rows.loop(block, grid_dim):          # block b: rows b, b + G, ...
                rows.emit(BlockRow(rows.handler, rows.grid))   # the row's loops, shared

A row is walked by one thread (`SerialRow`) or shared by the threads of a `Grid`'s block
(`BlockRow`): thread t takes elements t, t + B, ..., then they combine. With the grid's warps
as its blocks (`grid.warps()`), a BlockRow is a warp's row: a warp per row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

from llvmlite import ir

from codegen.cuda.grid import Combine, Grid, Private
from codegen.llvm.loops import I64, IndexValue, entry_alloca, i64
from codegen.llvm.ops import LLVMOps
from ir.indexing import Expr, index_vars
from ir.scheduler import FusedKernel


class SerialRow:
    """A row that one thread walks alone, in order."""

    def __init__(self, handler: LLVMOps) -> None:
        self.handler = handler

    def phase(self) -> nullcontext:
        return nullcontext()

    def walk(self, ranges: tuple[int | Expr, ...]) -> Iterator[ir.Value]:
        if not ranges:  # one term, at no loop: its values stay registers after it
            return nullcontext(i64(0))
        return strided(self.handler, i64(0), product(self.handler, ranges), i64(1), "r")

    def private(self, type_: ir.Type, name: str) -> Private:
        return Private(self, entry_alloca(self.handler.builder, type_, name), type_)

    def private_address(self, private: Private) -> ir.Value:
        return private.slot

    def combine(self, parts: list[Private], op: Combine) -> list[ir.Value]:
        return [self.handler.builder.load(part.slot, typ=part.type) for part in parts]

    def one_thread(self) -> nullcontext:
        return nullcontext()


class BlockRow:
    """A row that the threads of a block share: thread t takes elements t, t + B, t + 2B, ...
    (neighbouring threads, neighbouring elements: coalesced), then they combine."""

    def __init__(self, handler: LLVMOps, grid: Grid) -> None:
        self.handler = handler
        self.grid = grid

    def phase(self) -> Iterator[ir.Value]:
        return self.grid.threads()

    def walk(self, ranges: tuple[int | Expr, ...]) -> Iterator[ir.Value]:
        step = i64(self.grid.block_dim)
        return strided(self.handler, self.grid.thread, product(self.handler, ranges), step, "r")

    def private(self, type_: ir.Type, name: str) -> Private:
        return self.grid.private(type_, name)

    def combine(self, parts: list[Private], op: Combine) -> list[ir.Value]:
        return self.grid.combine(parts, op)

    def one_thread(self) -> Iterator[None]:
        return self.grid.one_thread()


Row = SerialRow | BlockRow


@dataclass
class Rows:
    """A kernel's rows, for a strategy to spread over `grid` (its `emit(rows)`)."""

    handler: LLVMOps  # the ops handler: `handler.builder` emits, its index env holds i0, ...
    kernel: FusedKernel
    grid: Grid  # the launch's blocks and threads (emulated or not), of the plan's block_dim
    emit_row: Callable[[LLVMOps, FusedKernel, Row], None]  # kernel.py's loops of one row

    def count(self) -> ir.Value:
        """The number of rows, an i64 (from the size symbols if need be)."""
        return product(self.handler, self.kernel.ranges)

    @contextmanager
    def loop(self, first: ir.Value, step: ir.Value) -> Iterator[ir.Value]:
        """for row in range(first, rows, step), binding the kernel's row indices i0, i1, ...
        from it; gives the row."""
        with strided(self.handler, first, self.count(), step, "row") as row:
            bind(self.handler, "i", self.kernel.ranges, row)
            yield row

    def emit(self, row: Row) -> None:
        """The kernel's loops over the current row, walked as `row` says."""
        self.emit_row(self.handler, self.kernel, row)


# -- the in-tree strategies' code (launch.py registers them) ------------------------------------


def thread_per_row(rows: Rows) -> None:
    """Thread t of block b takes rows b * B + t, then + G * B, ...: each walks its row alone."""
    grid, b = rows.grid, rows.handler.builder
    with grid.blocks() as (block, grid_dim), grid.threads() as thread:
        first = b.add(b.mul(block, i64(grid.block_dim)), thread)
        with rows.loop(first, b.mul(grid_dim, i64(grid.block_dim))):
            rows.emit(SerialRow(rows.handler))


def block_per_row(rows: Rows) -> None:
    """Block b takes rows b, b + G, ...; its threads share each row, and combine."""
    with rows.grid.blocks() as (block, grid_dim), rows.loop(block, grid_dim):
        rows.emit(BlockRow(rows.handler, rows.grid))


def warp_per_row(rows: Rows) -> None:
    """Block per row, with the grid's warps as its blocks: warp w of block b takes rows
    b * W + w, then + G * W, ...; its lanes share each row, and combine by shuffles alone."""
    block_per_row(Rows(rows.handler, rows.kernel, rows.grid.warps(), rows.emit_row))


# -- index arithmetic ---------------------------------------------------------------------------


def product(handler: LLVMOps, ranges: tuple[int | Expr, ...]) -> ir.Value:
    """The number of elements of `ranges`, an i64 (computed from the size symbols if need be)."""
    total: ir.Value = i64(1)
    for n in ranges:
        size = n.evaluate(handler.index_env) if isinstance(n, Expr) else n
        size = size.value if isinstance(size, IndexValue) else i64(size)
        total = handler.builder.mul(total, size)
    return total


@contextmanager
def strided(
    handler: LLVMOps, first: ir.Value, stop: ir.Value, step: ir.Value, name: str
) -> Iterator[ir.Value]:
    """for flat in range(first, stop, step) (step > 0): the grid-stride loop; gives flat."""
    builder = handler.builder
    body = builder.append_basic_block(f"{name}.body")
    exit_ = builder.append_basic_block(f"{name}.exit")
    builder.cbranch(builder.icmp_signed("<", first, stop), body, exit_)
    preheader = builder.block
    builder.position_at_end(body)
    flat = builder.phi(I64, name=name)
    flat.add_incoming(first, preheader)
    yield flat
    following = builder.add(flat, step, name=f"{name}.next", flags=["nsw"])
    flat.add_incoming(following, builder.block)
    builder.cbranch(builder.icmp_signed("<", following, stop), body, exit_)
    builder.position_at_end(exit_)


def bind(handler: LLVMOps, prefix: str, ranges: tuple[int | Expr, ...], flat: ir.Value) -> None:
    """Set i0, i1, ... (or r0, r1, ...) in the env from a flat row-major position in `ranges`:
    the last dim is flat % n_last, the one before (flat // n_last) % n_before, ..."""
    builder = handler.builder
    rest = flat
    names = [var.name for var in index_vars(prefix, len(ranges))]
    for name, n in reversed(list(zip(names, ranges, strict=True))):
        size = product(handler, (n,))
        if name == names[0]:
            value = rest  # the first dim takes what is left: no division
        else:
            value = builder.urem(rest, size, name=name)
            rest = builder.udiv(rest, size)
        handler.index_env[name] = IndexValue(builder, value)
