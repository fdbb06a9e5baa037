"""The Backend interface, through the LLVM backend and a minimal student backend."""

import numpy as np
import pytest
from codegen_testing import input_buffer, load, unary_program

import minitorch.dtype as dt
from codegen.backend import Backend, CompiledKernel
from codegen.llvm.backend import LLVMBackend, LLVMKernel
from codegen.llvm.kernel import SMALL_WORK
from ir.interpreter import run_kernel
from ir.nodes import ComputedBuffer, Layout, LoweredProgram, Reduction
from ir.ops_handler import ops
from ir.scheduler import schedule


def test_llvm_backend_implements_the_interface():
    x = np.linspace(-1, 1, 50)
    (kernel,) = schedule(unary_program(ops.exp, x))
    compiled = LLVMBackend().compile_kernel(kernel, {"x": dt.float64, "buf0": dt.float64})
    assert isinstance(LLVMBackend(), Backend) and isinstance(compiled, CompiledKernel)
    assert isinstance(compiled, LLVMKernel) and compiled.name == "kernel0"
    assert "define void" in compiled.source and "x double>" not in compiled.source
    assert "x double>" in compiled.optimized_source  # the optimizer vectorized our scalar loop
    out = np.empty(50)
    compiled({"x": x, "buf0": out})
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-15)


def test_an_incomplete_backend_cannot_be_instantiated():
    class Half(Backend):
        name = "half"

    with pytest.raises(TypeError, match="compile_kernel"):
        Half()


class InterpretingBackend(Backend):
    """The smallest correct backend: run the reference interpreter (what a student starts from)."""

    name = "interpreter"

    def compile_kernel(self, kernel, dtypes):
        class Interpreted(CompiledKernel):
            name = kernel.name
            source = str(kernel)

            def __call__(self, buffers):
                run_kernel(kernel, buffers)

        return Interpreted()


@pytest.mark.parametrize("backend", [LLVMBackend(), InterpretingBackend()], ids=lambda b: b.name)
def test_backends_agree_on_a_reduction(backend):
    x = np.random.default_rng(0).standard_normal((6, 70)).astype(np.float32)
    bx = input_buffer("x", x)
    data = Reduction(dt.float32, (6,), (70,), "sum", lambda i, r: ops.exp(load(bx, (i[0], r[0]))))
    node = ComputedBuffer("buf0", Layout.contiguous((6,), dt.float32), data)
    (kernel,) = schedule(LoweredProgram((bx,), (node,), ("buf0",)))
    out = np.empty(6, np.float32)
    backend.compile_kernel(kernel, {"x": dt.float32, "buf0": dt.float32})({"x": x, "buf0": out})
    np.testing.assert_allclose(out, np.exp(x).sum(axis=1), rtol=1e-5)


def test_kernels_of_one_graph_compile_as_one_module_and_run_apart():
    # Two segments' kernels, both named kernel0: one module, each run by its own symbol.
    x = np.linspace(-1, 1, 50)
    programs = [unary_program(op, x) for op in (ops.exp, ops.sin)]
    kernels = [(k, {"x": dt.float64, "buf0": dt.float64}) for p in programs for k in schedule(p)]
    assert [k.name for k, _ in kernels] == ["kernel0", "kernel0"]
    exp, sin = LLVMBackend().compile_kernels(kernels)
    assert exp._jit is sin._jit  # one module, one object file, one engine
    assert exp.source.count("define void") == 1 and "minitorch.sin" not in exp.source
    for compiled, expected in ((exp, np.exp(x)), (sin, np.sin(x))):
        out = np.empty(50)
        compiled({"x": x, "buf0": out})
        np.testing.assert_allclose(out, expected, rtol=1e-15)
    assert LLVMBackend().compile_kernels([]) == []


def test_a_small_pointwise_kernel_compiles_for_size_and_agrees_with_numpy():
    # [Note: small kernels compile for size]: optsize on small pointwise kernels only.
    x = np.linspace(-3, 3, 1000)
    (small,) = schedule(unary_program(ops.exp, x))
    compiled = LLVMBackend().compile_kernel(small, {"x": dt.float64, "buf0": dt.float64})
    assert "optsize" in compiled.source
    out = np.empty(1000)
    compiled({"x": x, "buf0": out})
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-15)
    big = np.zeros(SMALL_WORK + 1)
    (kernel,) = schedule(unary_program(ops.exp, big))
    source = LLVMBackend().compile_kernel(kernel, {"x": dt.float64, "buf0": dt.float64}).source
    assert "optsize" not in source
