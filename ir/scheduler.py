"""The scheduler: group computed buffers into fused kernels, one outer loop nest each.

[Note: fusion]
Lowering leaves a list of buffers, each its own loop nest. Running them one by one would read
and write every intermediate through memory, which is what eager mode does and what a compiler
is for avoiding. The scheduler walks the buffers in order and puts each into the current
kernel when it can run inside the kernel's outer loop nest, over the kernel's `ranges` (the
*rows*). Inside it, a kernel runs one or more `Loop`s over the row, in order: a loop over the
kernel's `reduction_ranges` (the row's elements), or a step run once per row (`ranges=()`,
which is all a kernel without reductions has). Row softmax is one kernel of three loops,

    for i0 in rows:
        loop0: for r0 in row: m = max(m, x[i0, r0])              # a Reduction
        loop1: for r0 in row: s = s + exp(x[i0, r0] - m)         # a Reduction that reads m
        loop2: for r0 in row: out[i0, r0] = exp(x[i0, r0] - m) / s    # a Pointwise

and while a row is in flight it stays in the cache: memory sees it once. A buffer joins the
last loop, or failing that a new loop after it, when

1. its iteration space fits: a Reduction has the kernel's ranges and reduction_ranges; a
   Pointwise has the kernel's ranges (a *row node*, once per row), or the kernel's ranges +
   reduction_ranges (an *element node*, in a loop over the row). Dims of size 1 do not count:
   a (64, 32) pointwise runs in a kernel over rows (64, 1) of 32 at index (i0, r0), which
   `node_index` gives; and
2. every load it makes of a buffer computed earlier in the kernel reads exactly the element
   that buffer stores at this iteration (`load(buf0, i0)` where buf0 stores at `i0`), and the
   value is there: a reduction's only after its loop has ended (so a reader of it starts a
   new loop), a row node's from its step on, an element node's within its own loop. An
   element from an *earlier* loop was dropped with that loop's iteration: its loop stores it
   and the later loop loads it back, from a row that is still in the cache. A load of any
   other element (`load(buf0, i0 + 1)`, or from a transposed view) would need buf0 complete
   in memory first, so it starts a new kernel.

Three exceptions keep the threads busy, memory read in order, and the code simple. An argmax
or argmin runs in a loop of its own (LLVM emits it as two loops, [Note: arg reductions in
LLVM]). A kernel with a single row (a reduction to one value) takes no element nodes: they
would run on one thread, where a kernel of their own splits across the pool. And a kernel
whose reductions read memory across the rows, not along them (the column sums of a row-major
matrix: `walks_across_outputs`), takes no element nodes either: a backend reads those row by
row for a whole tile of outputs at once ([Note: reductions across outputs] in
codegen/llvm/kernel.py), which an element, one row at a time, cannot join.

To see a buffer's loads we run its body once under a recording handler (see [Note: ops
handlers]): the body reports `(name, index)` for each load. Which fused buffers still have to
be written to memory is memory planning (ir/memory.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ir.indexing import Const, Expr, index_vars
from ir.memory import plan_writes
from ir.nodes import ComputedBuffer, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import set_ops_handler
from ir.policy import Capabilities, current_policy
from ir.printer import PrintingHandler, format_inner_fn
from minitorch import config
from minitorch.errors import CompileError

if TYPE_CHECKING:
    from tracer.fx.provenance import Location


@dataclass(frozen=True)
class Loop:
    """One pass of a kernel over its row: every node, in order, for each rindex in ranges."""

    ranges: tuple[int, ...]  # the kernel's reduction_ranges, or () to run once per row
    nodes: tuple[ComputedBuffer, ...]  # in program order


@dataclass(frozen=True)
class FusedKernel:
    """Buffers computed together in one outer loop nest (ir/interpreter.py defines how it runs).

    kernel0: FusedKernel(ranges=(4096,), reads=('arg0_1',), writes=('buf0', 'buf1', 'buf2'))
        buf0: Pointwise(float32, ranges=(4096,))
        def inner_fn(index):
            ...

    A kernel of several loops prints each under its header: `loop1: for r0 in range(32):`.
    """

    name: str  # 'kernel0'
    loops: tuple[Loop, ...]  # run in order, inside the loop nest over ranges
    ranges: tuple[int, ...]  # the outer loops (the rows), shared by every loop
    reduction_ranges: tuple[int, ...]  # the inner loops over a row; () for a pointwise kernel
    reads: tuple[str, ...]  # buffers loaded from memory (inputs or earlier kernels)
    writes: tuple[str, ...]  # buffers stored to memory (subset of nodes' names)

    @property
    def nodes(self) -> tuple[ComputedBuffer, ...]:
        """Every node, loop after loop: program order."""
        return tuple(node for loop in self.loops for node in loop.nodes)

    @property
    def origins(self) -> tuple[str, ...]:
        """The fx nodes its buffers compute ([Note: provenance] in tracer/fx/provenance.py)."""
        return tuple(dict.fromkeys(name for node in self.nodes for name in node.origins))

    @property
    def locations(self) -> tuple[Location, ...]:
        """The source lines of its buffers, each once, in order."""
        return tuple(dict.fromkeys(loc for node in self.nodes for loc in node.locations))

    def __str__(self) -> str:
        reduction = f", reduction_ranges={self.reduction_ranges}" if self.reduction_ranges else ""
        header = (
            f"{self.name}: FusedKernel(ranges={self.ranges}{reduction}, "
            f"reads={self.reads}, writes={self.writes})"
        )
        lines = []
        for k, loop in enumerate(self.loops):
            indent = ""
            if len(self.loops) > 1:
                lines.append(_loop_header(k, loop))
                indent = "    "
            for node in loop.nodes:
                lines += [indent + line for line in _format_node(self, loop, node).splitlines()]
        return header + "\n" + "\n".join(f"    {line}" for line in lines)


def _loop_header(k: int, loop: Loop) -> str:
    """`loop1: for r0 in range(32):`, or `loop1: once per row`."""
    if not loop.ranges:
        return f"loop{k}: once per row"
    rindex = index_vars("r", len(loop.ranges))
    if len(rindex) == 1:
        return f"loop{k}: for r0 in range({loop.ranges[0]}):"
    return f"loop{k}: for {', '.join(map(str, rindex))} in product{loop.ranges}:"


def _format_node(kernel: FusedKernel, loop: Loop, node: ComputedBuffer) -> str:
    """A node as the kernel runs it: a Pointwise's dims named by the kernel's loop variables."""
    data = node.data
    index = node_index(kernel.ranges, loop.ranges, node)
    if isinstance(data, Reduction) or index == index_vars("i", len(data.ranges)):
        return str(node)
    header = f"{node.name}: Pointwise({data.dtype.name}, ranges={data.ranges})"
    return header + "\n" + format_inner_fn(data.inner_fn, data.ranges, index=index)


def schedule(
    program: LoweredProgram, fuse: bool = True, capabilities: Capabilities | None = None
) -> list[FusedKernel]:
    """The program's buffers grouped into kernels, in order; fuse=False gives one per buffer.
    Of the fusions the rules allow, config.fusion_policy takes those it wants for a target
    of these `capabilities` ([Note: fusion policies] in ir/policy.py).

    With config.check on (MINITORCH_CHECK=1), the result is verified (ir/verify.py)."""
    remembered = _remembered_loads.set({})  # [Note: remembered loads]
    try:
        kernels = _schedule(program, fuse, capabilities or Capabilities())
        if config.check:
            _check(program, kernels)
        return kernels
    finally:
        _remembered_loads.reset(remembered)


def _check(program: LoweredProgram, kernels: list[FusedKernel]) -> None:
    """verify(program, kernels), its error naming the stage and printing the kernels."""
    # NOTE: imported here: the verifier checks kernels by this module's rules (why_not), so
    # ir.verify imports ir.scheduler, and only a process that checks needs it.
    from ir.verify import verify

    try:
        verify(program, kernels)
    except CompileError as error:
        raise CompileError(
            f"after scheduling, the loop IR is broken: {error}\n{program.format(kernels)}"
        ) from None


def _schedule(program: LoweredProgram, fuse: bool, capabilities: Capabilities) -> list[FusedKernel]:
    policy = current_policy()
    kernels: list[FusedKernel] = []
    for buffer in program.buffers:
        fused = can_fuse(kernels[-1], buffer) if fuse and kernels else None
        if fused is not None and not policy(kernels[-1], buffer, fused, capabilities):
            fused = None  # allowed, and not wanted: [Note: fusion policies]
        if fused is not None:
            kernels[-1] = fused
        else:
            kernels.append(_start(f"kernel{len(kernels)}", buffer))

    groups = [kernel.nodes for kernel in kernels]
    reads = [_reads_from_memory(group) for group in groups]
    reloaded = {name for kernel in kernels for name in reloads(kernel)}
    writes = plan_writes(groups, reads, {*program.outputs, *reloaded})
    return [replace(kernel, reads=reads[k], writes=writes[k]) for k, kernel in enumerate(kernels)]


def _start(name: str, buffer: ComputedBuffer) -> FusedKernel:
    """A kernel of one loop holding `buffer` (reads and writes are filled in at the end)."""
    reduction_ranges = _reduction_ranges(buffer)
    loop = Loop(reduction_ranges, (buffer,))
    return FusedKernel(name, (loop,), buffer.data.ranges, reduction_ranges, (), ())


def can_fuse(kernel: FusedKernel, buffer: ComputedBuffer) -> FusedKernel | None:
    """`kernel` with `buffer` in its last loop or a new one ([Note: fusion]); None if neither.

    A Reduction may also turn a pointwise kernel over its rows' elements into the first loop
    of a reduction kernel: `x * 2` then its row sums.
    """
    fused = _place(kernel, buffer)
    data = buffer.data
    if fused is None and not kernel.reduction_ranges and isinstance(data, Reduction):
        regrouped = _regroup(kernel, data.ranges, data.reduction_ranges)
        fused = None if regrouped is None else _place(regrouped, buffer)
    return fused


def _place(kernel: FusedKernel, buffer: ComputedBuffer) -> FusedKernel | None:
    """`kernel` with `buffer` appended to its last loop if it may run there, else to a new loop."""
    loops = kernel.loops
    if loops and why_not(kernel, len(loops) - 1, buffer) is None:
        last = loops[-1]
        return replace(kernel, loops=(*loops[:-1], replace(last, nodes=(*last.nodes, buffer))))
    new_loop = Loop(_loop_ranges(kernel, buffer), ())
    with_new_loop = replace(kernel, loops=(*loops, new_loop))
    if why_not(with_new_loop, len(loops), buffer) is None:
        return replace(kernel, loops=(*loops, replace(new_loop, nodes=(buffer,))))
    return None


def _regroup(
    kernel: FusedKernel, ranges: tuple[int, ...], reduction_ranges: tuple[int, ...]
) -> FusedKernel | None:
    """The nodes of `kernel` placed anew in a kernel over rows `ranges` of `reduction_ranges`."""
    if all(n == 1 for n in ranges):  # one row: see the exceptions in [Note: fusion]
        return None
    regrouped = replace(kernel, loops=(), ranges=ranges, reduction_ranges=reduction_ranges)
    for node in kernel.nodes:
        regrouped = _place(regrouped, node)
        if regrouped is None:
            return None
    return regrouped


def _loop_ranges(kernel: FusedKernel, buffer: ComputedBuffer) -> tuple[int, ...]:
    """The ranges of a new loop for `buffer`: () for a row node, the row's elements otherwise."""
    if isinstance(buffer.data, Pointwise) and _same_dims(buffer.data.ranges, kernel.ranges):
        return ()
    return kernel.reduction_ranges


