"""Blocks, threads and the block-wide combine: on a GPU, and emulated on the CPU.

kernel.py writes a kernel once, against `Grid`; `DeviceGrid` makes it a GPU kernel and
`EmulatedGrid` a CPU function that runs every (block, thread) of the same launch, in loops
([Note: threads, blocks and phases] in codegen/cuda/__init__.py).

    with grid.blocks() as (block, grid_dim):     # GPU: %ctaid.x   CPU: for block in range(G)
        with grid.threads() as thread:          # GPU: %tid.x     CPU: for thread in range(B)
            acc = grid.private(F32, "acc")      # GPU: a register CPU: acc[B], one per thread
            ...                                 # a phase: code between two combines
        total, = grid.combine([acc], add)       # every thread's acc, summed, in every thread
    warps = grid.warps()                        # the same, with each warp a block of its own

`DeviceWarps` and `EmulatedWarps` are `warps()`: a warp per row ([Note: a warp per row] in
launch.py) is block per row's code run on them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from llvmlite import ir

from codegen.llvm.loops import I64, entry_alloca, for_range, i64
from codegen.llvm.ops import I8, I32
from minitorch.errors import CompileError

WARP = 32  # threads that run in lockstep and exchange registers through shuffles
MAX_BLOCK = 1024  # the most threads a block may have: at most 32 warps

# op(builder, a, b) -> a combined with b, each a list of values (one per component: argmax
# combines (value, position) pairs). Must be commutative: the butterfly applies it both ways.
Combine = Callable[[ir.IRBuilder, list[ir.Value], list[ir.Value]], list[ir.Value]]


class Private:
    """A value each thread of a block keeps for itself (an accumulator); `address()` is the
    current thread's copy. `owner` is the Grid that made it (or kernel.py's SerialRow)."""

    def __init__(self, owner: Grid, slot: ir.Value, type_: ir.Type) -> None:
        self.owner = owner
        self.slot = slot  # a T on the GPU, a [B x T] array in emulation
        self.type = type_

    def address(self) -> ir.Value:
        return self.owner.private_address(self)


class Grid(ABC):
    """Where a kernel's block and thread indices come from, and how a block combines values."""

    def __init__(self, builder: ir.IRBuilder, block_dim: int) -> None:
        if block_dim % WARP or not 0 < block_dim <= MAX_BLOCK:
            raise CompileError(
                f"a block of {block_dim} threads: expected whole warps, at most {MAX_BLOCK}"
            )
        self.builder = builder
        self.block_dim = block_dim  # threads per block, fixed when the kernel is generated
        self.thread: ir.Value | None = None  # the current thread (an i64), inside a phase

    @abstractmethod
    def blocks(self) -> Iterator[tuple[ir.Value, ir.Value]]:
        """A context: code in it runs once per block; gives (block index, blocks in the grid)."""

    @abstractmethod
    def threads(self) -> Iterator[ir.Value]:
        """A context: a phase, code in it runs once per thread of the block; gives the thread."""

    @abstractmethod
    def private(self, type_: ir.Type, name: str) -> Private:
        """A value of `type_` per thread."""

    @abstractmethod
    def private_address(self, private: Private) -> ir.Value:
        """The current thread's copy of `private`."""

    @abstractmethod
    def combine(self, parts: Sequence[Private], op: Combine) -> list[ir.Value]:
        """Every thread's values of `parts` (the components of one value) combined by `op`, the
        same in every thread; after a phase, outside it. The order of the operations is fixed:
        the butterfly over each warp, then the warps' results in order (`_butterfly_stages`)."""

    @abstractmethod
    def one_thread(self) -> Iterator[None]:
        """A context: code in it runs in one thread of the block (a store of a row's value)."""

    @abstractmethod
    def warps(self) -> Grid:
        """This grid's warps as blocks of their own, of WARP threads (their lanes): warp w of
        block b is block b * W + w of a grid W times as large, and a combine is the warp's
        butterfly alone, with no shared memory and no barrier ([Note: a warp per row] in
        launch.py)."""


