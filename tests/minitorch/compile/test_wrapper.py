"""The generated wrapper (minitorch/compile/output_code.py): one Python function per compiled
graph, against eager mode: values, fresh outputs, memory reused inside it, sizes bound in it."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from codegen.registry import get_backend
from minitorch import _logging
from minitorch.compile.inductor import compile_graph
from tracer.aot import make_fx

BACKENDS = ["llvm", "numpy", "interpreter"]


def chain(x):
    for _ in range(5):
        x = x * 2.0
        x = x + 1.0
    return x


def reductions(x):
    """A chain of column sums, each read by a costly step that is stored (not inlined) for the
    next kernel: every sum and every step is dead two kernels later."""
    for _ in range(4):
        x = (x - x.sum(0, keepdim=True) * 0.1).sin().cos().sin().cos()
    return x.sum(), x.max()


def _compiled(fn, *inputs, backend="llvm"):
    return compile_graph(make_fx(fn)(*inputs), get_backend(backend))


def test_the_wrapper_is_python_named_after_the_graph_and_logged():
    x = minitorch.randn(16)
    with _logging.Recorder() as rec:
        compiled = minitorch.compile(chain)
        np.testing.assert_allclose(compiled(x).numpy(), chain(x).numpy(), rtol=1e-6)
    (kernels,) = [a for a in rec.artifacts if a.stage == "kernels"]
    source = kernels.text[kernels.text.index("def call(inputs, sizes):") :]
    assert source.splitlines()[:2] == ["def call(inputs, sizes):", "    arg0_1, = inputs"]
    assert "    buf0 = ___empty((16,), ___float32)" in source
    assert source.rstrip().endswith("return (add_4,)")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_chain_of_reductions_reuses_dead_buffers_and_matches_eager(backend):
    x = minitorch.randn(8, 16)
    compiled = _compiled(reductions, x, backend=backend)
    reused = [line for line in compiled.source.splitlines() if "# reuse" in line]
    assert len(reused) >= 2  # later sums and steps take the memory of earlier ones
    for got, want in zip(compiled(x), reductions(x), strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def argmax_then_sums(x):
    """An int64 argmax, stored and dead after one kernel, then float64 sums of its byte size."""
    i = x.argmax(0, keepdim=True)
    x = (x * i).sin().cos().sin().cos()
    for _ in range(2):
        x = (x - x.sum(0, keepdim=True) * 0.1).sin().cos().sin().cos()
    return (x - x.sum(0, keepdim=True)).sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_buffer_never_takes_the_memory_of_a_dead_buffer_of_another_dtype(backend):
    """The numpy and interpreter kernels write through the array's dtype: float sums stored in
    the argmax's int64 array came back truncated."""
    x = minitorch.randn(4, 4, dtype=minitorch.float64)
    compiled = _compiled(argmax_then_sums, x, backend=backend)
    np.testing.assert_allclose(compiled(x)[0].numpy(), argmax_then_sums(x).numpy(), rtol=1e-9)


def test_outputs_are_fresh_memory_on_every_call():
    """An output is never a reused buffer, nor the memory of another call's output."""
    x = minitorch.randn(8, 16)
    compiled = _compiled(lambda x: (x - x.sum(1, keepdim=True), x * 2.0, x.sum(1)), x)
    first, second = compiled(x), compiled(x)
    arrays = [t.numpy() for t in (*first, *second, x)]
    for i, a in enumerate(arrays):
        for b in arrays[:i]:
            assert not np.shares_memory(a, b)


def test_sizes_are_bound_in_the_wrapper():
    compiled = minitorch.compile(lambda x: (x.sin() * 2.0).sum(1), dynamic=True)
    for rows in (3, 5, 9):
        x = minitorch.randn(rows, 4)
        np.testing.assert_allclose(
            compiled(x).numpy(), (x.sin() * 2.0).sum(1).numpy(), rtol=1e-5, atol=1e-6
        )


def test_an_input_in_another_layout_is_copied_on_the_slow_path():
    x = minitorch.randn(4, 6)
    compiled = _compiled(lambda x: x * 2.0 + 1.0, x)
    transposed = minitorch.randn(6, 4).t()  # (4, 6) with strides (1, 4): not the compiled ones
    (got,) = compiled(transposed)
    np.testing.assert_allclose(got.numpy(), (transposed * 2.0 + 1.0).numpy(), rtol=1e-6)
