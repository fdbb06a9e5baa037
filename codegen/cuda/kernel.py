"""One FusedKernel -> one LLVM function for a GPU (or, emulated, for this CPU).

    module = generate_kernel(kernel, dtypes, sizes)                  # for NVPTX: a ptx_kernel
    module = generate_kernel(kernel, dtypes, sizes, emulated=True)   # the same, in loops

The loop bodies are the CPU backend's: each node's `inner_fn` runs under `CudaOps`, the LLVM
ops handler (codegen/llvm/ops.py) with sin and cos made self-contained, so every op and math
function is emitted by the same code for both targets. What differs is around them: which
rows and which elements of a row a thread takes (the launch plan's code, rows.py), and how a
block combines its reductions (grid.py; [Note: threads, blocks and phases] in __init__.py).

The GPU kernel's arguments are the buffers (`reads + writes`, in the global address space),
the size symbols (i64), and a pointer to the int64[3] where an index out of bounds is reported
(1, index, size), as on the CPU ([Note: indirect loads] in ir/ops_handler.py):

    define ptx_kernel void @"kernel0"(ptr addrspace(1) %"x", ptr addrspace(1) %"buf0",
                                      i64 %"s0", ptr addrspace(1) %"index_error")

The emulated function takes the CPU backend's pointer array instead, and the grid's size:

    define void @"kernel0"(ptr %"buffers", i64 %"grid_dim", i64 %"s0")
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext

import numpy as np
from llvmlite import ir

from codegen.cuda.grid import Combine, DeviceGrid, EmulatedGrid, Grid
from codegen.cuda.launch import LaunchPlan, launch_plan, strategy
from codegen.cuda.rows import Row, Rows, bind
from codegen.cuda.target import TRIPLE
from codegen.llvm import trig
from codegen.llvm.arg_reduction import ARG_REDUCTIONS, block_of_its_own, extreme_start
from codegen.llvm.loops import I64, IndexValue, i64
from codegen.llvm.ops import I8, LLVMOps, ir_type, is_integer
from codegen.llvm.reductions import reduction
from ir.indexing import index_vars, is_size_symbol
from ir.nodes import ComputedBuffer, Pointwise, Reduction
from ir.ops_handler import set_ops_handler
from ir.scheduler import FusedKernel, Loop, node_index, store_index
from minitorch.dtype import DType
from minitorch.errors import CompileError

PTR = ir.PointerType()
GLOBAL_PTR = ir.PointerType(addrspace=1)  # device memory, where cupy's arrays live
_NONE_YET = np.iinfo(np.int64).max  # the position of an arg reduction that has seen no term


class CudaOps(LLVMOps):
    """The LLVM ops handler, with sin and cos whose exact path for huge arguments is in the
    kernel's own module (a GPU cannot call the CPU's trig library): a branch per thread."""

    def _float_to_int(self, a: ir.Value, target: ir.IntType) -> ir.Value:
        """Saturating, NaN to 0: what the GPU's conversion (cvt.rzi) does, and so cupy's casts,
        the GPU's eager answer. Written out with selects, not left to fptosi: its poison for
        NaN lets LLVM's optimizer delete a store whose NaN it can see ahead of time."""
        b = self.builder
        limit = ir.Constant(a.type, float(2 ** (target.width - 1)))
        inside = b.and_(b.fcmp_ordered(">=", a, b.fneg(limit)), b.fcmp_ordered("<", a, limit))
        largest = ir.Constant(target, 2 ** (target.width - 1) - 1)
        smallest = ir.Constant(target, -(2 ** (target.width - 1)))
        beyond = b.select(b.fcmp_ordered(">=", a, limit), largest, smallest)
        outside = b.select(b.fcmp_unordered("uno", a, a), ir.Constant(target, 0), beyond)
        return b.select(inside, b.fptosi(a, target), outside)

    def _trig(self, name: str, a: ir.Value) -> ir.Value:
        self.uses_trig = True
        fn = trig.branching_function(self.builder.module, name, a.type)
        return self._once((name, a), lambda: self.builder.call(fn, [a], name=name))


