"""The grid emulation: CUDA kernels run on this CPU, every (block, thread) of the real launch.

    backend = get_backend("cuda_emulator")
    compiled = backend.compile_kernel(kernel, dtypes)
    compiled.ptx                          # what the GPU would run (checked by ptxas in tests)
    compiled({"x": x, "buf0": out})       # what it computes, emulated: fills out in place

Each kernel is generated twice by codegen/cuda/kernel.py, from one description: for NVPTX,
compiled to PTX (codegen/cuda/target.py), and with the grid emulated ([Note: threads, blocks
and phases] in __init__.py), compiled for this CPU by the LLVM backend's JIT. The emulated
function runs the same block and thread indices over the same launch (launch.py), with the
same strides, edge checks and combine order, so the conformance suite grading this backend
(`pytest tests/conformance --backend cuda_emulator`) grades the CUDA kernels' indexing and
reductions against the reference interpreter, on a machine with no GPU.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np

from codegen.backend import Backend, CompiledKernel
from codegen.cuda.kernel import generate_kernel
from codegen.cuda.launch import LaunchPlan, launch_plan
from codegen.cuda.target import compile_ptx
from codegen.llvm import jit as jit_cache
from codegen.llvm.backend import data_pointer
from codegen.llvm.jit import JitModule, compile_ir, part_symbol
from ir import interpreter
from ir.scheduler import FusedKernel
from minitorch.dtype import DType
from minitorch.errors import DTypeError, MinitorchError

_ERROR_SLOTS = 3  # (1, index, size) once an index is out of bounds


class EmulatedKernel(CompiledKernel):
    """A CUDA kernel, emulated on this CPU; `ptx` is the PTX of its graph for the GPU."""

    def __init__(
        self,
        kernel: FusedKernel,
        dtypes: dict[str, DType],
        jit: JitModule,
        symbol: str,
        sizes: tuple[str, ...],
        source: str,
        ptx: str,
    ) -> None:
        self.name = kernel.name
        self.source = source  # the kernel's LLVM IR for NVPTX, as generated
        self.ptx = ptx
        self.plan: LaunchPlan = launch_plan(kernel, sizes)
        self.sizes = sizes
        self._jit = jit  # NOTE: the machine code lives as long as this
        signature = (None, ctypes.c_void_p, ctypes.c_int64) + (ctypes.c_int64,) * len(sizes)
        self._function = jit.function(symbol, *signature)
        self._buffers = kernel.reads + kernel.writes
        self._dtypes = tuple(dtypes[name].np for name in self._buffers)

    def __call__(self, buffers: dict[str, np.ndarray], sizes: dict[str, int] | None = None) -> None:
        """Run every block and thread of the launch `plan` gives for these sizes."""
        sizes = sizes or {}
        if any(name not in sizes for name in self.sizes):
            raise MinitorchError(f"{self.name} needs the sizes {self.sizes}, got {sizes}")
        pointers = (ctypes.c_int64 * (len(self._buffers) + 1 + _ERROR_SLOTS))()
        for k, (name, dtype) in enumerate(zip(self._buffers, self._dtypes, strict=True)):
            if name not in buffers:
                raise MinitorchError(f"{self.name} needs the buffer {name!r}")
            if buffers[name].dtype != dtype:
                raise DTypeError(
                    f"{self.name}: buffer {name!r} is {buffers[name].dtype}, expected {dtype}"
                )
            pointers[k] = data_pointer(buffers[name])
        error = len(self._buffers) + 1
        pointers[error - 1] = ctypes.addressof(pointers) + 8 * error
        grid, _, _ = self.plan.grid(sizes)
        self._function(pointers, grid, *(sizes[name] for name in self.sizes))
        if pointers[error]:
            raise interpreter.index_error(pointers[error + 1], pointers[error + 2])


class CudaEmulatorBackend(Backend):
    """The CUDA backend's kernels, emulated on this CPU, their PTX made alongside."""

    name = "cuda_emulator"
    device = "cpu"
    dtypes = frozenset({"float32", "float64", "int32", "int64", "bool"})
    symbolic_sizes = True

    def compile_kernel(
        self, kernel: FusedKernel, dtypes: dict[str, DType], sizes: tuple[str, ...] = ()
    ) -> EmulatedKernel:
        return self.compile_kernels([(kernel, dtypes)], sizes)[0]

    def compile_kernels(
        self, kernels: Sequence[tuple[FusedKernel, dict[str, DType]]], sizes: tuple[str, ...] = ()
    ) -> list[EmulatedKernel]:
        """One graph's kernels: their PTX as one module, their emulation as one JIT module."""
        if not kernels:
            return []
        sources = [str(generate_kernel(kernel, dtypes, sizes)) for kernel, dtypes in kernels]
        ptx = compile_ptx(sources)
        jit = compile_ir(
            *(
                str(generate_kernel(kernel, dtypes, sizes, emulated=True))
                for kernel, dtypes in kernels
            )
        )
        return [
            EmulatedKernel(
                kernel, dtypes, jit, part_symbol(kernel.name, k, len(kernels)), sizes, source, ptx
            )
            for k, ((kernel, dtypes), source) in enumerate(zip(kernels, sources))
        ]

    def clear_cache(self) -> None:
        """Drop the JIT's compiled modules ([Note: the JIT's memory] in codegen/llvm/jit.py)."""
        jit_cache.clear_cache()
