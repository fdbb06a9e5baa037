"""Which GPU threads take which rows and elements: the GPU kernel's own index code, run on
this CPU one thread at a time.

    seen = probe(kernel)              # the launch `launch_plan(kernel)` gives, probed
    seen.visits[row]                  # how many threads ran the row's phase
    seen.elements[row, k]             # how many times element k of the row was walked
    seen.stores[row]                  # how many threads stored the row's value

[Note: probing the GPU's indices]
The emulation (emulate.py) checks what a kernel computes, but it runs EmulatedGrid's code:
DeviceGrid's index arithmetic (%tid.x, %ctaid.x, a warp's lane) runs nowhere without a GPU,
and only ptxas reads it. A probe runs exactly that code: the strategy's `emit` with a
DeviceGrid, as the GPU kernel is generated, around a row body of its own that only counts:
for each row, the threads that run its phase (and which warps and lanes they are), the
elements each walks, and the threads that store the row's value. The special registers are
the probe function's arguments, and the launch's every (block, thread) calls it once, on the
CPU. One thread at a time cannot shuffle, so the body combines nothing: what a combine
computes is the emulation's to check; the probe checks who does what.
"""

from __future__ import annotations

import ctypes
import math
import re
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from codegen.cuda.grid import WARP, DeviceGrid
from codegen.cuda.launch import LaunchPlan, launch_plan, strategy
from codegen.cuda.rows import Row, Rows, product
from codegen.llvm.jit import compile_ir
from codegen.llvm.loops import I64, IndexValue, i64
from codegen.llvm.ops import I32, LLVMOps
from ir.indexing import Expr, index_vars
from ir.scheduler import FusedKernel
from minitorch.errors import CompileError

PTR = ir.PointerType()
_COUNTS = ("visits", "warp_sum", "warp_squares", "lanes", "stores", "store_warps")
_REGISTERS = ("tid.x", "ctaid.x", "nctaid.x")


@dataclass
class Probe:
    """What the threads of one launch did, per row (flat, row-major over the kernel's ranges)."""

    plan: LaunchPlan
    grid: int  # blocks
    visits: np.ndarray  # threads that ran the row's phase
    warp_sum: np.ndarray  # the sum of their warps' numbers (block * warps per block + warp)
    warp_squares: np.ndarray  # the sum of their squares: all one warp iff visits * this = sum²
    lanes: np.ndarray  # their lanes, as bits: 0xffffffff is every lane of a warp
    stores: np.ndarray  # threads that stored the row's value
    store_warps: np.ndarray  # the sum of their warps' numbers
    elements: np.ndarray  # [rows, elements of a row]: times each was walked in the phase

    def one_warp(self) -> np.ndarray:
        """Per row: whether every thread that ran its phase is of one warp."""
        return self.visits * self.warp_squares == self.warp_sum**2


def probe(kernel: FusedKernel, sizes: dict[str, int] | None = None) -> Probe:
    """Run the GPU index code of `kernel`'s launch (its plan at `sizes`) for every thread."""
    sizes = sizes or {}
    plan = launch_plan(kernel, tuple(sizes))
    ranges = [n.evaluate(sizes) if isinstance(n, Expr) else n for n in kernel.ranges]
    row_length = math.prod(
        n.evaluate(sizes) if isinstance(n, Expr) else n for n in kernel.reduction_ranges
    )
    rows = math.prod(ranges)
    counts = {name: np.zeros(rows, np.int64) for name in _COUNTS}
    elements = np.zeros((rows, row_length), np.int64)
    function = _compile(kernel, plan, tuple(sizes))
    pointers = [counts[name].ctypes.data for name in _COUNTS] + [elements.ctypes.data]
    values = [sizes[name] for name in sizes]
    (grid, _, _) = plan.grid(sizes)
    for block in range(grid):
        for thread in range(plan.block_dim):
            function(*pointers, thread, block, grid, *values)
    return Probe(plan, grid, elements=elements, **counts)


def _compile(kernel: FusedKernel, plan: LaunchPlan, sizes: tuple[str, ...]):
    """The probe function of `kernel`, compiled for this CPU."""
    module = ir.Module(name=f"probe_{kernel.name}")
    arguments = [PTR] * (len(_COUNTS) + 1) + [I64] * (len(_REGISTERS) + len(sizes))
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), arguments), "probe")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    *arrays, elements = fn.args[: len(_COUNTS) + 1]
    thread, block, _ = registers = fn.args[len(_COUNTS) + 1 : len(_COUNTS) + 4]
    for register, name in zip(registers, _REGISTERS, strict=True):
        register.name = name  # the special registers, as i32, read below
        builder.trunc(register, I32, name=f"probe.{name}")
    handler = LLVMOps(builder, {}, {})
    for symbol, name in zip(fn.args[len(_COUNTS) + 4 :], sizes, strict=True):
        symbol.name = name
        handler.index_env[name] = IndexValue(builder, symbol)
    counters = dict(zip(_COUNTS, arrays, strict=True))
    warp = builder.udiv(builder.add(builder.mul(block, i64(plan.block_dim)), thread), i64(WARP))
    lane = builder.urem(thread, i64(WARP))

    counters["elements"] = elements

    def count(name: str, at: ir.Value, value: ir.Value, op: str = "add") -> None:
        where = builder.gep(counters[name], [at], source_etype=I64)
        old = builder.load(where, typ=I64)
        builder.store(getattr(builder, op)(old, value), where)

    def body(handler: LLVMOps, kernel: FusedKernel, row: Row) -> None:
        flat = _flat_row(handler, kernel)
        with row.phase():
            count("visits", flat, i64(1))
            count("warp_sum", flat, warp)
            count("warp_squares", flat, builder.mul(warp, warp))
            count("lanes", flat, builder.shl(i64(1), lane), "or_")
            if kernel.reduction_ranges:
                with row.walk(kernel.reduction_ranges) as element:
                    length = product(handler, kernel.reduction_ranges)
                    count("elements", builder.add(builder.mul(flat, length), element), i64(1))
        with row.one_thread():
            count("stores", flat, i64(1))
            count("store_warps", flat, warp)

    grid = DeviceGrid(builder, plan.block_dim)
    strategy(plan.strategy).emit(Rows(handler, kernel, grid, body))
    builder.ret_void()
    return _jit(str(module), len(arguments))


def _jit(text: str, arguments: int):
    """Compile the probe, its special registers read from its arguments."""
    for name in _REGISTERS:
        intrinsic = re.escape(f'@"llvm.nvvm.read.ptx.sreg.{name}"()')
        text = re.sub(rf"^declare i32 {intrinsic}\n", "", text, flags=re.MULTILINE)
        text = re.sub(rf"call i32 {intrinsic}", f'add i32 %"probe.{name}", 0', text)
    left = sorted(set(re.findall(r"llvm\.nvvm\.[\w.]+", text)))
    if left:
        raise CompileError(f"the probe runs index code only; this kernel's also calls {left}")
    pointers = [ctypes.c_void_p] * (len(_COUNTS) + 1)
    integers = [ctypes.c_int64] * (arguments - len(pointers))
    return compile_ir(text).function("probe", None, *pointers, *integers)


def _flat_row(handler: LLVMOps, kernel: FusedKernel) -> ir.Value:
    """The current row's flat number, from i0, i1, ... in the handler's env."""
    builder, flat = handler.builder, i64(0)
    for var, n in zip(index_vars("i", len(kernel.ranges)), kernel.ranges, strict=True):
        size = product(handler, (n,))
        flat = builder.add(builder.mul(flat, size), handler.index_env[var.name].value)
    return flat
