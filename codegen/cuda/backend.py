"""The CUDA backend: a graph's kernels -> one PTX module -> launched on the GPU with cupy.

    backend = CudaBackend()
    kernels = backend.compile_kernels([(kernel, program.dtypes())])
    print(kernels[0].source)                  # its PTX: no GPU, no cupy needed for this
    kernels[0]({"arg0_1": x, "buf0": out})    # cupy arrays (numpy's are copied there and
                                              # back): this needs the GPU

[Note: launching on the GPU]
Compiling is LLVM's: the kernel generator (codegen/cuda/kernel.py) emits each FusedKernel as
LLVM IR for the `nvptx64-nvidia-cuda` target, and the graph's kernels are compiled together
into one PTX module, as the CPU backend links them into one object ([Note: one module per
graph] in codegen/llvm/jit.py). Nothing in that imports cupy, which is what lets the `ptx`
stage run on a machine without a GPU ([Note: compile-only PTX] in minitorch/compile/ptx.py).

Launching is cupy's, and lazy: on a kernel's first launch its module's PTX is loaded with
`cupy.cuda.function.Module().load(ptx)`, which hands it to the CUDA driver (cuModuleLoadData:
the driver compiles PTX for the GPU at hand, once per module; `cupy.RawModule(code=...)`
would take the text for CUDA C and compile it with NVRTC), and each launch is

    module.get_function("kernel0")(grid, block, (x, buf0, numpy.int64(s0), report))

with `grid` and `block` from the kernel's ranges at this call's sizes (`launch_plan`), the
arrays as cupy arrays in the order `reads + writes`, each size symbol as a numpy int64 (cupy
passes a numpy scalar by value, in its own C type: a Python int would not say it is 64
bits), then the int64[3] where the kernel reports an index out of bounds.

A launch returns before the GPU has run it (the stream keeps the order); the wrapper goes on
to queue the next one, as PyTorch's does. Only a kernel that reads through a data-chosen index
(gather, embedding: `ops.indirect_indexing`) can report an error, and reading its report back
waits for it, so only those kernels read it: the others share one report that nothing writes,
and never wait.

Compiled graphs launch on cupy arrays, through `launch` (the generated wrapper's one line per
kernel). Called as the Backend protocol says, with a dict of arrays, a kernel also takes numpy
arrays, as the conformance suite passes them: each is copied to the GPU whole, the bytes
between its first and last element, and viewed there with its own strides (negative ones
too, which `cupy.asarray` would not keep), and the written ones are copied back.

Who launches is a parameter: `CudaBackend(launcher=...)` gets each launch as `launcher(kernel,
grid, block, args)`. The default is cupy's; the tests, on a machine without a GPU, launch the
same calls through the grid emulation on numpy arrays (tests/codegen/cuda/).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from codegen.backend import Backend, CompiledKernel, KernelCall, arrays_in_order
from codegen.cuda.kernel import generate_kernel
from codegen.cuda.launch import launch_plan
from codegen.cuda.target import compile_ptx, entry_name
from ir import interpreter
from ir.scheduler import FusedKernel
from minitorch.device import array_module, module_of
from minitorch.dtype import DType
from minitorch.errors import MinitorchError

# launcher(kernel, grid, block, args): runs one kernel; cupy's by default
Launcher = Callable[["CudaKernel", tuple[int, ...], tuple[int, ...], tuple], None]


class PTXModule:
    """One graph's kernels as PTX, and (once a kernel is launched) the GPU module it loads as."""

    def __init__(self, ptx: str) -> None:
        self.ptx = ptx
        self._functions: dict[str, Any] = {}
        self._module = None

    def function(self, name: str):
        """The cupy function `name`, loading the module on first use (needs cupy and a GPU)."""
        if name not in self._functions:
            if self._module is None:  # NOTE: not RawModule(code=...): that takes CUDA C
                self._module = _cupy().cuda.function.Module()
                self._module.load(self.ptx.encode())  # cuModuleLoadData: the driver's JIT
            self._functions[name] = self._module.get_function(name)
        return self._functions[name]


