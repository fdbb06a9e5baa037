"""Kernels that take dynamic sizes as arguments ([Note: symbolic sizes], ir/symbolic.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from codegen.interpreter import InterpreterBackend
from codegen.llvm.backend import LLVMBackend
from ir.indexing import Var
from ir.symbolic import Symbolizer, sentinel_primes
from minitorch.compile.shapes import SizeBinding
from minitorch.compile.symbolic_sizes import compile_symbolic
from tracer.dynamo import reset
from tracer.fx import symbolic_trace

pytestmark = pytest.mark.extras("symbolic_sizes")  # the extra these tests are about


@pytest.fixture(autouse=True)
def empty_caches():
    reset()
    yield
    reset()


@pytest.fixture
def kernel_compiles(monkeypatch):
    """The `sizes` argument of every LLVM kernel compile, in order (one graph's kernels are
    compiled together, by `compile_kernels`)."""
    calls: list[tuple[str, ...]] = []
    original = LLVMBackend.compile_kernels

    def counting(self, kernels, sizes=()):
        calls.extend([tuple(sizes)] * len(kernels))
        return original(self, kernels, sizes)

    monkeypatch.setattr(LLVMBackend, "compile_kernels", counting)
    return calls


def compile_dynamic(gm, inputs, dynamic_dims=None, backend=None):
    """`gm` compiled with `backend` (LLVM by default), every dim in `dynamic_dims` (all, if
    None) a size symbol; None where the sizes cannot be arguments."""
    dims = dynamic_dims or [set(range(x.ndim)) for x in inputs]
    binding = SizeBinding.symbolic(inputs, dims)
    return compile_symbolic(gm, inputs, binding, backend or LLVMBackend())


def close(actual, expected) -> None:
    np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def pointwise_and_reduction(x, y):
    return (x.sin() * y + x.cos()).sum(0), (x * 2).reshape(-1), x.t() + 1


# ---- reading sizes back from sentinel primes ---------------------------------------------


def test_sentinel_ints_read_back_as_monomials():
    p0, p1 = sentinel_primes(2, 10_000)
    s = Symbolizer((p0, p1))
    s0, s1 = Var("s0"), Var("s1")
    assert (p0, p1) == (10007, 10009)
    assert s.int(4 * p0) == 4 * s0
    assert s.int(-p0 * p1) == -(s0 * s1)
    assert s.int(p0 * p0) == s0 * s0
    assert s.int(7) == 7 and s.int(0) == 0
    i0, i1 = Var("i0"), Var("i1")
    assert s.expr((i0 * (3 * p1) + i1) // p1) == i0 * 3 + i1 // s1


# ---- one compile, every size --------------------------------------------------------------


def test_pointwise_and_reduction_graph_compiles_once_for_sizes_2_to_9(kernel_compiles):
    y = minitorch.randn(4)
    gm = symbolic_trace(pointwise_and_reduction)
    compiled = compile_dynamic(gm, [minitorch.randn(3, 4), y], [{0}, set()])
    assert compiled is not None
    assert kernel_compiles == [("s0",)] * 3  # three kernels, each compiled once, taking s0
    for n in range(2, 10):
        x = minitorch.randn(n, 4)
        for actual, expected in zip(compiled(x, y), pointwise_and_reduction(x, y), strict=True):
            assert actual.shape == expected.shape
            close(actual, expected)
    assert len(kernel_compiles) == 3  # no compile after the first


def test_the_llvm_ir_takes_the_size_as_an_argument():
    compiled = compile_dynamic(
        symbolic_trace(pointwise_and_reduction),
        [minitorch.randn(3, 4), minitorch.randn(4)],
        [{0}, set()],
    )
    source = compiled.kernels[0].source
    assert 'define void @"kernel0"(ptr %"buffers", i64 %"start", i64 %"end", i64 %"s0")' in source
    assert "10007" not in source and "20011" not in source  # no sentinel left behind


def test_static_dims_are_checked_and_symbols_bind_from_the_inputs():
    y = minitorch.randn(4)
    compiled = compile_dynamic(
        symbolic_trace(pointwise_and_reduction), [minitorch.randn(3, 4), y], [{0}, set()]
    )
    assert compiled.bind([minitorch.randn(7, 4), y]) == {"s0": 7}
    assert compiled.bind([minitorch.randn(7, 5), minitorch.randn(5)]) is None  # static 4
    assert compiled.bind([minitorch.randn(1, 4), y]) is None  # size 1 stays specialised
    with pytest.raises(minitorch.errors.CompileError, match="compiled graph for shapes"):
        compiled(minitorch.randn(7, 5), minitorch.randn(5))


def test_equal_sizes_share_a_symbol_and_must_stay_equal():
    gm = symbolic_trace(pointwise_and_reduction)
    compiled = compile_dynamic(gm, [minitorch.randn(4, 4), minitorch.randn(4)])
    assert compiled.binding.symbols == ((0, 0), (0,))
    for n in (2, 5, 8):
        x, y = minitorch.randn(n, n), minitorch.randn(n)
        for actual, expected in zip(compiled(x, y), pointwise_and_reduction(x, y), strict=True):
            close(actual, expected)
    assert compiled.bind([minitorch.randn(5, 6), minitorch.randn(6)]) is None


def test_a_size_baked_into_a_constant_is_not_made_generic():
    # mean divides by the count: a float constant that differs between the two traces.
    gm = symbolic_trace(lambda x: x.mean(0))
    assert compile_dynamic(gm, [minitorch.randn(3, 4)]) is None


def test_a_tensor_constant_made_at_the_traced_sizes_is_not_made_generic():
    # tril's mask is a constant of the traced shape (found by tests/fuzz).
    gm = symbolic_trace(lambda x: x.tril() * 2)
    assert compile_dynamic(gm, [minitorch.randn(3, 3)]) is None


def test_a_graph_with_fallback_ops_is_not_made_generic():
    # mm runs as eager code with the traced sizes: it would need them as Python ints.
    gm = symbolic_trace(lambda x, w: (x @ w).sin())
    assert compile_dynamic(gm, [minitorch.randn(3, 4), minitorch.randn(4, 5)]) is None


# ---- end to end: minitorch.compile(..., dynamic=True) ----------------------------------------


def f(x, y):
    return (x.sin() * y + x.cos()).sum(0)


def test_compile_dynamic_true_inference_compiles_once(kernel_compiles):
    compiled = minitorch.compile(f, backend="inductor", dynamic=True)
    for n in [2, 3, 5, 8, 3, 9]:
        x, y = minitorch.randn(n, 3), minitorch.randn(3)
        close(compiled(x, y), f(x, y))
    assert kernel_compiles == [("s0", "s1")]  # one kernel, one compile, sizes as arguments


def test_automatic_dynamic_recompiles_once_with_sizes_as_arguments(kernel_compiles):
    compiled = minitorch.compile(f, backend="inductor")
    for n in [2, 4, 5, 7, 9]:
        x, y = minitorch.randn(n, 3), minitorch.randn(3)
        close(compiled(x, y), f(x, y))
    # static at 2; then only the dim that changed (x's first) is a symbol: capture tells the
    # compiler which dims its guards leave free (GraphCompiler.compile's dynamic_dims)
    assert kernel_compiles == [(), ("s0",)]


def test_dims_that_shared_a_symbol_get_one_each_when_they_differ(kernel_compiles):
    compiled = minitorch.compile(f, backend="inductor", dynamic=True)
    for n, m in [(3, 3), (5, 5), (4, 3), (6, 2), (2, 2)]:
        x, y = minitorch.randn(n, m), minitorch.randn(m)
        close(compiled(x, y), f(x, y))
    # (3, 3) and (3,): one symbol for all three dims, fine for (5, 5); (4, 3) needs two.
    assert kernel_compiles == [("s0",), ("s0", "s1")]


def test_requires_grad_inputs_compile_forward_and_backward_once(kernel_compiles):
    compiled = minitorch.compile(f, backend="inductor", dynamic=True)
    first_call = None
    for n in [2, 3, 2, 4, 7]:
        x = minitorch.randn(n, 3, requires_grad=True)
        y = minitorch.randn(3, requires_grad=True)
        x2, y2 = x.detach().requires_grad_(), y.detach().requires_grad_()
        out, expected = compiled(x, y), f(x2, y2)
        close(out.detach(), expected.detach())
        (out * out).sum().backward()
        (expected * expected).sum().backward()
        close(x.grad, x2.grad)
        close(y.grad, y2.grad)
        first_call = first_call or list(kernel_compiles)
    # AOT autograd traced the joint graph at sentinel sizes: the backward's expand and sum
    # sizes read back as symbols too, so forward and backward kernels compile once.
    assert kernel_compiles == [("s0", "s1")] * len(kernel_compiles)
    assert kernel_compiles == first_call and len(first_call) >= 2  # a forward and a backward


def test_symbolic_training_graph_runs_backward_at_the_forward_sizes():
    x = minitorch.randn(3, 4, requires_grad=True)
    compiled = compile_dynamic(symbolic_trace(lambda x: (x.sin() * x).sum(1)), [x], [{0}])
    assert compiled.backward is not None  # training: a forward and a backward, both symbolic
    for n in (2, 6):
        x = minitorch.randn(n, 4, requires_grad=True)
        x2 = x.detach().requires_grad_()
        (out,) = compiled(x)
        out.sum().backward()
        (x2.sin() * x2).sum(1).sum().backward()
        close(x.grad, x2.grad)


def test_the_interpreter_backend_takes_sizes_too():
    # The reference interpreter as a backend: one "compile", run at every size with s0 bound.
    backend = InterpreterBackend()
    assert backend.symbolic_sizes
    y = minitorch.randn(4)
    gm = symbolic_trace(pointwise_and_reduction)
    compiled = compile_dynamic(gm, [minitorch.randn(3, 4), y], [{0}, set()], backend=backend)
    assert compiled is not None
    for n in (2, 6):
        x = minitorch.randn(n, 4)
        for actual, expected in zip(compiled(x, y), pointwise_and_reduction(x, y), strict=True):
            close(actual, expected)
