"""The Backend protocol: what a code generator implements, and what it says it can do.

[Note: writing a backend]
A backend turns one `FusedKernel` (ir/scheduler.py) into something that runs. The kernel is a
loop nest over `ranges` (and, for reductions, an inner nest over `reduction_ranges`) whose
nodes each compute one value per iteration through `ops`; ir/interpreter.py says exactly what
it means, and a backend is correct when it agrees with that interpreter. The conformance suite
grades that: `pytest tests/conformance --backend NAME`.

A backend is a small class: three capabilities and one method.

    class MyBackend(Backend):
        name = "mine"                      # how minitorch.compile(f, backend="mine") finds it
        dtypes = frozenset({"float32", "float64", "bool"})   # element types it compiles
        symbolic_sizes = False             # whether kernels may take sizes as arguments

        def compile_kernel(self, kernel, dtypes, sizes=()):
            ...                            # -> a CompiledKernel

A backend that caches compiled code overrides `clear_cache()` to drop it; the driver calls
it on `minitorch._dynamo.reset()`.

The compiler reads the capabilities: an op on a dtype the backend does not list runs as an
extern step (its eager kernel, between compiled segments) instead of sending the whole frame
back to eager mode; a backend without `symbolic_sizes` gets one compile per input shape where
capture left a dim dynamic. Which loop-IR ops a backend implements is its ops handler's
business: ir/ops_handler.py lists them all, and the ones that are compositions of others have
default decompositions there, so a backend only has to implement the core ones.

To write one (C source, WebAssembly, a GPU):

1. Write an ops handler (a subclass of ir.ops_handler.OpsHandler) whose values are *your*
   values: C expression strings, LLVM registers, ... Its `load(name, index)` turns the
   symbolic flat index into your integer arithmetic with `index.evaluate(env)`, where `env`
   maps 'i0', 'r0', ... (and the size symbols 's0', ... when `sizes` is not empty) to your
   loop counters (any type with + - * // % works).
2. Emit the loop nest over `kernel.ranges`, and inside it each of `kernel.loops` in order
   (a loop over `loop.ranges`, or straight code when they are ()); in it run each node's
   body under your handler, at the index the kernel runs it (`node_index`):
       with set_ops_handler(handler):
           value = node.data.inner_fn(node_index(kernel.ranges, loop.ranges, node))
   Remember each node's value: a later node's `load` of it (always at the same index; the
   scheduler guarantees that) must return the register, not read memory; a reduction's
   value exists once its loop has ended, an element's until then (a later loop's load of
   one reads memory). Store only the nodes in `kernel.writes`, at `store_index(node, index)`.
3. Return a `CompiledKernel`: its `source` is what the course prints, and calling it with a
   dict of arrays (every name in `reads` and `writes`) fills the `writes` in place. That is
   all a correct backend needs; a fast one also writes how the generated wrapper calls it
   (`call_code`), so that a launch costs no more than the machine code needs.
4. Register it, `minitorch._dynamo.register_backend("mine", MyBackend())`, and grade it with
   the conformance suite (tests/conformance/README.md: a plugin module registers it there).

A flat index counts elements from the array's element (0, 0, ...), and may be negative for an
array with negative strides: the address is `data pointer + index * itemsize`. A size symbol
always stands for a size of at least 2 (dims of size 0 or 1 are compiled as numbers), which a
backend may tell its optimizer, as the LLVM one does.

codegen/numpy_source.py is the small worked example (Python source over numpy, compiled with
`exec`); codegen/llvm/backend.py is the fast one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ir.policy import Capabilities
from minitorch.errors import DTypeError, MinitorchError

if TYPE_CHECKING:
    import numpy as np

    from ir.scheduler import FusedKernel
    from minitorch.dtype import DType


@dataclass
class KernelCall:
    """How the generated wrapper runs one kernel: lines of Python, and the objects they name."""

    lines: list[str]  # statements, in the wrapper's function body
    namespace: dict[str, Any] = field(default_factory=dict)  # name -> object the lines use


class CompiledKernel(ABC):
    """One kernel, compiled: call it with the arrays it reads and writes."""

    name: str  # the kernel's name, 'kernel0'
    source: str  # the generated code the course shows: LLVM IR text, C, PTX, ...

    @abstractmethod
    def __call__(self, buffers: dict[str, np.ndarray], sizes: dict[str, int] | None = None) -> None:
        """Run the kernel: read `buffers[name]` for each read, fill each write in place.

        `sizes` binds the size symbols the kernel was compiled with ({'s0': 7}); None when it
        was compiled for static sizes.
        """

    def call_code(self, arrays: dict[str, str], name: str) -> KernelCall:
        """The Python that runs this kernel in the generated wrapper (minitorch/compile/
        output_code.py). `arrays` maps each buffer the kernel reads or writes to the wrapper's
        local variable holding its array; the wrapper's local `sizes` holds the size symbols'
        values ({} for static sizes), and each symbol is a local too (`s0`). `name` is free to
        bind this kernel to. The default calls the kernel with the dict `__call__` takes.
        """
        items = ", ".join(f"{buffer!r}: {local}" for buffer, local in arrays.items())
        return KernelCall([f"{name}({{{items}}}, sizes)"], {name: self})


def arrays_in_order(
    kernel: str, names: Sequence[str], dtypes: Sequence[np.dtype], buffers: dict[str, Any]
) -> list[Any]:
    """`buffers[name]` for each of `names`, checked: present, and of its dtype (a kernel reads
    memory as the dtype it was compiled for); `kernel` names the kernel in the error."""
    arrays = []
    for name, dtype in zip(names, dtypes, strict=True):
        if name not in buffers:
            raise MinitorchError(f"{kernel} needs the buffer {name!r}")
        if buffers[name].dtype != dtype:
            raise DTypeError(
                f"{kernel}: buffer {name!r} is {buffers[name].dtype}, expected {dtype}"
            )
        arrays.append(buffers[name])
    return arrays


class Backend(ABC):
    """A code generator for one target, and what it can compile."""

    name: ClassVar[str]  # 'llvm', 'c', 'interpreter': its name in minitorch.compile(backend=)
    device: ClassVar[str] = "cpu"  # where the arrays its kernels read and write live
    dtypes: ClassVar[frozenset[str]] = frozenset({"float32", "float64", "bool"})
    symbolic_sizes: ClassVar[bool] = False  # kernels may take sizes s0, s1, ... as arguments
    parallel: ClassVar[bool] = False  # its kernels' rows run on many threads at once

    def capabilities(self) -> Capabilities:
        """What a fusion policy may weigh about this target ([Note: fusion policies])."""
        return Capabilities(self.name, self.device, self.parallel)

    @abstractmethod
    def compile_kernel(
        self, kernel: FusedKernel, dtypes: dict[str, DType], sizes: tuple[str, ...] = ()
    ) -> CompiledKernel:
        """Generate and compile `kernel`; `dtypes` gives the dtype of every buffer it touches.

        `sizes` names the size symbols ('s0', 's1', ...) that the kernel's ranges and index
        expressions may mention; it is empty unless the backend has `symbolic_sizes`. The
        compiled kernel is then called with their values.
        """

    def compile_kernels(
        self, kernels: Sequence[tuple[FusedKernel, dict[str, DType]]], sizes: tuple[str, ...] = ()
    ) -> list[CompiledKernel]:
        """Every kernel of one graph, each with its dtypes: `compile_kernel` on each, unless a
        backend compiles them faster together (the LLVM one links them into one module)."""
        return [self.compile_kernel(kernel, dtypes, sizes) for kernel, dtypes in kernels]

    def clear_cache(self) -> None:
        """Forget the kernels compiled so far (`minitorch._dynamo.reset()` calls this); a
        backend that caches nothing does nothing. Kernels still in use must keep working."""
        return None  # NOTE: not abstract: most backends cache nothing

    def save_kernels(self, kernels: Sequence[CompiledKernel]) -> list[dict] | None:
        """JSON-able data from which `load_kernels` makes `kernels` again in another process,
        without their loop IR; None: they cannot be kept (the default), and a graph of them is
        compiled anew in each process ([Note: the compiled-graph cache] in
        minitorch/compile/graph_cache.py)."""
        return None  # NOTE: not abstract: a backend need not keep whole graphs

    def load_kernels(self, saved: Sequence[dict]) -> list[CompiledKernel] | None:
        """The kernels `saved` (from `save_kernels`) describes, or None if they cannot be had
        here (their machine code is gone, or was made for another host): the graph is then
        compiled anew."""
        return None

    def extern_kernel(self, op: object) -> Callable[..., Any] | None:
        """A kernel of this backend's own for an extern step of `op` (an op of the table),
        called with the step's arguments in place of the op's eager kernel; None (the
        default): the eager kernel runs. The LLVM backend runs `ops.fused_attention` so."""
        return None

    def supports(self, dtype: DType) -> bool:
        """Whether kernels over `dtype` elements compile here."""
        return dtype.name in self.dtypes

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