class CudaKernel(CompiledKernel):
    """A kernel of a PTX module; calling it launches it (`launcher`) on the buffers given."""

    def __init__(
        self,
        kernel: FusedKernel,
        dtypes: dict[str, DType],
        module: PTXModule,
        symbol: str,
        sizes: tuple[str, ...],
        launcher: Launcher,
    ) -> None:
        self.name = kernel.name
        self.kernel = kernel
        self.module = module
        self.symbol = symbol  # its entry's name in the module: 'kernel0', 'part1_kernel0'
        self.source = kernel_ptx(module.ptx, symbol)  # the module's header and this entry
        self.sizes = sizes  # the size symbols it takes after its arrays
        self.buffers = kernel.reads + kernel.writes  # the order of its array arguments
        self.plan = launch_plan(kernel, sizes)  # its block, and its grid at given sizes
        self._grid = None if sizes else self.plan.grid({})  # static sizes: one grid
        self.buffer_dtypes = dtypes  # buffer -> DType, as compiled
        self.dtypes = tuple(dtypes[name].np for name in self.buffers)
        self.reports_errors = "indirect_indexing" in str(kernel)
        self.launcher = launcher

    @property
    def module_source(self) -> str:
        """The PTX of the whole module: every kernel of the graph."""
        return self.module.ptx

    def __call__(self, buffers: dict[str, Any], sizes: dict[str, int] | None = None) -> None:
        """Launch on `buffers` (every name in reads and writes) at `sizes`, then check its
        error report if it keeps one ([Note: launching on the GPU])."""
        arrays = arrays_in_order(self.name, self.buffers, self.dtypes, buffers)
        sizes = sizes or {}
        if any(name not in sizes for name in self.sizes):
            raise MinitorchError(f"{self.name} needs the sizes {self.sizes}, got {sizes}")
        values = [sizes[name] for name in self.sizes]
        if self.launcher is not cupy_launch or not isinstance(arrays[0], np.ndarray):
            self.launch(arrays, values)
            return
        # host arrays (the conformance suite's) for the GPU: copied there and back, each in
        # its own layout, which the kernel was compiled for
        copies = [_device_copy(array) for array in arrays]
        self.launch([view for _, view, _ in copies], values)
        for (raw, _, host), name in zip(copies, self.buffers, strict=True):
            if name in self.kernel.writes and host.size:
                raw.get(out=host)

    def launch(self, arrays: Sequence[Any], sizes: Sequence[int]) -> None:
        """One launch: arrays in `self.buffers` order, the sizes' values in `self.sizes`'s."""
        grid = self._grid or self.plan.grid(dict(zip(self.sizes, sizes, strict=True)))
        report = error_report(module_of(arrays[0]), self.reports_errors)
        args = (*arrays, *(np.int64(n) for n in sizes), report)
        self.launcher(self, grid, self.plan.block(), args)
        if self.reports_errors:
            check_report(report)

    def call_code(self, arrays: dict[str, str], name: str) -> KernelCall:
        """`name.launch([arrays], [sizes])`: one call; the launch is mostly the GPU driver's."""
        listed = ", ".join(arrays[buffer] for buffer in self.buffers)
        return KernelCall([f"{name}.launch([{listed}], [{', '.join(self.sizes)}])"], {name: self})


class CudaBackend(Backend):
    """Compiles kernels to PTX for NVIDIA GPUs (sm_80 and newer) and launches them with cupy."""

    name = "cuda"
    device = "cuda"
    dtypes = frozenset({"float32", "float64", "int32", "int64", "bool"})
    symbolic_sizes = True  # sizes are i64 kernel parameters
    parallel = True  # rows spread over the grid's blocks and threads

    def __init__(self, launcher: Launcher | None = None) -> None:
        self.launcher = launcher or cupy_launch

    def compile_kernel(
        self, kernel: FusedKernel, dtypes: dict[str, DType], sizes: tuple[str, ...] = ()
    ) -> CudaKernel:
        return self.compile_kernels([(kernel, dtypes)], sizes)[0]

    def compile_kernels(
        self, kernels: Sequence[tuple[FusedKernel, dict[str, DType]]], sizes: tuple[str, ...] = ()
    ) -> list[CudaKernel]:
        """One graph's kernels as one PTX module (one module loaded on the GPU, once launched)."""
        if not kernels:  # a graph of extern steps only
            return []
        sources = [str(generate_kernel(kernel, dtypes, sizes)) for kernel, dtypes in kernels]
        module = PTXModule(compile_ptx(sources))
        return [
            CudaKernel(
                kernel,
                dtypes,
                module,
                entry_name(kernel.name, part, len(kernels)),
                sizes,
                self.launcher,
            )
            for part, (kernel, dtypes) in enumerate(kernels)
        ]


def cupy_launch(
    kernel: CudaKernel, grid: tuple[int, ...], block: tuple[int, ...], args: tuple
) -> None:
    """The default launcher: the kernel's function in its loaded module, on cupy's stream."""
    kernel.module.function(kernel.symbol)(grid, block, args)


def kernel_ptx(ptx: str, symbol: str) -> str:
    """The part of a module's PTX the course shows for one kernel: the module's header
    (`.version`, `.target`, its globals) and the kernel's `.entry`. (ptxas checks the whole
    module, `CudaKernel.module_source`.)"""
    header, *functions = ptx.split("\t// .globl\t")
    for function in functions:
        if function.split(None, 1)[0] == symbol:
            return f"{header}\t// .globl\t{function}"
    return ptx  # NOTE: a module LLVM laid out otherwise: show it all


def error_report(xp: Any, fresh: bool) -> Any:
    """An int64[3] of array module `xp` (cupy; numpy for launches run on the host) where a
    kernel reports an index out of bounds, (1, index, size): a fresh one if it is to be read,
    else one shared that nothing writes ([Note: launching on the GPU])."""
    return xp.zeros(3, np.int64) if fresh else _unused_report(xp)


@functools.cache
def _unused_report(xp: Any) -> Any:
    return xp.zeros(3, np.int64)


def check_report(report: Any) -> None:
    """Raise the index error a kernel reported (this waits for the kernel to finish)."""
    flag, index, size = (int(n) for n in _to_host(report))
    if flag:
        raise interpreter.index_error(index, size)


def _device_copy(array: np.ndarray) -> tuple[Any, Any, np.ndarray]:
    """(the bytes `array` spans, on the GPU; a view of them with its shape and strides; the
    host bytes): strides of any sign are kept, where cupy.asarray would make a copy C-ordered."""
    cupy = _cupy()
    if array.size == 0:  # no bytes to copy, either way
        return None, cupy.empty(array.shape, array.dtype), np.empty(0, np.uint8)
    low, high = np.lib.array_utils.byte_bounds(array)
    host = np.ctypeslib.as_array((ctypes.c_uint8 * (high - low)).from_address(low))
    raw = cupy.asarray(host)
    view = cupy.ndarray(
        array.shape, array.dtype, raw.data + (array.ctypes.data - low), strides=array.strides
    )
    return raw, view, host


def _to_host(array: Any) -> np.ndarray:
    return array if isinstance(array, np.ndarray) else array.get()


def _cupy():
    return array_module("cuda")  # a clear DeviceError without cupy or a GPU
