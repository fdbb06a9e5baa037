"""The numpy source backend (codegen/numpy_source.py) against the reference interpreter and numpy.

Kernels come from real programs: a minitorch function traced by make_fx, lowered and
scheduled, then run kernel by kernel through the backend and through ir/interpreter.py.
"""

from __future__ import annotations

import re
import traceback

import numpy as np
import pytest

import codegen.numpy_source
import minitorch
import minitorch.dtype as dt
from codegen.backend import Backend, CompiledKernel
from codegen.numpy_source import NumpySourceBackend, NumpySourceKernel
from codegen.registry import get_backend
from ir.interpreter import run_reference
from ir.lowering import lower_graph
from ir.memory import allocate
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Reduction
from ir.ops_handler import ops
from ir.scheduler import FusedKernel, schedule
from minitorch.compile.shapes import SizeBinding
from minitorch.compile.symbolic_sizes import compile_symbolic
from minitorch.errors import CompileError
from tracer.aot import make_fx
from tracer.fx import symbolic_trace

BACKEND = NumpySourceBackend()


def trace(fn, *arrays: np.ndarray) -> tuple[LoweredProgram, list[FusedKernel]]:
    """`fn` over tensors of `arrays` (strides included), lowered and scheduled."""

    def as_tuple(*args):
        out = fn(*args)
        return out if isinstance(out, tuple) else (out,)

    gm = make_fx(as_tuple)(*(minitorch.from_numpy(a) for a in arrays))
    program = lower_graph(gm.graph)
    return program, schedule(program)


def run_numpy_source(
    program: LoweredProgram, kernels: list[FusedKernel], arrays: tuple[np.ndarray, ...]
) -> list[np.ndarray]:
    """Every kernel compiled by the numpy source backend and run in order; gives the outputs."""
    memory = {buffer.name: array for buffer, array in zip(program.inputs, arrays, strict=True)}
    memory.update(allocate(program, [name for k in kernels for name in k.writes]))
    for kernel in kernels:
        BACKEND.compile_kernel(kernel, program.dtypes())(memory)
    return [memory[name] for name in program.outputs]


def check(fn, *arrays: np.ndarray, tol: float = 1e-6) -> list[FusedKernel]:
    """fn through the backend equals the reference interpreter and eager mode; gives the kernels."""
    program, kernels = trace(fn, *arrays)
    got = run_numpy_source(program, kernels, arrays)
    reference = run_reference(program, kernels, arrays)
    eager = fn(*(minitorch.from_numpy(a) for a in arrays))
    eager = eager if isinstance(eager, tuple) else (eager,)
    for actual, expected, e in zip(got, reference, eager, strict=True):
        assert actual.dtype == expected.dtype == e.numpy().dtype
        assert actual.shape == expected.shape == e.shape
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)
        np.testing.assert_allclose(actual, e.numpy(), rtol=tol, atol=tol)
    return kernels


