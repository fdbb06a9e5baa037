"""A loop-IR op is one entry of ir/op_table.py's LOOP_OPS ([Note: the loop-IR ops]).

Adding one touches only the table: the tests below add `cube` and `hypot` at test time (and
monkeypatch removes them after), and a program using them prints, runs in the interpreter, and
compiles with LLVM and the numpy source backend, which know neither and run their
decompositions. And every backend lowers or decomposes every op: a (backend, op) pair with
neither is named.
"""

import numpy as np
import pytest
from codegen_testing import computed, input_buffer, load, run_compiled, unary_program

from codegen.cuda.kernel import CudaOps
from codegen.llvm.ops import LLVMOps
from codegen.numpy_source import NumpySourceBackend, NumpySourceHandler
from ir.interpreter import NumpyHandler, run_reference
from ir.nodes import LoweredProgram
from ir.op_table import LOOP_OPS, LoopOp, floats, same
from ir.ops_handler import missing_ops, ops
from ir.printer import format_inner_fn
from ir.scheduler import schedule
from minitorch import dtype as dt
from minitorch.errors import CompileError

# backend -> the class of its ops handler
HANDLERS = {
    "interpreter": NumpyHandler,
    "llvm": LLVMOps,
    "cuda": CudaOps,
    "numpy": NumpySourceHandler,
}


def unlowered() -> list[tuple[str, str]]:
    """Every (backend, op) whose handler neither lowers the op nor can decompose it."""
    return [(backend, op) for backend, cls in HANDLERS.items() for op in missing_ops(cls)]


def _cube(h, a):
    return h.mul(h.mul(a, a), a)


def _hypot(h, a, b):
    return h.sqrt(h.add(h.mul(a, a), h.mul(b, b)))


CUBE = LoopOp("cube", 1, same, lambda a: a * a * a, _cube)
HYPOT = LoopOp("hypot", 2, floats, np.hypot, _hypot)


@pytest.fixture
def new_ops(monkeypatch):
    """cube and hypot in the table, for one test: the only change adding an op needs."""
    monkeypatch.setitem(LOOP_OPS, "cube", CUBE)
    monkeypatch.setitem(LOOP_OPS, "hypot", HYPOT)


def run_numpy_source(program: LoweredProgram, inputs: list[np.ndarray]):
    """(outputs, source) of a one-kernel program compiled by the numpy source backend."""
    (kernel,) = schedule(program)
    compiled = NumpySourceBackend().compile_kernel(kernel, program.dtypes())
    memory = {b.name: array for b, array in zip(program.inputs, inputs, strict=True)}
    memory["buf0"] = np.empty_like(inputs[0])
    compiled(memory)
    return [memory["buf0"]], compiled.source


def test_an_op_added_to_the_table_prints_runs_and_compiles(new_ops):
    x = np.linspace(-3, 3, 37, dtype=np.float32)
    program = unary_program(ops.cube, x)
    printed = format_inner_fn(program.buffers[0].data.inner_fn, (37,))
    assert printed.splitlines()[2:] == [
        "    tmp0 = ops.load('x', i0)",
        "    tmp1 = ops.cube(tmp0)",
        "    return tmp1",
    ]

    (want,) = run_reference(program, None, [x])
    np.testing.assert_array_equal(want, x * x * x)
    (got,), (kernel,) = run_compiled(program, [x])
    np.testing.assert_array_equal(got, want)
    assert "fmul" in kernel.source and "cube" not in kernel.source  # its decomposition
    (got,), source = run_numpy_source(program, [x])
    np.testing.assert_array_equal(got, want)
    assert "tmp1 = tmp0 * tmp0" in source


def test_a_binary_op_added_to_the_table(new_ops):
    a = np.linspace(-30, 30, 61)
    b = np.linspace(4, -5, 61)
    ba, bb = input_buffer("a", a), input_buffer("b", b)
    body = lambda index: ops.hypot(load(ba, index), load(bb, index))  # noqa: E731
    program = LoweredProgram((ba, bb), (computed("buf0", dt.float64, (61,), body),), ("buf0",))
    (want,) = run_reference(program, None, [a, b])
    np.testing.assert_array_equal(want, np.hypot(a, b))
    (got,), _ = run_compiled(program, [a, b])
    np.testing.assert_allclose(got, want, rtol=1e-14)  # sqrt(a*a + b*b): a few roundings
    assert "ops.hypot(tmp0, tmp1)" in format_inner_fn(body, (61,))


def test_the_new_op_is_checked_by_its_dtype_rule(new_ops):
    a = np.arange(4, dtype=np.int64)
    ba = input_buffer("a", a)
    body = lambda index: ops.hypot(load(ba, index), load(ba, index))  # noqa: E731
    program = LoweredProgram((ba,), (computed("buf0", dt.float64, (4,), body),), ("buf0",))
    with pytest.raises(CompileError, match=r"ops.hypot of int64: convert to a float"):
        run_reference(program, None, [a])


def test_the_new_op_is_gone_after_the_test():
    assert "cube" not in LOOP_OPS and "hypot" not in LOOP_OPS


def test_every_backend_lowers_or_decomposes_every_op():
    assert unlowered() == []


def test_an_op_with_neither_names_each_backend_that_lacks_it(monkeypatch):
    monkeypatch.setitem(LOOP_OPS, "i0", LoopOp("i0", 1, floats, np.i0))  # no decomposition
    assert unlowered() == [("llvm", "i0"), ("cuda", "i0"), ("numpy", "i0")]


def test_a_decomposition_into_an_op_a_backend_lacks_does_not_count(monkeypatch):
    monkeypatch.setitem(LOOP_OPS, "i0", LoopOp("i0", 1, floats, np.i0))
    monkeypatch.setitem(LOOP_OPS, "i0_squared", LoopOp("i0_squared", 1, floats, np.i0, _i0_sq))
    assert ("llvm", "i0_squared") in unlowered()


def _i0_sq(h, a):
    return h.square(h.i0(a))