def generate_kernel(
    kernel: FusedKernel,
    dtypes: dict[str, DType],
    sizes: tuple[str, ...] = (),
    emulated: bool = False,
) -> ir.Module:
    """The LLVM module of `kernel` for NVPTX (a `ptx_kernel` named kernel.name), or with
    `emulated` for this CPU; launched as `launch_plan(kernel, sizes)` says."""
    not_sizes = [name for name in sizes if not is_size_symbol(name)]
    if not_sizes:
        raise CompileError(f"{kernel.name}: {not_sizes} are not size symbols (s0, s1, ...)")
    module = ir.Module(name=kernel.name)
    if not emulated:
        module.triple = TRIPLE
    plan = launch_plan(kernel, sizes)
    names = kernel.reads + kernel.writes
    if emulated:
        signature = ir.FunctionType(ir.VoidType(), [PTR, I64] + [I64] * len(sizes))
    else:
        signature = ir.FunctionType(
            ir.VoidType(), [GLOBAL_PTR] * len(names) + [I64] * len(sizes) + [GLOBAL_PTR]
        )
    fn = ir.Function(module, signature, kernel.name)
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    if emulated:
        # It checks what the GPU would compute; how fast the CPU runs it matters little, and
        # O3's vectorizer and unroller would spend most of its compile time.
        fn.attributes.add("minsize")
        fn.attributes.add("optsize")
        pointers, index_error, symbols, grid = _emulated_arguments(fn, builder, names, plan)
    else:
        fn.calling_convention = "ptx_kernel"
        pointers, index_error, symbols = _device_arguments(fn, builder, names)
        grid = DeviceGrid(builder, plan.block_dim)
    handler = CudaOps(builder, dict(zip(names, pointers, strict=True)), dtypes, None, index_error)
    for symbol, name in zip(symbols, sizes, strict=True):
        symbol.name = name
        # The caller binds a symbol only to sizes >= 2 (sizes 0 and 1 stay specialised).
        at_least_2 = builder.icmp_signed(">=", symbol, i64(2), name=f"{name}.at_least_2")
        builder.call(module.declare_intrinsic("llvm.assume"), [at_least_2])
        handler.index_env[name] = IndexValue(builder, symbol)
    try:
        with set_ops_handler(handler):
            _emit_rows(handler, kernel, plan, grid)
    except NotImplementedError as error:  # an op LLVMOps does not have yet
        raise CompileError(f"cannot compile {kernel.name} for CUDA: {error}") from error
    builder.ret_void()
    return module


def _device_arguments(
    fn: ir.Function, builder: ir.IRBuilder, names: tuple[str, ...]
) -> tuple[list[ir.Value], ir.Value, list[ir.Value]]:
    """The buffers and the error slot as generic pointers (the shared ops handler's), and the
    size symbols. NVPTX infers that the loads through them are global again (ld.global)."""
    arguments = list(fn.args)
    buffers, symbols, index_error = (
        arguments[: len(names)],
        arguments[len(names) : -1],
        arguments[-1],
    )
    pointers = []
    for argument, name in zip(buffers, names, strict=True):
        argument.name = f"{name}.global"
        argument.add_attribute("noalias")  # as on the CPU: writes never alias reads
        pointers.append(builder.addrspacecast(argument, PTR, name=name))
    index_error.name = "index_error.global"
    return pointers, builder.addrspacecast(index_error, PTR, name="index_error"), symbols


def _emulated_arguments(
    fn: ir.Function, builder: ir.IRBuilder, names: tuple[str, ...], plan: LaunchPlan
) -> tuple[list[ir.Value], ir.Value, list[ir.Value], Grid]:
    """The pointer array unpacked (the buffers', then the error slot's), the size symbols, and
    a grid of `grid_dim` blocks."""
    buffers, grid_dim, *symbols = fn.args
    buffers.name, grid_dim.name = "buffers", "grid_dim"
    pointers = []
    for k, name in enumerate((*names, "index_error")):
        slot = builder.gep(buffers, [i64(k)], inbounds=True, source_etype=PTR)
        pointers.append(builder.load(slot, name=name, typ=PTR))
    return pointers[:-1], pointers[-1], symbols, EmulatedGrid(builder, plan.block_dim, grid_dim)


