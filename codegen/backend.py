"""The interface between the loop IR and a code generator: what a new target implements.

[Note: writing a backend]
A backend turns one `FusedKernel` (ir/scheduler.py) into something that runs. The kernel is a
loop nest over `ranges` (and, for reductions, an inner nest over `reduction_ranges`) whose
nodes each compute one value per iteration through `ops`; ir/interpreter.py says exactly what
it means, and a backend is correct when it agrees with that interpreter.

To add a target (C source, WebAssembly, a GPU):

1. Write an ops handler (a subclass of ir.ops_handler.OpsHandler) whose values are *your*
   values: C expression strings, LLVM registers, ... Its `load(name, index)` turns the
   symbolic flat index into your integer arithmetic with `index.evaluate(env)`, where `env`
   maps 'i0', 'r0', ... to your loop counters (any type with + - * // % works).
2. Emit the loop nest, and inside it run each node's body under your handler:
       with set_ops_handler(handler):
           value = node.data.inner_fn(index)
   Remember each node's value: a later node's `load` of it (always at the same index; the
   scheduler guarantees that) must return the register, not read memory. Store only the
   nodes in `kernel.writes`, at `node.layout.indexer()(index)`.
3. Return a `CompiledKernel`: its `source` is what the course prints, and calling it with a
   dict of arrays (every name in `reads` and `writes`) fills the `writes` in place.
4. Test it the way tests/codegen/ tests the LLVM backend: build kernels, run them through your
   backend and through ir/interpreter.py, and compare.

A flat index counts elements from the array's element (0, 0, ...), and may be negative for an
array with negative strides: the address is `data pointer + index * itemsize`.

codegen/llvm/backend.py is the worked example.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from ir.scheduler import FusedKernel
    from minitorch.dtype import DType


class CompiledKernel(ABC):
    """One kernel, compiled: call it with the arrays it reads and writes."""

    name: str  # the kernel's name, 'kernel0'
    source: str  # the generated code the course shows: LLVM IR text, PTX, C, ...

    @abstractmethod
    def __call__(self, buffers: dict[str, np.ndarray]) -> None:
        """Run the kernel: read `buffers[name]` for each read, fill each write in place."""


class Backend(ABC):
    """A code generator for one target."""

    name: str  # 'llvm', 'cuda', ...

    @abstractmethod
    def compile_kernel(self, kernel: FusedKernel, dtypes: dict[str, DType]) -> CompiledKernel:
        """Generate and compile `kernel`; `dtypes` gives the dtype of every buffer it touches."""
