"""The LLVM CPU backend: FusedKernel -> LLVM IR -> machine code -> a callable kernel.

Used like any backend (codegen/backend.py):

    backend = LLVMBackend()
    compiled = backend.compile_kernel(kernel, program.dtypes())
    print(compiled.source)                # the IR we generated, as written
    compiled({"arg0_1": x, "buf0": out})  # fills out in place
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from codegen.backend import Backend, CompiledKernel
from codegen.llvm import jit as jit_cache
from codegen.llvm.jit import JitModule, compile_ir
from codegen.llvm.kernel import generate_kernel
from codegen.llvm.parallel import parallel_for
from ir import interpreter
from ir.indexing import Expr
from ir.scheduler import FusedKernel
from minitorch.dtype import DType
from minitorch.errors import DTypeError, MinitorchError

# void kernel(void **buffers, int64 start, int64 end)
_KERNEL_SIGNATURE = (None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


class LLVMKernel(CompiledKernel):
    """A kernel compiled for this CPU; calling it runs the machine code, on several threads
    when it is big (codegen/llvm/parallel.py)."""

    def __init__(
        self,
        kernel: FusedKernel,
        dtypes: dict[str, DType],
        jit: JitModule,
        sizes: tuple[str, ...] = (),
    ) -> None:
        self.name = kernel.name
        self.source = jit.source  # the IR as generated: readable, one op per line
        self.sizes = sizes  # the size symbols it takes after (buffers, start, end)
        self._jit = jit
        signature = _KERNEL_SIGNATURE + (ctypes.c_int64,) * len(sizes)
        self._function = jit.function(kernel.name, *signature)
        self._buffers = kernel.reads + kernel.writes  # the order of the pointer array
        self._dtypes = tuple(dtypes[name].np for name in self._buffers)
        self._ranges = kernel.ranges  # ints, or Exprs over the size symbols
        self._reduction_ranges = kernel.reduction_ranges
        if not sizes:  # static sizes: the thread split is the same on every call
            self._outer, self._work = self._split({})

    @property
    def optimized_source(self) -> str:
        """The IR after LLVM's O3 pipeline: vector types, unrolled loops, inlined math."""
        return self._jit.optimized_source

    def assembly(self) -> str:
        """The x86 (or other host) assembly the kernel became."""
        return self._jit.assembly()

    def __call__(
        self, buffers: dict[str, np.ndarray], sizes: dict[str, int] | None = None
    ) -> None:
        """Run on `buffers`, laid out as the kernel was compiled for; `sizes` binds the size
        symbols (s0, ...) if the kernel takes any.

        NOTE: no written array may share memory with a read one: the kernel was compiled on
        that promise (`noalias`, see [Note: the LLVM kernel]), and checking it here would
        cost every launch.
        """
        pointers = (ctypes.c_void_p * (len(self._buffers) + 1))()
        for k, (name, dtype) in enumerate(zip(self._buffers, self._dtypes, strict=True)):
            if name not in buffers:
                raise MinitorchError(f"{self.name} needs the buffer {name!r}")
            array = buffers[name]
            if array.dtype != dtype:
                raise DTypeError(f"{self.name}: buffer {name!r} is {array.dtype}, expected {dtype}")
            # Element (0, 0, ...): flat indices count from here, negative ones included.
            pointers[k] = array.ctypes.data
        index_error = np.zeros(3, np.int64)  # (1, index, size) once an index is out of bounds
        pointers[len(self._buffers)] = index_error.ctypes.data

        if self.sizes:
            sizes = sizes or {}
            if any(name not in sizes for name in self.sizes):
                raise MinitorchError(f"{self.name} needs the sizes {self.sizes}, got {sizes}")
            values = [sizes[name] for name in self.sizes]
            outer, work = self._split(sizes)
        else:
            values, outer, work = (), self._outer, self._work

        def run(start: int, end: int) -> None:
            self._function(pointers, start, end, *values)

        parallel_for(run, outer, work)
        if index_error[0]:
            raise interpreter.index_error(int(index_error[1]), int(index_error[2]))

    def _split(self, sizes: dict[str, int]) -> tuple[int, int]:
        """(iterations of the outer loop, to split between threads; elements of work in all)."""
        ranges = [_value(n, sizes) for n in self._ranges]
        work = math.prod(ranges) * math.prod(_value(n, sizes) for n in self._reduction_ranges)
        return (ranges[0] if ranges else 1), work


class LLVMBackend(Backend):
    """Compiles kernels to machine code for the CPU this process runs on."""

    name = "llvm"
    dtypes = frozenset({"float32", "float64", "int32", "int64", "bool"})
    symbolic_sizes = True  # sizes become i64 arguments ([Note: symbolic sizes])

    def compile_kernel(
        self, kernel: FusedKernel, dtypes: dict[str, DType], sizes: tuple[str, ...] = ()
    ) -> LLVMKernel:
        module = generate_kernel(kernel, dtypes, sizes)
        return LLVMKernel(kernel, dtypes, compile_ir(str(module)), sizes)

    def clear_cache(self) -> None:
        """Drop the JIT's compiled modules ([Note: the JIT's memory] in jit.py)."""
        jit_cache.clear_cache()


def _value(n: int | Expr, sizes: dict[str, int]) -> int:
    """A loop size for this call: an int as is, an Expr over the size symbols evaluated."""
    return n.evaluate(sizes) if isinstance(n, Expr) else n
