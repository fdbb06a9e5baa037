"""The reference interpreter as a backend: the smallest correct one, and the definition.

    backend = InterpreterBackend()
    compiled = backend.compile_kernel(kernel, program.dtypes())
    compiled({"x": x, "buf0": out})       # ir/interpreter.py's run_kernel, nothing else

It "compiles" a kernel into a call of `ir.interpreter.run_kernel`, so it is slow and always
right: `minitorch.compile(f, backend="interpreter")` runs a whole model through the loop IR
with numpy as the machine, which is how to tell a lowering bug from a code generation bug.
It is also the first answer to [Note: writing a backend] in codegen/backend.py.
"""

from __future__ import annotations

import numpy as np

from codegen.backend import Backend, CompiledKernel
from ir.interpreter import run_kernel
from ir.scheduler import FusedKernel
from minitorch.dtype import DType


class InterpretedKernel(CompiledKernel):
    """A kernel run by the reference interpreter; its `source` is the loop IR itself."""

    def __init__(self, kernel: FusedKernel) -> None:
        self.name = kernel.name
        self.source = str(kernel)
        self.kernel = kernel

    def __call__(self, buffers: dict[str, np.ndarray], sizes: dict[str, int] | None = None) -> None:
        run_kernel(self.kernel, buffers, sizes)


class InterpreterBackend(Backend):
    """Runs every kernel through ir/interpreter.py."""

    name = "interpreter"
    dtypes = frozenset({"float32", "float64", "int32", "int64", "bool"})
    symbolic_sizes = True  # run_kernel evaluates ranges and indices at the sizes it is given

    def compile_kernel(
        self, kernel: FusedKernel, dtypes: dict[str, DType], sizes: tuple[str, ...] = ()
    ) -> InterpretedKernel:
        return InterpretedKernel(kernel)