def _butterfly_stages() -> list[int]:
    """The lane distances of a warp's butterfly: 16, 8, 4, 2, 1. After stage k every lane holds
    op over its group of 2^(k+1) lanes; after the last, over the warp."""
    return [WARP >> k for k in range(1, WARP.bit_length())]


# -- the GPU ------------------------------------------------------------------------------------


class DeviceGrid(Grid):
    """The indices are the GPU's special registers; a combine is warp shuffles, then shared
    memory between the warps, with a barrier on each side."""

    def __init__(self, builder: ir.IRBuilder, block_dim: int) -> None:
        super().__init__(builder, block_dim)
        self._combines = 0  # each combine has shared arrays of its own

    def _special(self, name: str) -> ir.Value:
        """An index register (`tid.x`, `ctaid.x`, `nctaid.x`) as an i64."""
        module = self.builder.module
        full_name = f"llvm.nvvm.read.ptx.sreg.{name}"
        fn = module.globals.get(full_name) or ir.Function(
            module, ir.FunctionType(I32, []), full_name
        )
        return self.builder.zext(self.builder.call(fn, []), I64, name=name.replace(".", "_"))

    @contextmanager
    def blocks(self) -> Iterator[tuple[ir.Value, ir.Value]]:
        yield self._special("ctaid.x"), self._special("nctaid.x")

    @contextmanager
    def threads(self) -> Iterator[ir.Value]:
        self.thread = self._special("tid.x")
        yield self.thread
        self.thread = None

    def private(self, type_: ir.Type, name: str) -> Private:
        return Private(self, entry_alloca(self.builder, type_, name), type_)

    def private_address(self, private: Private) -> ir.Value:
        return private.slot

    def combine(self, parts: Sequence[Private], op: Combine) -> list[ir.Value]:
        b = self.builder
        values = self._butterfly([b.load(part.slot, typ=part.type) for part in parts], op)
        thread = self._special("tid.x")
        warps = self.block_dim // WARP
        shared = [self._shared(part.type, warps) for part in parts]
        warp = b.udiv(thread, i64(WARP))
        with b.if_then(b.icmp_unsigned("==", b.urem(thread, i64(WARP)), i64(0))):
            for array, value in zip(shared, values, strict=True):
                b.store(value, self._element(array, warp))
        self._barrier()  # every warp's value is in shared memory
        total = [
            b.load(self._element(array, i64(0)), typ=part.type)
            for array, part in zip(shared, parts, strict=True)
        ]
        for w in range(1, warps):
            total = op(
                b,
                total,
                [
                    b.load(self._element(array, i64(w)), typ=part.type)
                    for array, part in zip(shared, parts, strict=True)
                ],
            )
        self._barrier()  # every thread has read them: this combine, next row, may write
        return total

    @contextmanager
    def one_thread(self) -> Iterator[None]:
        thread = self._special("tid.x")
        with self.builder.if_then(self.builder.icmp_unsigned("==", thread, i64(0))):
            yield

    def warps(self) -> DeviceWarps:
        return DeviceWarps(self.builder, self.block_dim // WARP)

    def _butterfly(self, values: list[ir.Value], op: Combine) -> list[ir.Value]:
        """`values` combined over the warp: every lane ends with the warp's total."""
        for distance in _butterfly_stages():
            values = op(self.builder, values, [self._shuffle_xor(v, distance) for v in values])
        return values

    def _shared(self, type_: ir.Type, warps: int) -> ir.GlobalVariable:
        """A [warps x type] array in shared memory (address space 3), one per block."""
        module = self.builder.module
        array_type = ir.ArrayType(type_, warps)
        name = f"{self.builder.function.name}.shared{self._combines}"
        self._combines += 1
        array = ir.GlobalVariable(module, array_type, name, addrspace=3)
        array.linkage = "internal"
        array.initializer = ir.Constant(array_type, ir.Undefined)  # shared memory starts undefined
        return array

    def _element(self, array: ir.GlobalVariable, k: ir.Value) -> ir.Value:
        """&array[k], through a generic pointer (NVPTX infers it is shared memory again)."""
        generic = self.builder.addrspacecast(array, ir.PointerType())
        return self.builder.gep(generic, [k], inbounds=True, source_etype=array.value_type.element)

    def _barrier(self) -> None:
        """bar.sync 0: no thread of the block goes on until all have come here."""
        module = self.builder.module
        name = "llvm.nvvm.barrier.cta.sync.aligned.all"
        fn = module.globals.get(name) or ir.Function(
            module, ir.FunctionType(ir.VoidType(), [I32]), name
        )
        self.builder.call(fn, [ir.Constant(I32, 0)])

    def _shuffle_xor(self, value: ir.Value, distance: int) -> ir.Value:
        """The `value` of lane (this lane ^ distance): shfl.sync.bfly, 32 bits at a time."""
        b = self.builder
        type_ = value.type
        if isinstance(type_, ir.FloatType):
            return b.bitcast(self._shuffle_xor(b.bitcast(value, I32), distance), type_)
        if isinstance(type_, ir.DoubleType):
            return b.bitcast(self._shuffle_xor(b.bitcast(value, I64), distance), type_)
        if type_ == I64:  # two halves
            low = self._shuffle_i32(b.trunc(value, I32), distance)
            high = self._shuffle_i32(b.trunc(b.lshr(value, i64(32)), I32), distance)
            return b.or_(b.zext(low, I64), b.shl(b.zext(high, I64), i64(32)))
        if type_ == I8:  # a bool, widened
            return b.trunc(self._shuffle_i32(b.zext(value, I32), distance), I8)
        return self._shuffle_i32(value, distance)

    def _shuffle_i32(self, value: ir.Value, distance: int) -> ir.Value:
        module = self.builder.module
        name = "llvm.nvvm.shfl.sync.bfly.i32"
        fn = module.globals.get(name) or ir.Function(module, ir.FunctionType(I32, [I32] * 4), name)
        every_lane, clamp = ir.Constant(I32, -1), ir.Constant(I32, WARP - 1)
        return self.builder.call(fn, [every_lane, value, ir.Constant(I32, distance), clamp])


class DeviceWarps(DeviceGrid):
    """A DeviceGrid's warps as blocks: the block index is %ctaid.x * W + %tid.x / 32, the
    thread is the lane, %tid.x % 32. Its combine is the shuffles: after the butterfly every
    lane holds the warp's total, so it needs no shared memory, and no barrier (which would be
    wrong here: the block's warps run their own rows, and may take different numbers)."""

    def __init__(self, builder: ir.IRBuilder, warps_per_block: int) -> None:
        super().__init__(builder, WARP)
        self.warps_per_block = warps_per_block

    @contextmanager
    def blocks(self) -> Iterator[tuple[ir.Value, ir.Value]]:
        b, per_block = self.builder, i64(self.warps_per_block)
        warp = b.udiv(self._special("tid.x"), i64(WARP), name="warp")
        first = b.add(b.mul(self._special("ctaid.x"), per_block), warp, name="warp_row")
        yield first, b.mul(self._special("nctaid.x"), per_block, name="warps")

    @contextmanager
    def threads(self) -> Iterator[ir.Value]:
        self.thread = self._lane()
        yield self.thread
        self.thread = None

    def combine(self, parts: Sequence[Private], op: Combine) -> list[ir.Value]:
        return self._butterfly([self.builder.load(p.slot, typ=p.type) for p in parts], op)

    @contextmanager
    def one_thread(self) -> Iterator[None]:
        with self.builder.if_then(self.builder.icmp_unsigned("==", self._lane(), i64(0))):
            yield

    def warps(self) -> DeviceWarps:
        return self

    def _lane(self) -> ir.Value:
        return self.builder.urem(self._special("tid.x"), i64(WARP), name="lane")


# -- the emulation ------------------------------------------------------------------------------


class EmulatedGrid(Grid):
    """The indices are loop counters: a loop over the grid's blocks, and in it one loop over
    the block's threads per phase. A thread's private value is its element of a [B] array,
    and a combine runs the GPU's butterfly and fold over those arrays, in the same order."""

    def __init__(self, builder: ir.IRBuilder, block_dim: int, grid_dim: ir.Value) -> None:
        super().__init__(builder, block_dim)
        self.grid_dim = grid_dim  # an i64 argument: the launch's number of blocks

    @contextmanager
    def blocks(self) -> Iterator[tuple[ir.Value, ir.Value]]:
        with for_range(self.builder, 0, self.grid_dim, name="block") as block:
            yield block, self.grid_dim

    @contextmanager
    def threads(self) -> Iterator[ir.Value]:
        with for_range(self.builder, 0, self.block_dim, name="thread") as thread:
            self.thread = thread
            yield thread
        self.thread = None

    def private(self, type_: ir.Type, name: str) -> Private:
        array = entry_alloca(self.builder, ir.ArrayType(type_, self.block_dim), name)
        return Private(self, array, type_)

    def private_address(self, private: Private) -> ir.Value:
        return self._lane(private.slot, self.thread)

    def combine(self, parts: Sequence[Private], op: Combine) -> list[ir.Value]:
        b = self.builder
        current = [part.slot for part in parts]
        spare = [entry_alloca(b, part.slot.allocated_type, "shuffled") for part in parts]
        for distance in _butterfly_stages():  # all lanes at once: read `current`, write `spare`
            with for_range(b, 0, self.block_dim, name="lane") as lane:
                partner = b.xor(lane, i64(distance))
                mine = [b.load(self._lane(a, lane), typ=p.type) for a, p in zip(current, parts)]
                theirs = [
                    b.load(self._lane(a, partner), typ=p.type) for a, p in zip(current, parts)
                ]
                for array, value in zip(spare, op(b, mine, theirs), strict=True):
                    b.store(value, self._lane(array, lane))
            current, spare = spare, current
        total = [b.load(self._lane(a, i64(0)), typ=p.type) for a, p in zip(current, parts)]
        for w in range(1, self.block_dim // WARP):  # lane 0 of each warp, in order
            total = op(
                b,
                total,
                [b.load(self._lane(a, i64(w * WARP)), typ=p.type) for a, p in zip(current, parts)],
            )
        return total

    @contextmanager
    def one_thread(self) -> Iterator[None]:
        yield  # code outside a phase runs once per block here already

    def warps(self) -> EmulatedWarps:
        return EmulatedWarps(self.builder, self.block_dim // WARP, self.grid_dim)

    def _lane(self, array: ir.Value, lane: ir.Value) -> ir.Value:
        return self.builder.gep(array, [i64(0), lane], inbounds=True)


class EmulatedWarps(EmulatedGrid):
    """An EmulatedGrid's warps as blocks: a loop over the blocks, in it a loop over their
    warps (block b, warp w is block b * W + w), each phase a loop over WARP lanes. A combine
    is the butterfly over those lanes (EmulatedGrid's, whose fold over warps has none to do).
    Running the warps one after another is exact: on the GPU they share nothing."""

    def __init__(self, builder: ir.IRBuilder, warps_per_block: int, grid_dim: ir.Value) -> None:
        super().__init__(builder, WARP, grid_dim)
        self.warps_per_block = warps_per_block

    @contextmanager
    def blocks(self) -> Iterator[tuple[ir.Value, ir.Value]]:
        b, per_block = self.builder, i64(self.warps_per_block)
        with (
            for_range(b, 0, self.grid_dim, name="block") as block,
            for_range(b, 0, self.warps_per_block, name="warp") as warp,
        ):
            yield b.add(b.mul(block, per_block), warp), b.mul(self.grid_dim, per_block)

    def warps(self) -> EmulatedWarps:
        return self