def why_not(kernel: FusedKernel, position: int, buffer: ComputedBuffer) -> str | None:
    """Why `buffer` cannot run at the end of loop `position` of `kernel` (rules 1 and 2 of
    [Note: fusion]); None if it can."""
    loop = kernel.loops[position]
    fits = _fits(kernel, loop, buffer)
    if fits is not None:
        return fits
    if _is_arg_reduction(buffer) and loop.nodes or any(map(_is_arg_reduction, loop.nodes)):
        return "an argmax or argmin runs in a loop of its own"
    if _columns_with_elements(kernel, loop, buffer):
        return "reductions across the rows take no element nodes"
    # course: begin fusion
    where = {node.name: (k, node) for k, other in enumerate(kernel.loops) for node in other.nodes}
    for name, index in loads(buffer, node_index(kernel.ranges, loop.ranges, buffer)):
        if name not in where:
            continue
        producer_position, producer = where[name]
        stored_at = store_index(producer, _index_in(kernel, producer_position, producer))
        if index != stored_at:
            return f"it loads {name} at {index}, which this kernel computes at {stored_at}"
        if isinstance(producer.data, Reduction) and producer_position >= position:
            return f"{name} is a reduction of the same loop"
    return None
    # course: end fusion


def _fits(kernel: FusedKernel, loop: Loop, buffer: ComputedBuffer) -> str | None:
    """Rule 1 of [Note: fusion]: whether `buffer`'s iteration space is `loop`'s."""
    data = buffer.data
    if loop.ranges not in ((), kernel.reduction_ranges):
        return f"a loop over {loop.ranges} in a kernel over rows of {kernel.reduction_ranges}"
    if isinstance(data, Reduction):
        same = (data.ranges, data.reduction_ranges) == (kernel.ranges, kernel.reduction_ranges)
        in_a_row_loop = loop.ranges == kernel.reduction_ranges  # () when it reduces no dim
        return None if same and in_a_row_loop else "a reduction over other ranges"
    if not loop.ranges:
        return None if _same_dims(data.ranges, kernel.ranges) else "not once per row"
    if all(n == 1 for n in kernel.ranges):
        return "element nodes after a reduction to one value"
    if _same_dims(data.ranges, kernel.ranges + loop.ranges):
        return None
    return "not over the elements of a row"


