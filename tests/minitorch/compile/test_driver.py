"""The whole pipeline: minitorch.compile(fn) with the inductor backend against eager mode.

Each function is captured (tracer/dynamo), split by AOT autograd, lowered (ir), compiled to LLVM
(codegen) and run; values and gradients must match eager, and the kernels must match the
loop-level IR's reference interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from ir.interpreter import run_reference
from ir.scheduler import schedule
from minitorch.compile.inductor import compile_graph
from minitorch.compile.wrapper import CompiledGraph
from tracer.aot import make_fx, partition_joint, trace_joint


def sincos(x):
    return minitorch.sin(x) ** 2 + minitorch.cos(x) ** 2


def broadcast_mix(x, y):
    return (x * y + 1.0) / (y.exp() + 2.0) - x.log()


def reductions(x):
    return x.sum(dim=1) * 2.0, (x * x).mean(), x.sum(dim=0, keepdim=True) - x


def powers(x):
    return x**3 + x**0.5 + x**-1 + x**2.5 + (-x) ** 2


def views(x):
    return x.reshape(3, -1).sum(dim=0) * 0.5 + x.reshape(4, 3).sum(dim=1, keepdim=True)


CASES = [
    (sincos, [(1000,)]),
    (sincos, [(4, 5)]),
    (broadcast_mix, [(4, 1), (3,)]),
    (reductions, [(3, 4)]),
    (powers, [(17,)]),
    (views, [(6, 2)]),
]


def _inputs(shapes, dtype, requires_grad):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 2.0, size=s).astype(dtype.np) for s in shapes]
    return [minitorch.tensor(a, requires_grad=requires_grad) for a in arrays]


def _as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64], ids=str)
@pytest.mark.parametrize("fn, shapes", CASES, ids=[f"{f.__name__}{s}" for f, s in CASES])
def test_compiled_values_and_gradients_match_eager(fn, shapes, dtype):
    tol = 1e-5 if dtype is minitorch.float32 else 1e-10
    eager_in = _inputs(shapes, dtype, requires_grad=True)
    compiled_in = _inputs(shapes, dtype, requires_grad=True)
    eager_out = _as_tuple(fn(*eager_in))
    compiled_out = _as_tuple(minitorch.compile(fn)(*compiled_in))
    for e, c in zip(eager_out, compiled_out, strict=True):
        assert c.dtype is e.dtype and c.shape == e.shape
        np.testing.assert_allclose(c.detach().numpy(), e.detach().numpy(), rtol=tol, atol=tol)
    sum(o.sum() for o in eager_out).backward()
    sum(o.sum() for o in compiled_out).backward()
    for e, c in zip(eager_in, compiled_in, strict=True):
        np.testing.assert_allclose(c.grad.numpy(), e.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("n", [1, 7, 4096, 1_000_003])
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64], ids=str)
def test_sincos_kernels_equal_the_reference_interpreter_and_numpy(n, dtype):
    x = minitorch.tensor(np.random.default_rng(n).uniform(-100, 100, n).astype(dtype.np))
    gm = make_fx(lambda x: (sincos(x),))(x)
    compiled = compile_graph(gm)
    (out,) = compiled(x)
    graph = gm.graph
    from ir.lowering import lower_graph

    program = lower_graph(graph)
    (reference,) = run_reference(program, schedule(program), [x.numpy()])
    tol = 2e-6 if dtype is minitorch.float32 else 1e-12
    np.testing.assert_allclose(out.numpy(), reference, rtol=tol, atol=tol)
    a = x.numpy()
    np.testing.assert_allclose(out.numpy(), np.sin(a) ** 2 + np.cos(a) ** 2, rtol=tol, atol=tol)


def test_the_sincos_forward_and_backward_are_one_kernel_each():
    x = minitorch.rand(64, requires_grad=True)
    joint, spec = trace_joint(lambda x: (sincos(x),), [x])
    parts = partition_joint(joint, spec)
    fw = compile_graph(parts.forward)
    bw = compile_graph(parts.backward)
    assert isinstance(fw, CompiledGraph) and len(fw.kernels) == 1
    assert len(bw.kernels) == 1


@pytest.mark.parametrize("view", ["transposed", "every_other", "reversed"])
def test_non_contiguous_inputs_are_computed_correctly(view):
    base = np.random.default_rng(1).uniform(-3, 3, (8, 6)).astype(np.float32)
    array = {"transposed": base.T, "every_other": base[::2, ::3], "reversed": base[::-1]}[view]
    x = minitorch.from_numpy(array)
    assert not x.is_contiguous()
    out = minitorch.compile(sincos)(x)
    np.testing.assert_allclose(
        out.numpy(), np.sin(array) ** 2 + np.cos(array) ** 2, rtol=1e-6, atol=1e-6
    )
    # and a later contiguous call gets its own compiled code, not the strided one
    y = minitorch.from_numpy(np.ascontiguousarray(array))
    np.testing.assert_allclose(minitorch.compile(sincos)(y).numpy(), out.numpy(), rtol=1e-6)


def test_tangents_with_other_strides_are_copied_to_the_compiled_layout():
    x = minitorch.rand(4, 3, requires_grad=True)
    out = minitorch.compile(lambda x: x.sin() * 2.0)(x)
    grad = minitorch.from_numpy(np.ones((3, 4), np.float32).T)  # transposed (4, 3) gradient
    out.backward(grad)
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(x.detach().numpy()), rtol=1e-6)