# -- rows ---------------------------------------------------------------------------------------


def _emit_rows(handler: LLVMOps, kernel: FusedKernel, plan: LaunchPlan, grid: Grid) -> None:
    """Every row of the kernel, spread over the grid by the code of `plan.strategy` (a
    registered launch plan's `emit`, codegen/cuda/rows.py)."""
    strategy(plan.strategy).emit(Rows(handler, kernel, grid, _emit_row))


def _emit_row(handler: LLVMOps, kernel: FusedKernel, row: Row) -> None:
    """The kernel's loops over one row, in order ([Note: fusion] in ir/scheduler.py)."""
    index = index_vars("i", len(kernel.ranges))
    for loop in kernel.loops:
        if not loop.ranges and all(isinstance(node.data, Pointwise) for node in loop.nodes):
            for node in loop.nodes:  # once per row, in every thread of the row's block
                node_at = node_index(kernel.ranges, loop.ranges, node)
                _remember(handler, kernel, node, node_at, node.data.inner_fn(node_at), row)
        elif _is_arg_reduction(loop.nodes[0].data):  # alone in its loop
            (node,) = loop.nodes
            _remember(handler, kernel, node, index, _arg_reduction(handler, kernel, node, row), row)
        else:
            _emit_loop(handler, kernel, loop, row)


def _emit_loop(handler: LLVMOps, kernel: FusedKernel, loop: Loop, row: Row) -> None:
    """One loop over the row: each thread walks its elements, computing the element nodes and
    adding terms to its accumulators; then the reductions are combined over the row."""
    builder = handler.builder
    accumulators = {}  # reduction -> (its private accumulator, start value, combine)
    for node in loop.nodes:
        if isinstance(node.data, Reduction):
            start, combine = reduction(node.data)
            accumulators[node.name] = (row.private(start.type, f"{node.name}.acc"), start, combine)
    with handler.scope(), row.phase():
        for private, start, _ in accumulators.values():
            builder.store(start, private.address())
        with handler.scope(), row.walk(kernel.reduction_ranges) as flat:
            bind(handler, "r", kernel.reduction_ranges, flat)
            for node in loop.nodes:
                node_at = node_index(kernel.ranges, loop.ranges, node)
                if isinstance(node.data, Pointwise):  # an element: this thread's own
                    _remember(handler, kernel, node, node_at, node.data.inner_fn(node_at))
                    continue
                private, _, combine = accumulators[node.name]
                term = _checked(
                    node, node.data.inner_fn(node_at, index_vars("r", len(kernel.reduction_ranges)))
                )
                address = private.address()
                builder.store(combine(builder, builder.load(address, typ=term.type), term), address)
        for node in loop.nodes:
            if isinstance(node.data, Pointwise) and loop.ranges:  # an element: a later loop
                del handler.registers[node.name]  # loads it back from memory
    index = index_vars("i", len(kernel.ranges))
    for node in loop.nodes:
        if isinstance(node.data, Reduction):
            private, _, combine = accumulators[node.name]
            (value,) = row.combine([private], _pairwise(combine))
            value.name = node.name
            _remember(handler, kernel, node, index, value, row)


def _pairwise(combine: Callable) -> Combine:
    """A reduction's combine of one value, as a Combine of one-component lists."""
    return lambda builder, a, b: [combine(builder, a[0], b[0])]


def _remember(
    handler: LLVMOps,
    kernel: FusedKernel,
    node: ComputedBuffer,
    index: tuple,
    value: ir.Value,
    row: Row | None = None,
) -> None:
    """Keep `value` as the register of `node` at `index`; store it if the kernel writes it,
    from one thread of the row's block when it is the row's value (`row`)."""
    _checked(node, value)
    handler.registers[node.name] = (store_index(node, index), value)
    if node.name in kernel.writes:
        with row.one_thread() if row is not None else nullcontext():
            handler.store(node.name, store_index(node, index), value)