def _columns_with_elements(kernel: FusedKernel, loop: Loop, buffer: ComputedBuffer) -> bool:
    """Whether `kernel` with `buffer` in `loop` would hold element nodes and reductions that
    walk across outputs (the last exception of [Note: fusion])."""
    with_buffer = replace(kernel, loops=(*kernel.loops, Loop(loop.ranges, (buffer,))))
    elements = any(
        isinstance(node.data, Pointwise)
        for other in with_buffer.loops
        if other.ranges
        for node in other.nodes
    )
    return elements and walks_across_outputs(with_buffer)


def walks_across_outputs(kernel: FusedKernel, sizes: tuple[str, ...] = ()) -> bool:
    """Whether the reductions of `kernel` load memory along the last kept index (i1 of
    `x[r0, i1]`) and never along the last reduced one: a column sum of a row-major matrix.

    `sizes` names the size symbols the indices may mention ([Note: symbolic sizes])."""
    if not kernel.ranges or not kernel.reduction_ranges:
        return False
    last_kept = f"i{len(kernel.ranges) - 1}"
    last_reduced = f"r{len(kernel.reduction_ranges) - 1}"
    computed_here = {node.name for node in kernel.nodes}
    strides = [
        (_stride(index, last_kept, sizes), _stride(index, last_reduced, sizes))
        for node in kernel.nodes
        if isinstance(node.data, Reduction)
        for name, index in loads(node)
        if name not in computed_here
    ]
    along_outputs = any(abs(kept) == 1 for kept, _ in strides)
    along_reduction = any(abs(reduced) == 1 for _, reduced in strides)
    return along_outputs and not along_reduction