def uniform(*shape: int, dtype=np.float32, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


# ---- the backend and its source ------------------------------------------------------------


def test_it_is_a_registered_backend_that_takes_sizes():
    backend = get_backend("numpy")
    assert isinstance(backend, NumpySourceBackend) and isinstance(backend, Backend)
    assert backend.name == "numpy" and backend.symbolic_sizes
    assert all(backend.supports(d) for d in (dt.float32, dt.float64, dt.int32, dt.int64, dt.bool_))


def test_the_source_is_the_example_in_the_note():
    note = codegen.numpy_source.__doc__
    example = re.search(r"\n\n(    def kernel0.*?)\n\n", note, flags=re.S).group(1)
    (kernel,) = trace(lambda x: (x.sin() * 2).sum(1), uniform(3, 4))[1]
    compiled = BACKEND.compile_kernel(kernel, {})
    assert isinstance(compiled, CompiledKernel) and compiled.name == "kernel0"
    assert compiled.source == "\n".join(line[4:] for line in example.splitlines()) + "\n"


def test_an_error_in_the_generated_code_points_at_its_line():
    (kernel,) = trace(lambda x: x.sin(), uniform(4))[1]
    compiled = BACKEND.compile_kernel(kernel, {})
    with pytest.raises(KeyError, match="buf0"):
        compiled({"arg0_1": uniform(4)})  # no buf0 to write
    with pytest.raises(IndexError) as error:
        compiled({"arg0_1": uniform(2), "buf0": np.empty(4, np.float32)})  # x is too short
    shown = "".join(traceback.format_exception(error.value))
    assert "tmp0 = arg0_1[arg0_1_start + i0]" in shown


# ---- pointwise ---------------------------------------------------------------------------


def arithmetic(x, y):
    return (x * y + 1.0) / (y.exp() + 2.0) - x.abs().log() + -y


def transcendental(x, y):
    return x.sin() * x.cos() + x.tanh() + x.sigmoid() * y.erf()


def powers(x, y):
    return x**3 + x.abs() ** 0.5 + x**-1 + 2.0**y


def selection(x, y):
    picked = minitorch.where(x > y, x, y * 2.0) + minitorch.where(y <= 0.5, 1.0, y)
    return picked * minitorch.maximum(x, y) - minitorch.minimum(x, y) + minitorch.relu(x)


def comparisons(x, y):
    return x == y, x != y, x < y, x <= y, (x < 0).to(x.dtype) + y


POINTWISE = [arithmetic, transcendental, powers, selection, comparisons]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", POINTWISE, ids=[f.__name__ for f in POINTWISE])
def test_pointwise_ops(fn, dtype):
    x, y = uniform(64, dtype=dtype, seed=1), uniform(64, dtype=dtype, seed=2)
    y[:8] = x[:8]  # some ties for == and <=
    (kernel,) = check(fn, x, y, tol=1e-6 if dtype is np.float32 else 1e-12)
    assert len(kernel.nodes) >= 1


def test_integer_and_bool_dtypes():
    x, y = np.arange(12).reshape(3, 4), np.arange(4) - 2
    check(lambda x, y: (x + y * 3, x * y < y, x.sum(0), x.to(minitorch.float32) / 2), x, y)
    check(lambda x, y: (x - y, x.sum(1)), x.astype(np.int32), y.astype(np.int32))
    mask, f = np.array([True, False, True, True]), uniform(4)
    check(lambda m, f: (minitorch.where(m, f, 0.0), m.to(minitorch.float32) + f), mask, f)


@pytest.mark.filterwarnings("ignore:.*encountered in log:RuntimeWarning")  # eager's warnings
def test_inf_and_nan_constants_and_results():
    x = np.array([0.0, 1.0, -1.0, np.inf, np.nan], np.float32)
    check(lambda x: (x.log(), x.clamp(max=float("inf")), x + float("nan")), x)


@pytest.mark.parametrize("shapes", [[(4, 1), (3,)], [(2, 3, 4), (3, 1)], [(), (5,)], [(1,), (1,)]])
def test_broadcasting(shapes):
    x, y = uniform(*shapes[0], seed=3), uniform(*shapes[1], seed=4)
    check(lambda x, y: x * y + x.exp(), x, y)


VIEWS = {
    "transposed": lambda a: a.T,
    "every_other": lambda a: a[::2, ::3],
    "reversed": lambda a: a[::-1],
    "reversed_columns": lambda a: a[:, ::-1].T,
}


@pytest.mark.parametrize("view", VIEWS)
def test_strided_inputs_read_the_right_memory(view):
    array = VIEWS[view](uniform(8, 6, seed=5))
    assert not array.flags.c_contiguous
    check(lambda x: (x.sin() ** 2 + x.cos(), x.sum(0)), array)


def test_empty_arrays():
    check(lambda x: (x.exp(), x.sum(1)), uniform(0, 3))
    check(lambda x: (x.exp() + 1.0).sum(1), uniform(3, 0))  # sums of nothing are 0


# ---- reductions ----------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, 2, (0, 2), None])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sums_over_any_dims(dim, keepdim):
    x = uniform(3, 5, 7, seed=6)
    if dim is None:
        check(lambda x: x.sum() * 2.0, x, tol=1e-5)
    else:
        check(lambda x: (x * x).sum(dim, keepdim=keepdim), x, tol=1e-5)


def test_reductions_fused_in_one_kernel_share_their_loads():
    x = uniform(6, 70, seed=7)
    kernels = check(lambda x: (x.sum(1), (x * x).mean(1), x.sum(1, keepdim=True) - x), x, tol=1e-5)
    assert len(kernels[0].nodes) >= 2  # the sum and the sum of squares: one loop nest
    assert kernels[0].reduction_ranges == (70,)


@pytest.mark.parametrize("reduction_type, reduce", [("max", np.max), ("min", np.min)])
def test_max_and_min_reductions(reduction_type, reduce):
    x = uniform(6, 70, seed=8)
    x[2, 5] = np.nan  # numpy's max and min propagate NaN, as LLVM's llvm.maximum does
    layout = Layout((6, 70), (70, 1), dt.float32)
    bx = InputBuffer("x", layout)

    def inner_fn(index, rindex):
        return ops.exp(ops.load("x", layout.indexer()((index[0], rindex[0]))))

    data = Reduction(dt.float32, (6,), (70,), reduction_type, inner_fn)
    node = ComputedBuffer("buf0", Layout.contiguous((6,), dt.float32), data)
    (kernel,) = schedule(LoweredProgram((bx,), (node,), ("buf0",)))
    out = np.empty(6, np.float32)
    BACKEND.compile_kernel(kernel, {"x": dt.float32, "buf0": dt.float32})({"x": x, "buf0": out})
    np.testing.assert_allclose(out, reduce(np.exp(x), axis=1), rtol=1e-6)


def test_an_unknown_reduction_is_refused_by_name():
    layout = Layout((4,), (1,), dt.float32)
    data = Reduction(dt.float32, (), (4,), "prod", lambda i, r: ops.load("x", r[0]))
    node = ComputedBuffer("buf0", Layout.contiguous((), dt.float32), data)
    (kernel,) = schedule(LoweredProgram((InputBuffer("x", layout),), (node,), ("buf0",)))
    with pytest.raises(CompileError, match="prod"):
        BACKEND.compile_kernel(kernel, {})


def test_a_buffer_named_like_a_loop_variable_is_refused():
    layout = Layout((4,), (1,), dt.float32)
    node = ComputedBuffer(
        "buf0", layout, Reduction(dt.float32, (4,), (), "sum", lambda i, r: ops.load("i0", i[0]))
    )
    (kernel,) = schedule(LoweredProgram((InputBuffer("i0", layout),), (node,), ("buf0",)))
    with pytest.raises(CompileError, match="'i0'"):
        BACKEND.compile_kernel(kernel, {})


# ---- sizes as arguments ------------------------------------------------------------------


def rows(x, y):
    return (x.sin() * y + x.cos()).sum(0), (x * 2).reshape(-1), x.t() + 1, x.sum(1)


def test_one_compile_serves_every_size():
    inputs = [minitorch.randn(3, 4), minitorch.randn(4)]
    binding = SizeBinding.symbolic(inputs, [{0}, set()])  # x's dim 0 is s0
    generic = compile_symbolic(symbolic_trace(rows), inputs, binding, BACKEND)
    y = inputs[1]
    assert generic is not None
    assert all(isinstance(k, NumpySourceKernel) and k.sizes == ("s0",) for k in generic.kernels)
    assert "np.arange(s0)" in "".join(k.source for k in generic.kernels)
    for n in (2, 3, 5, 9, 16):
        x = minitorch.randn(n, 4)
        for actual, expected in zip(generic(x, y), rows(x, y), strict=True):
            assert actual.shape == expected.shape
            np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_a_kernel_with_sizes_says_which_it_is_missing():
    inputs = [minitorch.randn(3)]
    binding = SizeBinding.symbolic(inputs, [{0}])
    generic = compile_symbolic(symbolic_trace(lambda x: x.exp()), inputs, binding, BACKEND)
    (kernel,) = generic.kernels
    with pytest.raises(KeyError, match="s0"):
        kernel({"arg0_1": np.ones(3, np.float32), "buf0": np.empty(3, np.float32)})


# ---- the whole compiler --------------------------------------------------------------------


def model(x, w):
    return ((x * w).sum(1).tanh() + x.mean(1)).exp()


@pytest.mark.extras("symbolic_sizes")
def test_minitorch_compile_trains_with_it_at_three_sizes(monkeypatch):
    compiled_with: list[tuple[str, ...]] = []
    original = NumpySourceBackend.compile_kernel

    def recording(self, kernel, dtypes, sizes=()):
        compiled_with.append(tuple(sizes))
        return original(self, kernel, dtypes, sizes)

    monkeypatch.setattr(NumpySourceBackend, "compile_kernel", recording)
    compiled = minitorch.compile(model, backend="numpy")
    w = minitorch.rand(5)
    for n in (3, 4, 7):  # the third size is where a backend that ignores sizes broke
        x = minitorch.rand(n, 5, requires_grad=True)
        x_eager = minitorch.tensor(x.detach().numpy(), requires_grad=True)
        out, expected = compiled(x, w), model(x_eager, w)
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-5)
        out.sum().backward()
        expected.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), x_eager.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert () in compiled_with  # the first call: compiled for its shape
    assert ("s0",) in compiled_with  # then, with the batch dim dynamic, for every size
