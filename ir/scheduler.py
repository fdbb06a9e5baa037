"""The scheduler: group computed buffers into fused kernels, one loop nest each.

[Note: fusion]
Lowering leaves a list of buffers, each its own loop nest. Running them one by one would read
and write every intermediate through memory, which is what eager mode does and what a compiler
is for avoiding. The scheduler walks the buffers in order and puts a buffer into the current
kernel when it can run *inside the same loop*:

1. the same kind (Pointwise with Pointwise, Reduction with Reduction), the same `ranges`
   and the same `reduction_ranges`, so the loops are literally the same loops; and
2. every load it makes of a buffer computed earlier in the kernel reads exactly the element
   that buffer stores at this iteration (`load(buf0, i0)` where buf0 stores at `i0`): that
   value is in a register right now. A load of any other element of buf0 (`load(buf0, i0 + 1)`,
   or from a transposed view) would need buf0 complete in memory first, so it starts a new
   kernel.

Otherwise the buffer starts a new kernel. To see a buffer's loads we run its body once under a
recording handler (see [Note: ops handlers]): the body reports `(name, index)` for each load.
Which fused buffers still have to be written to memory is memory planning (ir/memory.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ir.indexing import Expr, index_vars
from ir.memory import plan_writes
from ir.nodes import ComputedBuffer, Layout, LoweredProgram, Pointwise
from ir.ops_handler import set_ops_handler
from ir.printer import PrintingHandler
from minitorch.errors import CompileError


@dataclass(frozen=True)
class FusedKernel:
    """Buffers computed together in one loop nest (ir/interpreter.py defines how it runs).

    kernel0: FusedKernel(ranges=(4096,), reads=('arg0_1',), writes=('buf0', 'buf1', 'buf2'))
        buf0: Pointwise(float32, ranges=(4096,))
        def inner_fn(index):
            ...
    """

    name: str  # 'kernel0'
    nodes: tuple[ComputedBuffer, ...]  # run in this order inside one loop nest
    ranges: tuple[int, ...]  # shared iteration space of every node
    reduction_ranges: tuple[int, ...]  # () for a pointwise kernel
    reads: tuple[str, ...]  # buffers loaded from memory (inputs or earlier kernels)
    writes: tuple[str, ...]  # buffers stored to memory (subset of nodes' names)

    def __str__(self) -> str:
        reduction = f", reduction_ranges={self.reduction_ranges}" if self.reduction_ranges else ""
        header = (
            f"{self.name}: FusedKernel(ranges={self.ranges}{reduction}, "
            f"reads={self.reads}, writes={self.writes})"
        )
        body = "\n".join(str(node) for node in self.nodes)
        return header + "\n" + "\n".join(f"    {line}" for line in body.splitlines())


def schedule(program: LoweredProgram, fuse: bool = True) -> list[FusedKernel]:
    """The program's buffers grouped into kernels, in order; fuse=False gives one per buffer."""
    groups: list[list[ComputedBuffer]] = []
    for buffer in program.buffers:
        if fuse and groups and can_fuse(groups[-1], buffer):
            groups[-1].append(buffer)
        else:
            groups.append([buffer])

    reads = [_reads_from_memory(group) for group in groups]
    writes = plan_writes(groups, reads, program.outputs)
    return [
        FusedKernel(
            name=f"kernel{k}",
            nodes=tuple(group),
            ranges=group[0].data.ranges,
            reduction_ranges=_reduction_ranges(group[0]),
            reads=reads[k],
            writes=writes[k],
        )
        for k, group in enumerate(groups)
    ]


def can_fuse(kernel: list[ComputedBuffer], buffer: ComputedBuffer) -> bool:
    """Whether `buffer` can run in the loop nest of `kernel` (rules 1 and 2 of [Note: fusion])."""
    first = kernel[0]
    if type(buffer.data) is not type(first.data):
        return False
    if buffer.data.ranges != first.data.ranges:
        return False
    if _reduction_ranges(buffer) != _reduction_ranges(first):
        return False
    computed_here = {node.name: node for node in kernel}
    return all(
        index == store_index(computed_here[name])
        for name, index in loads(buffer)
        if name in computed_here
    )


def verify(program: LoweredProgram, kernels: Sequence[FusedKernel] | None = None) -> None:
    """Check the invariants later stages rely on; a CompileError names the first one broken.

    Like torch.fx's graph.lint(): every buffer is contiguous over its ranges and loads only
    inputs and buffers computed before it; kernels run every buffer once, in order, obey the
    fusion rules, and store whatever a later kernel or the caller reads.
    """
    known = {b.name for b in program.inputs}
    for buffer in program.buffers:
        data = buffer.data
        if buffer.name in known:
            raise CompileError(f"two buffers are called {buffer.name}")
        if buffer.layout != Layout.contiguous(data.ranges, data.dtype):
            raise CompileError(f"{buffer.name}: layout {buffer.layout} is not contiguous")
        for name, _ in loads(buffer):
            if name not in known:
                raise CompileError(f"{buffer.name} loads {name}, which is not computed before it")
        known.add(buffer.name)
    if not set(program.outputs) <= known:
        raise CompileError(f"outputs {program.outputs} name unknown buffers")
    if kernels is None:
        return

    if [node for k in kernels for node in k.nodes] != list(program.buffers):
        raise CompileError("the kernels must run every buffer exactly once, in program order")
    stored = {b.name for b in program.inputs}
    for kernel in kernels:
        for k, node in enumerate(kernel.nodes):
            if k > 0 and not can_fuse(list(kernel.nodes[:k]), node):
                raise CompileError(f"{node.name} cannot run in the loop nest of {kernel.name}")
        missing = set(kernel.reads) - stored
        if missing:
            raise CompileError(f"{kernel.name} reads {sorted(missing)}, which are never stored")
        stored |= set(kernel.writes)
    if not set(program.outputs) <= stored:
        raise CompileError(f"outputs {sorted(set(program.outputs) - stored)} are never stored")


def store_index(buffer: ComputedBuffer) -> Expr:
    """Where `buffer` stores the element of iteration (i0, i1, ...): its layout over index_vars."""
    return buffer.layout.indexer()(index_vars("i", len(buffer.data.ranges)))


def loads(buffer: ComputedBuffer) -> list[tuple[str, Expr]]:
    """Every (buffer name, flat index) that `buffer`'s body loads, over index_vars('i'/'r')."""
    recorder = _LoadRecorder()
    index = index_vars("i", len(buffer.data.ranges))
    with set_ops_handler(recorder):
        if isinstance(buffer.data, Pointwise):
            buffer.data.inner_fn(index)
        else:
            buffer.data.inner_fn(index, index_vars("r", len(buffer.data.reduction_ranges)))
    return recorder.loads


class _LoadRecorder(PrintingHandler):
    """Runs a body for its loads: printing gives every op a value, and load also takes notes."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[tuple[str, Expr]] = []

    def load(self, name: str, index: Expr) -> str:
        self.loads.append((name, index))
        return super().load(name, index)


def _reads_from_memory(group: list[ComputedBuffer]) -> tuple[str, ...]:
    """The buffers `group` loads that it does not compute itself, once each, in load order."""
    computed_here = {node.name for node in group}
    reads: dict[str, None] = {}  # an ordered set
    for node in group:
        for name, _ in loads(node):
            if name not in computed_here:
                reads.setdefault(name, None)
    return tuple(reads)


def _reduction_ranges(buffer: ComputedBuffer) -> tuple[int, ...]:
    return () if isinstance(buffer.data, Pointwise) else buffer.data.reduction_ranges
