"""Assignment 5, `backend`: a CPU backend of your own, from this file alone.

Copy this file anywhere (my_backend.py), write `compile_kernel`, and grade it:

    python -m minitorch.course grade backend --plugin my_backend.py

The grader runs the backend conformance suite (tests/conformance, one part per file) on the
backend, then trains an MLP with `minitorch.compile(model, backend="mine")`.

Read first: docs/06-codegen.md (and its "Assignment: write a second backend"), [Note: writing
a backend] in codegen/backend.py, ir/interpreter.py (`run_kernel`: what a kernel means) and
ir/printer.py (`PrintingHandler`: an ops handler whose values are text). codegen/numpy_source.py
is the worked answer for numpy: write yours before you read it (C through `cc` and ctypes is
the other road).
"""

from __future__ import annotations

from codegen.backend import Backend, CompiledKernel  # noqa: F401 - what you return
from codegen.registry import register_backend


class MyBackend(Backend):
    name = "mine"  # minitorch.compile(f, backend="mine")
    dtypes = frozenset({"float32", "float64", "int32", "int64", "bool"})  # what it compiles
    symbolic_sizes = False  # True once your kernels take the size symbols as arguments

    def compile_kernel(self, kernel, dtypes, sizes=()):
        """One FusedKernel (ir/scheduler.py) -> a CompiledKernel whose __call__(buffers,
        sizes) fills kernel.writes from kernel.reads."""
        raise NotImplementedError(
            f"TODO compile_kernel of {kernel.name} (minitorch/course/starters/backend.py): "
            "1. an ops handler (ir/ops_handler.py) whose values are your expressions; "
            "2. the loop nest over kernel.ranges, each node of kernel.loops run under it; "
            "3. a CompiledKernel that runs the generated code on buffers of any strides "
            "(see [Note: writing a backend] in codegen/backend.py)"
        )


register_backend(MyBackend())
