"""Graphs from the real tracer (make_fx, AOT autograd's joint graph) through the loop IR."""

import numpy as np
import pytest

import minitorch
from ir.interpreter import run_reference
from ir.lowering import lower_graph
from ir.scheduler import schedule
from tracer.aot import make_fx, partition_joint, trace_joint

rng = np.random.default_rng(3)


def compile_and_run(gm, arrays):
    program = lower_graph(gm.graph)
    kernels = schedule(program)
    return kernels, run_reference(program, kernels, arrays)


def forward_and_backward(fn, arrays):
    """Run fn's AOT forward and backward graphs through the IR; compare with eager autograd."""
    inputs = [minitorch.tensor(a, requires_grad=True) for a in arrays]
    partition = partition_joint(*trace_joint(fn, inputs))
    fw_kernels, fw_out = compile_and_run(partition.forward, arrays)
    (result,) = fn(*inputs)
    np.testing.assert_allclose(fw_out[0], result.detach().numpy(), rtol=1e-5, atol=1e-6)

    grad_out = rng.standard_normal(result.shape).astype(result.dtype.np)
    result.backward(minitorch.tensor(grad_out))
    saved = fw_out[1:]
    bw_kernels, grads = compile_and_run(partition.backward, [*saved, grad_out])
    for got, x in zip(grads, inputs, strict=True):
        np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-4, atol=1e-5)
    return fw_kernels, bw_kernels


@pytest.mark.parametrize(
    "partitioner, writes",
    [
        ("default", ("buf0", "buf1", "buf2")),  # the output, sin and cos (saved)
        ("min_cut", ("buf0",)),  # the output: x is saved, sin and cos are computed again
    ],
)
def test_sincos_forward_and_backward_are_one_kernel_each(partitioner, writes, monkeypatch):
    def f(x):
        return (minitorch.sin(x) ** 2 + minitorch.cos(x) ** 2,)

    monkeypatch.setattr(minitorch.config, "partitioner", partitioner)
    x = np.linspace(-3, 3, 4096, dtype=np.float32)
    fw, bw = forward_and_backward(f, [x])
    assert len(fw) == 1 and fw[0].writes == writes
    assert len(bw) == 1


def test_scaled_sum_is_one_kernel():
    gm = make_fx(lambda x: (x * 2).sum())(minitorch.tensor(np.ones((8, 5), np.float32)))
    x = rng.standard_normal((8, 5)).astype(np.float32)
    kernels, (out,) = compile_and_run(gm, [x])
    assert len(kernels) == 1 and len(kernels[0].nodes) == 1
    np.testing.assert_allclose(out, (x * 2).sum(), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcasting_reductions_and_views(dtype):
    def f(x, y):
        centered = x - x.sum(1, keepdim=True) / 6.0  # (4, 6) - (4, 1)
        scaled = (centered * y).exp()  # y: (6,) broadcasts
        flat = scaled.reshape(24).log() + y.expand(4, 6).reshape(24)
        return ((flat * flat).sum() + (x.pow(2) / (y + 3.0)).sum(0).sum(),)

    x = rng.uniform(-1, 1, (4, 6)).astype(dtype)
    y = rng.uniform(-1, 1, 6).astype(dtype)
    forward_and_backward(f, [x, y])


def test_mixed_precision_promotes():
    def f(x, y):
        return ((x * y).sin(),)  # float32 * float64 -> float64

    forward_and_backward(f, [rng.standard_normal(5).astype(np.float32), rng.standard_normal(5)])