def _checked(node: ComputedBuffer, value: ir.Value) -> ir.Value:
    """`value`, if its type is the node's dtype (else the body broke the IR's typing rule)."""
    if value.type != ir_type(node.data.dtype):
        raise CompileError(f"{node.name} computes {value.type}, not {node.data.dtype.name}")
    return value


def _is_arg_reduction(data: Pointwise | Reduction) -> bool:
    return isinstance(data, Reduction) and data.reduction_type in ARG_REDUCTIONS


# -- argmax and argmin: (value, position) pairs -------------------------------------------------
#
# On the CPU an arg reduction is two passes that vectorize ([Note: arg reductions in LLVM]);
# here each thread keeps the best (value, position) of its own elements, and the block
# combines the pairs. `_better` is the order: the larger value for argmax (NaN beats any
# number), and on a tie (equal values, or both NaN) the smaller position, so the answer is the
# first extreme, the first NaN if any: the interpreter's. A thread that saw no term holds
# (the lowest value, INT64_MAX), which loses every tie with a real position.


def _arg_reduction(
    handler: LLVMOps, kernel: FusedKernel, node: ComputedBuffer, row: Row
) -> ir.Value:
    """The int64 position of the first extreme term of `node` in this row."""
    builder, data = handler.builder, node.data
    index = index_vars("i", len(kernel.ranges))
    rindex = index_vars("r", len(kernel.reduction_ranges))
    best = position = None
    with handler.scope(), row.phase():
        init = block_of_its_own(builder, f"{node.name}.init")  # filled once the type is known
        with handler.scope(), row.walk(kernel.reduction_ranges) as flat:
            bind(handler, "r", kernel.reduction_ranges, flat)
            term = data.inner_fn(index, rindex)
            best = row.private(term.type, f"{node.name}.best")
            position = row.private(I64, f"{node.name}.position")
            old = [
                builder.load(best.address(), typ=term.type),
                builder.load(position.address(), typ=I64),
            ]
            new = _pick(data.reduction_type)(builder, [term, flat], old)
            builder.store(new[0], best.address())
            builder.store(new[1], position.address())
        with builder.goto_block(init):
            builder.store(extreme_start(data.reduction_type, term.type), best.address())
            builder.store(i64(_NONE_YET), position.address())
    _, found = row.combine([best, position], _pick(data.reduction_type))
    found.name = node.name
    return found


def _pick(reduction_type: str) -> Combine:
    """The better of two (value, position) pairs, for argmax or argmin."""

    def pick(builder: ir.IRBuilder, a: list[ir.Value], b: list[ir.Value]) -> list[ir.Value]:
        take = _better(builder, reduction_type, a, b)
        return [builder.select(take, a[0], b[0]), builder.select(take, a[1], b[1])]

    return pick


def _better(
    builder: ir.IRBuilder, reduction_type: str, a: list[ir.Value], b: list[ir.Value]
) -> ir.Value:
    """An i1: whether pair `a` beats pair `b` (see the comment above `_arg_reduction`)."""
    (x, at_x), (y, at_y) = a, b
    beyond = ">" if reduction_type == "argmax" else "<"
    if x.type == I8:
        wins, ties = builder.icmp_unsigned(beyond, x, y), builder.icmp_unsigned("==", x, y)
    elif is_integer(x.type):
        wins, ties = builder.icmp_signed(beyond, x, y), builder.icmp_signed("==", x, y)
    else:
        x_nan, y_nan = builder.fcmp_unordered("uno", x, x), builder.fcmp_unordered("uno", y, y)
        wins = builder.or_(
            builder.fcmp_ordered(beyond, x, y), builder.and_(x_nan, builder.not_(y_nan))
        )
        ties = builder.or_(builder.fcmp_ordered("==", x, y), builder.and_(x_nan, y_nan))
    earlier = builder.icmp_signed("<", at_x, at_y)
    return builder.or_(wins, builder.and_(ties, earlier))