# What _stride takes a size symbol to be: sizes are never 1, and a large one keeps `i0 % s0`
# from wrapping around while i0 steps.
_LARGE_SIZE = 1 << 20


def _stride(index: Expr, var: str, sizes: tuple[str, ...] = ()) -> int:
    """How far the flat index moves when `var` goes from 0 to 1, the other loop variables at 0
    and the size symbols (the names in `sizes`) at a large size."""
    at = {v: _LARGE_SIZE if v in sizes else 0 for v in index.free_vars() | {var}}
    before = index.evaluate(at)
    at[var] = 1
    return index.evaluate(at) - before


def _same_dims(a: Sequence[int | Expr], b: Sequence[int | Expr]) -> bool:
    """Whether two iteration spaces are the same but for dims of size 1."""
    return [n for n in a if n != 1] == [n for n in b if n != 1]


def node_index(
    ranges: tuple[int | Expr, ...], loop_ranges: tuple[int | Expr, ...], node: ComputedBuffer
) -> tuple[Expr, ...]:
    """The index at which `node` runs in a loop over `loop_ranges` of a kernel over `ranges`:
    each of its dims named by the kernel's loop variable of the same size, in order.

    A (64, 32) Pointwise in a loop over (32,) of a kernel over rows (64, 1) runs at (i0, r0);
    a reduction, and every node of a pointwise kernel, at its own index (i0, i1, ...).
    """
    own = index_vars("i", len(node.data.ranges))
    if node.data.ranges == ranges:
        return own
    if not _same_dims(node.data.ranges, ranges + loop_ranges):
        raise CompileError(
            f"{node.name} over {node.data.ranges} cannot run over {ranges} + {loop_ranges}"
        )
    kernel_vars = zip(
        index_vars("i", len(ranges)) + index_vars("r", len(loop_ranges)),
        ranges + loop_ranges,
        strict=True,
    )
    named = iter(var for var, n in kernel_vars if n != 1)  # in order, as the sizes match
    return tuple(Const(0) if n == 1 else next(named) for n in node.data.ranges)


