"""One FusedKernel -> one LLVM function: the loop nest, its loads and stores, and the ops inside.

[Note: the LLVM kernel]
A kernel becomes two functions (three with a sin or cos in it while config.exact_trig is on;
off, sin and cos are libm's, with no flag and no second body: [Note: plain trig] in
mathlib.py). The entry point has the ABI every caller uses: `buffers` is an array of data
pointers in the order `kernel.reads + kernel.writes`, then one to an int64[3] where an index
out of its dim is reported (see LLVMOps.indirect_indexing), and the outermost loop runs over
[start, end) so that a thread pool can split it (a kernel with no ranges runs its body once,
for [0, 1)). For sin(x)**2 + cos(x)**2 with exact_trig on (see `source` of the compiled
kernel):

    define void @"kernel0"(ptr %"buffers", i64 %"start", i64 %"end")
    {
    entry:
      %"&buffers[0]" = getelementptr inbounds ptr, ptr %"buffers", i64 0
      %"x" = load ptr, ptr %"&buffers[0]"
      ...
      %"huge_seen" = alloca i1
      call void @"kernel0.body"(ptr %"x", ptr %"buf2", i64 %"start", i64 %"end", ...)
      %".6" = load i1, i1* %"huge_seen"
      br i1 %".6", label %"entry.if", label %"entry.endif", !prof !0
    entry.if:                           ; an argument of sin or cos was huge: run again, exactly
      call void @"kernel0.body.exact"(ptr %"x", ptr %"buf2", i64 %"start", i64 %"end", ...)
      ...
    }

    define internal void @"kernel0.body"(ptr noalias %"x", ptr noalias %"buf2", ...) alwaysinline
    {
    ...
    i0.body:
      %"i0" = phi  i64 [%"start", %"entry"], [%"i0.next", %"i0.body"]
      %"&x[i0]" = getelementptr inbounds float, ptr %"x", i64 %"i0"
      %"x[i0]" = load float, ptr %"&x[i0]"
      ...                                         ; huge_seen |= |x[i0]| > 2^30
      %"sin" = call float @"minitorch.sin.fast.float"(float %"x[i0]")
      %"cos" = call float @"minitorch.cos.fast.float"(float %"x[i0]")
      %".7" = fmul float %"sin", %"sin"
      %".8" = fmul float %"cos", %"cos"
      %"add" = fadd float %".7", %".8"
      %"&buf2[i0]" = getelementptr inbounds float, ptr %"buf2", i64 %"i0"
      store float %"add", ptr %"&buf2[i0]"
      ...

The body is `alwaysinline`, so the split costs nothing at run time, and it exists for one
reason: `noalias` on its parameters promises LLVM that writing one buffer never changes
another (a kernel's output never shares memory with its inputs). Without that promise the
vectorizer must check at run time, and for an index like `(i0 // 3) % 5` it cannot, so the
loop stays scalar.

Each node's `inner_fn` runs once under `LLVMOps`, whose values are LLVM registers: calling the
body *emits* it. Index expressions (ir/indexing.py) are evaluated with `IndexValue`s, i64
registers that do Python integer arithmetic. buf0 (sin) and buf1 (cos) are not in `writes`, so
they are never stored: buf2's loads of them get the registers `%"sin"` and `%"cos"`. Each
node's code starts with a comment line naming the fx nodes it computes and their source lines,
`; buf2: from pow_1, pow_2, add (sincos.py:13)` ([Note: provenance] in tracer/fx/provenance.py):
a reader (or a report) finds a line of the program in the kernel by it. A
reduction keeps its accumulator in a stack slot that the optimizer turns into a register (see
loops.entry_alloca) and adds with the `reassoc` flag, which lets the vectorizer keep 8 or 16
partial sums.

A kernel of several loops over each row ([Note: fusion] in ir/scheduler.py) emits them one
after another inside the outer loop over rows. Each is one inner loop over the row, whose body
computes the loop's element nodes (and stores those in `writes`) and adds a term to each of its
reductions' accumulators; once it ends, a reduction's value is loaded from its slot and stays
a register for the loops after it. Row softmax's three loops each vectorize: llvm.maximum
(which propagates NaN as the IR's max must) becomes `<16 x float>` maximums on this LLVM, and
the sum of exponentials keeps vector partial sums.

[Note: unrolling a row's loops]
Left to itself, LLVM unrolls a loop over a short row of known length completely: layernorm's
mean loop over 1024 floats became 64 vector loads and adds in a row, no loop at all. The
variance loop, unrolled too, then reads the same 64 vectors, and LLVM keeps the first loop's
loads for it instead of loading again; 64 vectors do not fit in 32 registers, so it wrote the
whole row to the stack and read it back (its assembly had a 2.5 KB stack frame). That cost
little on rows already in the cache, but streaming 16 MB, the extra stores filled the queue
that the output's stores wait in: 1.6x slower than a loop. So in a kernel of several loops a
row, each row loop asks to be unrolled only `ROW_LOOP_UNROLL` times (`unroll_by`): each loop
loads its row from L1 again, and layernorm 4096x1024's kernel ran 1.8x faster on one thread
and 1.35-1.45x on two, side by side (the pointwise loop, never unrolled whole, is unchanged).

[Note: small kernels compile for size]
Most of a kernel's compile time goes to code the vectorizer and unroller make: a pointwise loop
at O3 becomes a 16-wide vector loop interleaved four times, with a vector epilogue and an
unrolled scalar remainder. That pays on ten million elements; on the 65536 of a training step's
256x256 activations, the kernel runs a few microseconds either way. So a pointwise kernel of at
most `SMALL_WORK` elements (static sizes) gets LLVM's `optsize` attribute: still vectorized,
but neither interleaved nor unrolled. In the MLP's training step that cut each such kernel's
compile time by a quarter to a half, and its run time changed by under 5% (a reduction's would
lose its interleaved partial sums, so reductions keep O3's loops).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from contextlib import contextmanager

from llvmlite import ir

from codegen.llvm.arg_reduction import ARG_REDUCTIONS, emit_arg_reduction
from codegen.llvm.loops import I64, IndexValue, entry_alloca, for_nest, for_range, i64, unroll_by
from codegen.llvm.ops import I1, Lanes, LLVMOps, ir_type
from codegen.llvm.reductions import reduction
from ir.indexing import Expr, index_vars, is_size_symbol
from ir.nodes import ComputedBuffer, Pointwise, Reduction
from ir.ops_handler import set_ops_handler
from ir.scheduler import FusedKernel, Loop, node_index, store_index, walks_across_outputs
from minitorch import config
from minitorch.dtype import DType
from minitorch.errors import CompileError

PTR = ir.PointerType()
SMALL_WORK = 1 << 17  # elements: see [Note: small kernels compile for size]
ROW_LOOP_UNROLL = 4  # see [Note: unrolling a row's loops]


def generate_kernel(
    kernel: FusedKernel, dtypes: dict[str, DType], sizes: tuple[str, ...] = ()
) -> ir.Module:
    """The LLVM module for `kernel`: @<name>(buffers, start, end, *sizes) and the body it calls.

    `sizes` names the size symbols (s0, s1, ...) the kernel's ranges and indices may mention;
    each becomes one more i64 argument ([Note: symbolic sizes] in ir/symbolic.py).
    """
    not_sizes = [name for name in sizes if not is_size_symbol(name)]
    if not_sizes:
        raise CompileError(f"{kernel.name}: {not_sizes} are not size symbols (s0, s1, ...)")
    module = ir.Module(name=kernel.name)
    # Declared before the body so that it prints first; the math functions print last.
    signature = ir.FunctionType(ir.VoidType(), [PTR, I64, I64] + [I64] * len(sizes))
    entry = ir.Function(module, signature, kernel.name)
    try:
        exact = None
        if not config.exact_trig:  # sin and cos are libm's: one body ([Note: plain trig])
            body, _ = _define_body(module, kernel, dtypes, sizes, note_huge=False)
        else:
            body, uses_trig = _define_body(module, kernel, dtypes, sizes, note_huge=True)
            if uses_trig:  # see [Note: sin and cos over the whole float range] in trig.py
                exact, _ = _define_body(module, kernel, dtypes, sizes, note_huge=False)
    except NotImplementedError as error:  # an op LLVMOps does not have yet
        raise CompileError(f"cannot compile {kernel.name} for the CPU: {error}") from error
    _define_entry(entry, kernel, body, exact, sizes)
    if _is_small(kernel):  # see [Note: small kernels compile for size]
        for fn in (entry, body, exact):
            if fn is not None:
                fn.attributes.add("optsize")
    return module


def _is_small(kernel: FusedKernel) -> bool:
    """A pointwise kernel over at most SMALL_WORK elements, its sizes known."""
    ranges = kernel.ranges
    return (
        not kernel.reduction_ranges
        and all(isinstance(n, int) for n in ranges)
        and math.prod(ranges) <= SMALL_WORK
    )


def _define_entry(
    fn: ir.Function,
    kernel: FusedKernel,
    body: ir.Function,
    exact: ir.Function | None,
    sizes: tuple[str, ...],
) -> None:
    """@kernel(ptr buffers, i64 start, i64 end, i64 s0, ...): unpack the pointers, call the body;
    if it met a sin or cos argument too big for the fast path, run the `exact` body over the
    same range again (it only reads the reads and writes the writes, so it may)."""
    buffers, start, end, *symbols = fn.args
    buffers.name, start.name, end.name = "buffers", "start", "end"
    for symbol, name in zip(symbols, sizes, strict=True):
        symbol.name = name
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    pointers = []
    for k, name in enumerate(kernel.reads + kernel.writes):
        slot = builder.gep(
            buffers, [i64(k)], inbounds=True, name=f"&buffers[{k}]", source_etype=PTR
        )
        pointers.append(builder.load(slot, name=name, typ=PTR))
    # One more pointer after the buffers: where an out-of-bounds index is reported
    # ([Note: indirect loads] in ir/ops_handler.py; backend.py raises it).
    slot = builder.gep(buffers, [i64(len(pointers))], inbounds=True, source_etype=PTR)
    index_error = builder.load(slot, name="index_error", typ=PTR)
    arguments = [*pointers, start, end, *symbols, index_error]
    if not config.exact_trig:  # no huge_seen flag: see [Note: plain trig]
        builder.call(body, arguments)
        builder.ret_void()
        return
    huge_seen = builder.alloca(I1, name="huge_seen")
    builder.call(body, [*arguments, huge_seen])
    if exact is not None:
        with builder.if_then(builder.load(huge_seen, typ=I1), likely=False):
            builder.call(exact, [*arguments, huge_seen])
    builder.ret_void()


def _define_body(
    module: ir.Module,
    kernel: FusedKernel,
    dtypes: dict[str, DType],
    sizes: tuple[str, ...],
    note_huge: bool,
) -> tuple[ir.Function, bool]:
    """The loop nest over kernel.ranges, its outermost loop over [start, end); and whether it
    calls sin or cos.

    With `note_huge` (exact_trig on), sin and cos are their fast path, and the body's last
    argument points to an i1 it sets: whether an argument was too big for it. Without, sin
    and cos are right for every argument (the exact body; or libm's, exact_trig off), and
    with exact_trig on the body still takes that argument, unused.
    """
    names = kernel.reads + kernel.writes
    flag = [PTR] if config.exact_trig else []  # huge_seen
    arguments = [PTR] * len(names) + [I64, I64] + [I64] * len(sizes) + [PTR] + flag
    signature = ir.FunctionType(ir.VoidType(), arguments)
    suffix = ".exact" if config.exact_trig and not note_huge else ""
    fn = ir.Function(module, signature, f"{kernel.name}.body{suffix}")
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    pointers, rest = fn.args[: len(names)], fn.args[len(names) :]
    start, end, *symbols, index_error = rest[: len(rest) - len(flag)]
    index_error.name = "index_error"
    huge_seen_out = rest[-1] if flag else None
    if huge_seen_out is not None:
        huge_seen_out.name = "huge_seen"
    for pointer, name in zip(pointers, names, strict=True):
        pointer.name = name
        pointer.add_attribute("noalias")  # see [Note: the LLVM kernel]
    start.name, end.name = "start", "end"

    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    # Callers split [0, n), so start >= 0. Told so, LLVM knows every loop counter is >= 0 and
    # may make `i0 % 1000` and `i0 // 64` unsigned (cheaper): 1.5x on x[i0] * y[i0 % 1000].
    nonnegative = builder.icmp_signed(">=", start, i64(0), name="start.nonnegative")
    builder.call(module.declare_intrinsic("llvm.assume"), [nonnegative])
    huge_seen = None
    if note_huge:  # a slot of its own, which the optimizer turns into a register
        huge_seen = entry_alloca(builder, I1, "huge_seen.local")
        builder.store(ir.Constant(I1, 0), huge_seen)
    handler = LLVMOps(
        builder, dict(zip(names, pointers, strict=True)), dtypes, huge_seen, index_error
    )
    for symbol, name in zip(symbols, sizes, strict=True):
        symbol.name = name
        # The caller binds a symbol only to sizes >= 2 (sizes 0 and 1 stay specialised).
        at_least_2 = builder.icmp_signed(">=", symbol, i64(2), name=f"{name}.at_least_2")
        builder.call(module.declare_intrinsic("llvm.assume"), [at_least_2])
        handler.index_env[name] = IndexValue(builder, symbol)
    with set_ops_handler(handler):
        if _reduces_across_outputs(kernel, sizes):
            _emit_output_tiles(handler, kernel, start, end)
        else:
            _emit_loop_nest(handler, kernel, start, end)
    if huge_seen is not None:
        builder.store(builder.load(huge_seen, typ=I1), huge_seen_out)
    builder.ret_void()
    return fn, handler.uses_trig


def _bounds(handler: LLVMOps, ranges: tuple[int | Expr, ...]) -> tuple[int | ir.Value, ...]:
    """Loop sizes as for_range takes them: ints, or i64 registers computed from size symbols."""
    values = []
    for n in ranges:
        value = n.evaluate(handler.index_env) if isinstance(n, Expr) else n
        values.append(value.value if isinstance(value, IndexValue) else value)
    return tuple(values)


@contextmanager
def _kept_loops(
    handler: LLVMOps, ranges: tuple[int | Expr, ...], start: ir.Value, end: ir.Value
) -> Iterator[None]:
    """Loops over `ranges` (the first one over [start, end)), with i0, i1, ... set in the env."""
    index = index_vars("i", len(ranges))
    if not index:  # no ranges: the body runs once, for [0, 1)
        with for_range(handler.builder, start, end, name="once"):
            yield
        return
    with for_range(handler.builder, start, end, name=index[0].name) as first:
        names = tuple(var.name for var in index[1:])
        with for_nest(handler.builder, _bounds(handler, ranges[1:]), names) as rest:
            for var, counter in zip(index, (first, *rest), strict=True):
                handler.index_env[var.name] = IndexValue(handler.builder, counter)
            yield


def _emit_loop_nest(handler: LLVMOps, kernel: FusedKernel, start: ir.Value, end: ir.Value) -> None:
    """for index in ranges: for loop in loops: run it ([Note: fusion] in ir/scheduler.py)."""
    with _kept_loops(handler, kernel.ranges, start, end):
        for loop in kernel.loops:
            if not loop.ranges and _all_pointwise(loop):  # once per row
                for node in loop.nodes:
                    _comment(handler, node)
                    index = node_index(kernel.ranges, loop.ranges, node)
                    value = _checked(node, node.data.inner_fn(index))
                    _remember(handler, kernel, node, index, value)
            elif _is_arg_reduction(loop.nodes[0].data):  # alone in its loop: see [Note: fusion]
                (node,) = loop.nodes
                _comment(handler, node)
                index = index_vars("i", len(kernel.ranges))
                loops = lambda: _reduction_loops(handler, kernel.reduction_ranges)  # noqa: E731
                value = emit_arg_reduction(handler, node.name, node.data, index, loops)
                _remember(handler, kernel, node, index, _checked(node, value))
            else:
                _emit_row_loop(handler, kernel, loop)


def _emit_row_loop(handler: LLVMOps, kernel: FusedKernel, loop: Loop) -> None:
    """One loop over the row: element nodes computed (and stored) at each rindex, reductions
    accumulated; after it, the reductions' values are registers and the elements are gone."""
    builder = handler.builder
    accumulators = {}  # reduction -> (its stack slot, how a term joins it)
    for node in loop.nodes:
        if isinstance(node.data, Reduction):
            start_value, combine = reduction(node.data)
            slot = entry_alloca(builder, start_value.type, f"{node.name}.acc")
            builder.store(start_value, slot)
            accumulators[node.name] = (slot, combine)
    with handler.scope(), _reduction_loops(handler, kernel.reduction_ranges) as rindex:
        innermost = handler.index_env[rindex[-1].name].value if rindex else None
        for node in loop.nodes:
            _comment(handler, node)
            index = node_index(kernel.ranges, loop.ranges, node)
            if isinstance(node.data, Pointwise):
                value = _checked(node, node.data.inner_fn(index))
                _remember(handler, kernel, node, index, value)
                continue
            slot, combine = accumulators[node.name]
            term = _checked(node, node.data.inner_fn(index, rindex))
            builder.store(combine(builder, builder.load(slot), term), slot)
    if innermost is not None and len(kernel.loops) > 1:  # see [Note: unrolling a row's loops]
        unroll_by(innermost, ROW_LOOP_UNROLL)
    for node in loop.nodes:
        if isinstance(node.data, Pointwise):
            if loop.ranges:  # an element: a later loop loads it back from memory
                del handler.registers[node.name]
        else:
            value = builder.load(accumulators[node.name][0], name=node.name)
            _remember(handler, kernel, node, index_vars("i", len(kernel.ranges)), value)


def _comment(handler: LLVMOps, node: ComputedBuffer) -> None:
    """`; buf3: from sin_1, pow_2 (sincos.py:13)` before the node's code: the fx nodes it
    computes and their lines ([Note: provenance] in tracer/fx/provenance.py)."""
    if node.provenance:
        handler.builder.comment(node.provenance)


def _all_pointwise(loop: Loop) -> bool:
    return all(isinstance(node.data, Pointwise) for node in loop.nodes)


def _remember(
    handler: LLVMOps, kernel: FusedKernel, node: ComputedBuffer, index: tuple, value: ir.Value
) -> None:
    """Keep `value` as the register of `node` at `index`; store it if the kernel writes it."""
    handler.registers[node.name] = (store_index(node, index), value)
    if node.name in kernel.writes:
        handler.store(node.name, store_index(node, index), value)


def _is_arg_reduction(data: Pointwise | Reduction) -> bool:
    return isinstance(data, Reduction) and data.reduction_type in ARG_REDUCTIONS


@contextmanager
def _reduction_loops(
    handler: LLVMOps, reduction_ranges: tuple[int | Expr, ...]
) -> Iterator[tuple[Expr, ...]]:
    """Loops over reduction_ranges with r0, r1, ... set in the env; gives the rindex."""
    rindex = index_vars("r", len(reduction_ranges))
    names = tuple(var.name for var in rindex)
    bounds = _bounds(handler, reduction_ranges)
    with for_nest(handler.builder, bounds, names) as counters:
        for var, counter in zip(rindex, counters, strict=True):
            handler.index_env[var.name] = IndexValue(handler.builder, counter)
        yield rindex


def _checked(node: ComputedBuffer, value: ir.Value) -> ir.Value:
    """`value`, if its type is the node's dtype (else the body broke the IR's typing rule)."""
    if value.type != ir_type(node.data.dtype):
        raise CompileError(f"{node.name} computes {value.type}, not {node.data.dtype.name}")
    return value


# -- reductions across outputs -----------------------------------------------------------------
#
# [Note: reductions across outputs]
# x.sum(axis=0) on a row-major (m, n) x, in the IR's loop order,
#
#     for i0 in range(n): for r0 in range(m): acc += x[r0, i0]
#
# reads x down its columns: each load is a whole row away from the last, nothing vectorizes,
# and for a (4096, 4096) float32 x it took 160 ms where numpy takes 5. So when the loads run
# along the last *kept* index (and none along the last reduced one), we swap the loops, over
# a tile of T neighbouring outputs with one accumulator each:
#
#     for tile in range(0, n, T):
#         acc[0:T] = 0                                  # T accumulators, on the stack
#         for r0 in range(m):
#             for lane in range(min(T, n - tile)):      # along a row: vectorizes
#                 acc[lane] += x[r0, tile + lane]
#         buf0[tile:tile + T] = acc[0:T]
#
# which reads x row by row, as numpy does (4.8 ms). Every output still adds its terms in the
# order of r0: the result is exactly the IR's. A later node in the kernel finds an earlier
# one's value in that node's accumulator array (a `Lanes` register) at its own lane.

# Outputs per tile. Small tiles re-walk every row once per tile (160 -> 9 ms at T = 128, 5 ms
# at 4096); the arrays cost T * itemsize bytes of stack per reduction in the kernel.
_OUTPUT_TILE = 4096


def _reduces_across_outputs(kernel: FusedKernel, sizes: tuple[str, ...] = ()) -> bool:
    """Whether some load walks memory along the last kept index and none along the last
    reduced index: then the reduction loop goes outside a loop over outputs."""
    if any(isinstance(node.data, Pointwise) for node in kernel.nodes):
        return False  # an element node's value is one register, not one per output
    if any(_is_arg_reduction(node.data) for node in kernel.nodes):
        return False  # their terms must come in order, one output at a time
    return walks_across_outputs(kernel, sizes)


def _emit_output_tiles(
    handler: LLVMOps, kernel: FusedKernel, start: ir.Value, end: ir.Value
) -> None:
    """The loop nest of [Note: reductions across outputs], tiling the last kept index."""
    builder = handler.builder
    index = index_vars("i", len(kernel.ranges))
    last = index[-1].name
    if len(index) == 1:  # the loop that threads split is the tiled one
        outer, low, high = contextlib.nullcontext(), start, end
    else:
        outer = _kept_loops(handler, kernel.ranges[:-1], start, end)
        low, high = i64(0), _bounds(handler, kernel.ranges[-1:])[0]
        high = i64(high) if isinstance(high, int) else high
    with outer, for_range(builder, low, high, name=f"{last}.tile", step=_OUTPUT_TILE) as tile:
        remaining = builder.sub(high, tile)
        full = builder.icmp_signed(">", remaining, i64(_OUTPUT_TILE))
        count = builder.select(full, i64(_OUTPUT_TILE), remaining, name="count")
        for node in kernel.nodes:
            _comment(handler, node)
            start_value, combine = reduction(node.data)
            array = ir.ArrayType(start_value.type, _OUTPUT_TILE)
            lanes = Lanes(entry_alloca(builder, array, f"{node.name}.acc"), start_value.type)
            with _lanes(handler, tile, count, last) as lane:
                builder.store(start_value, handler.lane_address(lanes, lane))
            with handler.scope(), _reduction_loops(handler, kernel.reduction_ranges) as rindex:
                with _lanes(handler, tile, count, last) as lane:
                    term = _checked(node, node.data.inner_fn(index, rindex))
                    address = handler.lane_address(lanes, lane)
                    builder.store(combine(builder, builder.load(address), term), address)
            handler.registers[node.name] = (store_index(node), lanes)
            if node.name in kernel.writes:
                with _lanes(handler, tile, count, last) as lane:
                    value = builder.load(handler.lane_address(lanes, lane), name=node.name)
                    handler.store(node.name, store_index(node), value)


@contextmanager
def _lanes(handler: LLVMOps, tile: ir.Value, count: ir.Value, var: str) -> Iterator[ir.Value]:
    """for lane in range(count), with `var` = tile + lane in the env; values stay inside."""
    with handler.scope(), for_range(handler.builder, 0, count, name="lane") as lane:
        handler.index_env[var] = IndexValue(handler.builder, handler.builder.add(tile, lane))
        handler.lane = lane
        yield lane
