"""Helpers for the codegen tests: build small loop-IR programs and run them compiled.

program = pointwise_program(lambda x: ops.sin(x), np.float32, n=1000)
compiled, expected = run_both(program, [x])    # LLVM vs ir/interpreter.py
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from codegen.llvm.backend import LLVMBackend, LLVMKernel
from ir.indexing import Expr
from ir.interpreter import run_reference
from ir.memory import allocate
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Pointwise
from ir.ops_handler import ops
from ir.scheduler import schedule
from minitorch.dtype import DType, from_numpy_dtype

BACKEND = LLVMBackend()


def input_buffer(name: str, array: np.ndarray) -> InputBuffer:
    """An InputBuffer with `array`'s shape, strides (in elements, any sign) and dtype."""
    stride = tuple(s // array.itemsize for s in array.strides)
    return InputBuffer(name, Layout(array.shape, stride, from_numpy_dtype(array.dtype)))


def load(buffer: InputBuffer | ComputedBuffer, index: Sequence[Expr]):
    """ops.load of `buffer`'s element `index`, through its layout."""
    return ops.load(buffer.name, buffer.layout.indexer()(tuple(index)))


def computed(name: str, dtype: DType, ranges: tuple[int, ...], inner_fn) -> ComputedBuffer:
    """A Pointwise ComputedBuffer with a contiguous layout."""
    return ComputedBuffer(
        name, Layout.contiguous(ranges, dtype), Pointwise(dtype, ranges, inner_fn)
    )


def unary_program(op: Callable, array: np.ndarray) -> LoweredProgram:
    """out[i] = op(x[i]) over a 1-d array."""
    x = input_buffer("x", array)
    dtype = x.layout.dtype
    out = computed("buf0", dtype, array.shape, lambda index: op(load(x, index)))
    return LoweredProgram((x,), (out,), ("buf0",))


def run_compiled(
    program: LoweredProgram, inputs: Sequence[np.ndarray], fuse: bool = True
) -> tuple[list[np.ndarray], list[LLVMKernel]]:
    """Run every kernel of `program` through the LLVM backend; gives (outputs, kernels)."""
    kernels = schedule(program, fuse=fuse)
    memory = {buffer.name: array for buffer, array in zip(program.inputs, inputs, strict=True)}
    memory.update(allocate(program, [name for k in kernels for name in k.writes]))
    compiled = [BACKEND.compile_kernel(kernel, program.dtypes()) for kernel in kernels]
    for kernel in compiled:
        kernel(memory)
    return [memory[name] for name in program.outputs], compiled


def run_both(
    program: LoweredProgram, inputs: Sequence[np.ndarray]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(compiled outputs, reference-interpreter outputs) of `program` on `inputs`."""
    compiled, _ = run_compiled(program, inputs)
    expected = run_reference(program, schedule(program), inputs)
    return compiled, expected


def compile_unary(op: Callable, dtype: type, n: int) -> Callable[[np.ndarray], np.ndarray]:
    """A compiled elementwise function f(x) = op(x) for 1-d arrays of up to n elements."""
    program = unary_program(op, np.zeros(n, dtype))
    (kernel,) = schedule(program)
    compiled = BACKEND.compile_kernel(kernel, program.dtypes())

    def run(x: np.ndarray) -> np.ndarray:
        padded = np.zeros(n, dtype)  # the kernel's loop always runs over n elements
        padded[: x.size] = x
        out = np.empty_like(padded)
        compiled({"x": padded, "buf0": out})
        return out[: x.size]

    return run


def ulp_error(got: np.ndarray, x: np.ndarray, reference: Callable) -> float:
    """The largest error of `got` in units in the last place of the exact answer's type.

    The reference runs in long double (64-bit mantissa on x86), so it is exact to well under
    a thousandth of a float64 ulp. Where the reference is not finite, got must equal it.
    """
    exact = reference(x.astype(np.longdouble))
    finite = np.isfinite(exact)
    assert np.array_equal(got[~finite], exact[~finite].astype(got.dtype), equal_nan=True)
    spacing = np.spacing(np.abs(exact[finite]).astype(got.dtype)).astype(np.longdouble)
    errors = np.abs(got[finite].astype(np.longdouble) - exact[finite]) / spacing
    return float(errors.max()) if errors.size else 0.0