def _index_in(kernel: FusedKernel, position: int, node: ComputedBuffer) -> tuple[Expr, ...]:
    return node_index(kernel.ranges, kernel.loops[position].ranges, node)


def reloads(kernel: FusedKernel) -> tuple[str, ...]:
    """The element nodes that a later loop of `kernel` loads back from memory ([Note: fusion])."""
    element_nodes = {
        node.name: k
        for k, loop in enumerate(kernel.loops)
        if loop.ranges
        for node in loop.nodes
        if isinstance(node.data, Pointwise)
    }
    found: dict[str, None] = {}  # an ordered set
    for k, loop in enumerate(kernel.loops):
        for node in loop.nodes:
            for name, _ in loads(node):
                if element_nodes.get(name, k) < k:
                    found.setdefault(name, None)
    return tuple(found)


def __getattr__(name: str):
    """`from ir.scheduler import verify` still works: the verifier moved to ir/verify.py."""
    if name == "verify":
        from ir.verify import verify

        return verify
    raise AttributeError(f"module 'ir.scheduler' has no attribute {name!r}")


def store_index(buffer: ComputedBuffer, index: Sequence[Expr] | None = None) -> Expr:
    """Where `buffer` stores the element of iteration `index` (by default its own i0, i1, ...):
    its layout's offset there."""
    if index is None:
        index = index_vars("i", len(buffer.data.ranges))
    return buffer.layout.indexer()(index)


def loads(buffer: ComputedBuffer, index: Sequence[Expr] | None = None) -> list[tuple[str, Expr]]:
    """Every (buffer name, flat index) that `buffer`'s body loads at `index` (by default its own
    i0, i1, ...), and r0, r1, ... for a reduction's rindex."""
    remembered = _remembered_loads.get()
    key = (id(buffer), None if index is None else tuple(index))
    if remembered is not None and key in remembered:
        return list(remembered[key])
    recorder = _LoadRecorder()
    if index is None:
        index = index_vars("i", len(buffer.data.ranges))
    with set_ops_handler(recorder):
        if isinstance(buffer.data, Pointwise):
            buffer.data.inner_fn(tuple(index))
        else:
            buffer.data.inner_fn(tuple(index), index_vars("r", len(buffer.data.reduction_ranges)))
    if remembered is not None:
        remembered[key] = tuple(recorder.loads)
    return recorder.loads


# [Note: remembered loads]
# Scheduling asks the same questions of a buffer many times (may it join this loop? what does
# this kernel read from memory? which loads come back from an earlier loop?), and each answer
# runs the body under a recorder. While `schedule` runs, the answers are remembered, by the
# buffer's identity and the index asked: the program does not change during scheduling and
# holds every buffer alive, and a body's loads depend on nothing else.
_remembered_loads: ContextVar[dict[tuple, tuple] | None] = ContextVar(
    "remembered_loads", default=None
)


class _LoadRecorder(PrintingHandler):
    """Runs a body for its loads: printing gives every op a value, and load also takes notes."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[tuple[str, Expr]] = []

    def load(self, name: str, index: Expr) -> str:
        self.loads.append((name, index))
        return super().load(name, index)


def _reads_from_memory(group: Sequence[ComputedBuffer]) -> tuple[str, ...]:
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


def _is_arg_reduction(buffer: ComputedBuffer) -> bool:
    return isinstance(buffer.data, Reduction) and buffer.data.reduction_type in ("argmax", "argmin")
