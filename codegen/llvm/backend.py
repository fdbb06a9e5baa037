"""The LLVM CPU backend: FusedKernel -> LLVM IR -> machine code -> a callable kernel.

Used like any backend (codegen/backend.py):

    backend = LLVMBackend()
    compiled = backend.compile_kernel(kernel, program.dtypes())
    print(compiled.source)                # the IR we generated, as written
    compiled({"arg0_1": x, "buf0": out})  # fills out in place

[Note: launching a kernel cheaply]
A kernel on 16 elements runs in nanoseconds; what a call costs is the Python around it. The
pointer array the kernel takes, `(buffers, start, end, *sizes)` with `buffers` the arrays'
data pointers followed by the address of an error slot, is where the time went: numpy's
`array.ctypes.data` builds a ctypes helper object, ~1 us per array. So the generated wrapper
(`call_code`) writes the launch out, one line per pointer:

    pointers = kernel0_pointers()      # int64[n + 4], fresh on every call
    pointers[0] = ___pointer_at(id(arg0_1_array) + 16).value
    pointers[1] = ___pointer_at(id(buf9) + 16).value
    pointers[2] = ___address_of(pointers) + 24    # the error slot: the array's last 3 int64
    if 16 < ___config.parallel_threshold:          # little work: on this thread
        kernel0_untyped(pointers, ___start, kernel0_end)
    else:
        ___parallel_for(___partial(kernel0, pointers), 16, 16)
    if pointers[3]:
        raise ___index_error(pointers[4], pointers[5])

- A data pointer is read where CPython keeps it: an object's `id` is its address, and
  numpy's array struct holds its data pointer right after the object header (16 bytes in: an
  offset probed once, below, against `ctypes.data`): ~0.1 us.
- ctypes converts each argument by the function's declared types (~0.5 us a call); a
  function declared without them takes ctypes objects as they are. So a kernel with static
  sizes, run on one thread, gets its range as two int64 objects made when it was compiled.
- The array is made fresh on every call, not kept and refilled: two threads calling one
  compiled function at once would otherwise overwrite each other's pointers. One ctypes
  array holds the pointers and the error slot, so a call allocates one object.
- The ctypes function (argument types set once) and the buffer order are fixed when the
  kernel is compiled; only the pointers change.

[Note: the plain launch]
The bullets above are extras: reading the pointer at `id(array) + 16` and calling untyped
go with config.object_loader (the fast start and launch), the branch on
`parallel_threshold` with config.thread_pool (codegen/llvm/parallel.py). With both off the
launch is what a reader expects, and the values are the same:

    pointers = kernel0_pointers()
    pointers[0] = arg0_1_array.ctypes.data
    pointers[1] = buf9.ctypes.data
    pointers[2] = ___address_of(pointers) + 24
    kernel0(pointers, 0, 16)                       # the whole range, on this thread
    if pointers[3]:
        raise ___index_error(pointers[4], pointers[5])
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from codegen import disk_cache
from codegen.backend import Backend, CompiledKernel, KernelCall, arrays_in_order
from codegen.llvm import jit as jit_cache
from codegen.llvm import trig_library  # noqa: F401 (kernels from the disk find the library)
from codegen.llvm.host import host_description
from codegen.llvm.jit import JitModule, compile_described, part_symbol
from codegen.llvm.parallel import parallel_for
from ir import indexing
from ir.indexing import Expr, index_error
from minitorch import config, ops
from minitorch.dtype import DType, from_numpy_dtype, get_dtype
from minitorch.errors import MinitorchError

if TYPE_CHECKING:  # types only: a graph loaded whole never imports the scheduler
    from ir.scheduler import FusedKernel

# void kernel(void **buffers, int64 start, int64 end)
_KERNEL_SIGNATURE = (None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_ERROR_SLOTS = 3  # (1, index, size) once an index is out of bounds


@functools.cache
def data_offset() -> int:
    """Where numpy's array struct keeps the data pointer, in bytes from the object's address
    ([Note: launching a kernel cheaply]): the first word after the header that holds it.
    Probed on first use, which only the fast launch makes."""
    probes = [np.empty(4), np.empty((2, 3), np.float32)]
    for offset in range(8, 64, 8):
        if all(_pointer_at(id(p) + offset).value == p.ctypes.data for p in probes):
            return offset
    raise MinitorchError("cannot find the data pointer in numpy's array struct")


_pointer_at = ctypes.c_void_p.from_address
_START = ctypes.c_int64(0)


def data_pointer(array: np.ndarray) -> int:
    """The address of `array`'s element (0, 0, ...): `array.ctypes.data`, or, with the fast
    launch (config.object_loader), the same read where numpy keeps it, ten times faster."""
    if not config.object_loader:
        return array.ctypes.data
    return _pointer_at(id(array) + data_offset()).value


class KernelShape(NamedTuple):
    """What launching a kernel needs of its FusedKernel: all a kernel loaded with its whole
    graph keeps of the loop IR ([Note: the compiled-graph cache] in
    minitorch/compile/graph_cache.py)."""

    name: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    ranges: tuple[int, ...]
    reduction_ranges: tuple[int, ...]


class LLVMKernel(CompiledKernel):
    """A kernel compiled for this CPU; calling it runs the machine code, on several threads
    when it is big (codegen/llvm/parallel.py)."""

    def __init__(
        self,
        kernel: FusedKernel | KernelShape,
        dtypes: dict[str, DType],
        jit: JitModule,
        sizes: tuple[str, ...] = (),
        source: Callable[[], str] | None = None,
        symbol: str | None = None,
    ) -> None:
        self.name = kernel.name
        self._source = source  # makes the kernel's IR text (None: the module's)
        self.sizes = sizes  # the size symbols it takes after (buffers, start, end)
        self._jit = jit
        symbol = symbol or kernel.name  # its name in the module ([Note: one module per graph])
        self._symbol = symbol
        self._shape = KernelShape(
            kernel.name,
            tuple(kernel.reads),
            tuple(kernel.writes),
            tuple(kernel.ranges),
            tuple(kernel.reduction_ranges),
        )
        signature = _KERNEL_SIGNATURE + (ctypes.c_int64,) * len(sizes)
        self._function = jit.function(symbol, *signature)
        self._buffers = kernel.reads + kernel.writes  # the order of the pointer array
        # the buffers' pointers, the error slot's address, the error slot
        self._pointers = ctypes.c_int64 * (len(self._buffers) + 1 + _ERROR_SLOTS)
        self._dtypes = tuple(dtypes[name].np for name in self._buffers)
        self._ranges = kernel.ranges  # ints, or Exprs over the size symbols
        self._reduction_ranges = kernel.reduction_ranges
        if not sizes:  # static sizes: the thread split is the same on every call
            self._outer, self._work = self._split({})
            # Called with ctypes objects, the same function costs half: no argument types to
            # convert by ([Note: launching a kernel cheaply]).
            self._untyped = jit.function(symbol, None)
            self._end = ctypes.c_int64(self._outer)

    @functools.cached_property
    def source(self) -> str:
        """The IR as generated: readable, one op per line. Made when first read: a kernel
        whose machine code came from the disk has never needed it ([Note: a key made before
        the IR])."""
        return self._jit.source if self._source is None else self._source()

    @property
    def optimized_source(self) -> str:
        """The IR after LLVM's O3 pipeline: vector types, unrolled loops, inlined math (of
        every kernel in its module)."""
        return self._jit.optimized_source

    def assembly(self) -> str:
        """The x86 (or other host) assembly the kernel became."""
        return self._jit.assembly()

    def __call__(self, buffers: dict[str, np.ndarray], sizes: dict[str, int] | None = None) -> None:
        """Run on `buffers`, laid out as the kernel was compiled for; `sizes` binds the size
        symbols (s0, ...) if the kernel takes any.

        NOTE: no written array may share memory with a read one: the kernel was compiled on
        that promise (`noalias`, see [Note: the LLVM kernel]), and checking it here would
        cost every launch.
        """
        arrays = arrays_in_order(self.name, self._buffers, self._dtypes, buffers)
        if self.sizes:
            sizes = sizes or {}
            if any(name not in sizes for name in self.sizes):
                raise MinitorchError(f"{self.name} needs the sizes {self.sizes}, got {sizes}")
            values = [sizes[name] for name in self.sizes]
            outer, work = self._split(sizes)
        else:
            values, outer, work = (), self._outer, self._work
        pointers = self._pointers()
        for k, array in enumerate(arrays):
            pointers[k] = data_pointer(array)
        error = len(arrays) + 1
        pointers[error - 1] = ctypes.addressof(pointers) + 8 * error

        def run(start: int, end: int) -> None:
            self._function(pointers, start, end, *values)

        parallel_for(run, outer, work)
        if pointers[error]:
            raise index_error(pointers[error + 1], pointers[error + 2])

    def call_code(self, arrays: dict[str, str], name: str) -> KernelCall:
        """The launch written out for the wrapper ([Note: launching a kernel cheaply]); with
        the extras off, the plain one ([Note: the plain launch])."""
        fast, threads = config.object_loader, config.thread_pool
        error = len(self._buffers) + 1
        lines = [f"pointers = {name}_pointers()  # fresh: threads never share one"]
        for k, buffer in enumerate(self._buffers):
            array = arrays[buffer]
            if fast:
                lines.append(f"pointers[{k}] = ___pointer_at(id({array}) + {data_offset()}).value")
            else:
                lines.append(f"pointers[{k}] = {array}.ctypes.data")
        lines.append(f"pointers[{error - 1}] = ___address_of(pointers) + {8 * error}")
        namespace = {
            name: self._function,
            f"{name}_pointers": self._pointers,
            "___address_of": ctypes.addressof,
            "___index_error": index_error,
        }
        if fast:
            namespace["___pointer_at"] = _pointer_at
        if threads:
            namespace["___parallel_for"] = parallel_for
        if self.sizes:
            symbols = ", ".join(self.sizes)
            outer = str(self._ranges[0]) if self._ranges else "1"
            work = " * ".join(f"({n})" for n in self._ranges + self._reduction_ranges) or "1"
            if threads:
                lines.append(
                    f"___parallel_for(lambda start, end: {name}(pointers, start, end, "
                    f"{symbols}), {outer}, {work})"
                )
            else:
                lines.append(f"{name}(pointers, 0, {outer}, {symbols})")
        elif not threads:  # the range is known, and every kernel runs on this thread
            lines.append(f"{name}(pointers, 0, {self._outer})")
        else:  # the range is known: little work runs here, untyped, at once
            here = f"{name}_untyped(pointers, ___start, {name}_end)"
            namespace |= {"___config": config, "___partial": functools.partial}
            if fast:
                namespace |= {
                    f"{name}_untyped": self._untyped,
                    f"{name}_end": self._end,
                    "___start": _START,
                }
            else:
                here = f"{name}(pointers, 0, {self._outer})"
            lines += [
                f"if {self._work} < ___config.parallel_threshold:",
                f"    {here}",
                "else:",
                f"    ___parallel_for(___partial({name}, pointers), {self._outer}, {self._work})",
            ]
        lines.append(f"if pointers[{error}]:")
        lines.append(f"    raise ___index_error(pointers[{error + 1}], pointers[{error + 2}])")
        return KernelCall(lines, namespace)

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
    parallel = True  # rows split across the thread pool (config.thread_pool) when there is work

    def compile_kernel(
        self, kernel: FusedKernel, dtypes: dict[str, DType], sizes: tuple[str, ...] = ()
    ) -> LLVMKernel:
        return self.compile_kernels([(kernel, dtypes)], sizes)[0]

    def compile_kernels(
        self, kernels: Sequence[tuple[FusedKernel, dict[str, DType]]], sizes: tuple[str, ...] = ()
    ) -> list[LLVMKernel]:
        """One graph's kernels, compiled as one module ([Note: one module per graph] in
        jit.py), or loaded from the disk without generating their IR ([Note: a key made
        before the IR])."""
        if not kernels:  # a graph of extern steps only
            return []

        @functools.cache
        def texts() -> tuple[str, ...]:
            from codegen.llvm.kernel import generate_kernel  # only on a miss, or to be read

            return tuple(str(generate_kernel(kernel, dtypes, sizes)) for kernel, dtypes in kernels)

        described = (
            generator_source() if config.disk_cache else "this process",  # (kept on disk)
            f"exact_trig: {config.exact_trig}",  # the one knob the generator reads
            *(describe(k, dtypes, sizes) for k, dtypes in kernels),
        )
        jit = compile_described(described, texts)
        return [
            LLVMKernel(
                kernel,
                dtypes,
                jit,
                sizes,
                lambda part=part: texts()[part],
                part_symbol(kernel.name, part, len(kernels)),
            )
            for part, (kernel, dtypes) in enumerate(kernels)
        ]

    def save_kernels(self, kernels: Sequence[CompiledKernel]) -> list[dict] | None:
        """Each kernel's shape, symbol and buffer dtypes, and its module's entry in the cache on
        disk; None for kernels that take sizes (only static graphs are kept whole)."""
        if any(
            not isinstance(k, LLVMKernel) or k.sizes or k._jit.disk_key is None for k in kernels
        ):
            return None
        host = list(host_description())
        return [
            {
                "shape": k._shape._asdict(),
                "symbol": k._symbol,
                "module": k._jit.disk_key,
                "dtypes": [from_numpy_dtype(d).name for d in k._dtypes],
                "host": host,
            }
            for k in kernels
        ]

    def load_kernels(self, saved: Sequence[dict]) -> list[LLVMKernel] | None:
        """The kernels again, their machine code loaded from the disk (one module loaded once);
        None if an entry is missing or was compiled on another host."""
        host = list(host_description())
        modules: dict[str, JitModule] = {}
        kernels = []
        for item in saved:
            key = item["module"]
            if item["host"] != host:
                return None
            if key not in modules:
                jit = jit_cache.module_on_disk(key)
                if jit is None:
                    return None
                modules[key] = jit
            shape = {
                name: tuple(v) if isinstance(v, list) else v for name, v in item["shape"].items()
            }
            kernel = KernelShape(**shape)
            dtypes = dict(
                zip(kernel.reads + kernel.writes, map(get_dtype, item["dtypes"]), strict=True)
            )
            kernels.append(LLVMKernel(kernel, dtypes, modules[key], (), None, item["symbol"]))
        return kernels

    def extern_kernel(self, op: object) -> Callable | None:
        """`ops.fused_attention` by the generated attention kernel (codegen/llvm/attention*.py)."""
        if op is ops.fused_attention and config.fused_attention:
            from codegen.llvm.attention_kernel import fused_attention

            return fused_attention
        return None

    def clear_cache(self) -> None:
        """Drop the JIT's compiled modules ([Note: the JIT's memory] in jit.py)."""
        jit_cache.clear_cache()


def _value(n: int | Expr, sizes: dict[str, int]) -> int:
    """A loop size for this call: an int as is, an Expr over the size symbols evaluated."""
    return n.evaluate(sizes) if isinstance(n, Expr) else n


# [Note: a key made before the IR]
# The kernel cache on disk is keyed by a module's IR text ([Note: the kernel cache on disk]),
# and making that text is most of a warm start: importing the generator (kernel.py, its ops
# and math, llvmlite.ir: ~10 ms) and running it (3 to 7 ms a graph). But the text is a
# function of the loop IR, so the loop IR can key the cache instead, and a process whose
# kernels are on the disk never generates IR. That is only sound if the key holds everything
# the generator reads, so it is written out in full, not chosen:
# - `describe`: the kernel as the loop IR prints it (ir/scheduler.py: every field of the
#   kernel and its loops, each node's dtype, ranges and reduction type, and each body as the
#   ops it calls with their arguments: what define-by-run bodies are, ir/printer.py), the
#   layout each node stores with, the dtype of every buffer and the size symbols. The tests
#   fail when a node class grows a field this does not print, or the printer an op
#   (tests/codegen/test_described_cache.py).
# - `generator_source`: the source of the generator and of what it runs (the loop IR's
#   package, this one, the dtypes), since a change there changes the text for the same key.
#   The generator reads one knob, config.exact_trig ([Note: plain trig] in mathlib.py), and
#   `compile_kernels` puts it in the key.
# - jit.compile_described adds the host and the compiler's source, as the text's key does.
def describe(kernel: FusedKernel, dtypes: dict[str, DType], sizes: tuple[str, ...]) -> str:
    """Everything `generate_kernel(kernel, dtypes, sizes)` reads, as text."""
    layouts = "\n".join(f"{node.name}: {node.layout}" for node in kernel.nodes)
    names = ", ".join(f"{name}: {dtype.name}" for name, dtype in sorted(dtypes.items()))
    return f"{kernel}\nstores: {layouts}\ndtypes: {names}\nsizes: {sizes}"


@functools.cache
def generator_source() -> str:
    """The SHA-256 of the source files a kernel's IR text is made by (kept on the disk under
    their names, sizes and times: disk_cache.source_digest)."""
    return disk_cache.source_digest(_generator_files())


def _generator_files() -> list[Path]:
    """The loop IR's package, this one, and the dtypes: what generates a kernel's IR."""
    packages = [Path(indexing.__file__).parent, Path(__file__).parent]
    files = [
        Path(entry.path)
        for folder in packages
        for entry in os.scandir(folder)
        if entry.name.endswith(".py")
    ]
    return sorted(files) + [Path(sys.modules[DType.__module__].__file__)]
