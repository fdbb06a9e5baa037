"""Extern kernels: ops that do not lower run their eager kernel inside the compiled program
(ir/segments.py, [Note: extern kernels]), and the permute lowering that lets transposes fuse."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch
from codegen.llvm.backend import LLVMBackend
from ir.segments import ExternStep
from minitorch import nn
from minitorch.compile.inductor import compile_graph
from tracer.aot import make_fx, partition_joint, trace_joint


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(6, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        return self.out(self.hidden(x).relu()).tanh()


def _rand(*shape, seed=0):
    return minitorch.tensor(np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32))


def test_compiled_mlp_matches_eager_values_and_gradients_without_a_warning():
    model = MLP()
    x = _rand(5, 6)
    eager = model(x)
    eager.sum().backward()
    expected = {name: p.grad.numpy().copy() for name, p in model.named_parameters()}
    model.zero_grad()

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "runs eagerly because backend 'inductor' failed"
        out = minitorch.compile(model)(x)
        out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), eager.detach().numpy(), rtol=1e-6, atol=1e-6)
    for name, p in model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), expected[name], rtol=1e-5, atol=1e-6)


def linear_tail(x, w, b):
    return ((x @ w.T + b).relu().sin(),)


def test_the_pointwise_tail_after_mm_is_one_kernel_forward_and_backward():
    x, w, b = _rand(4, 3, seed=1), _rand(5, 3, seed=2), _rand(5, seed=3)
    for t in (x, w, b):
        t.requires_grad_(True)
    parts = partition_joint(*trace_joint(linear_tail, [x, w, b]))
    fw = compile_graph(parts.forward)
    assert any(isinstance(step, ExternStep) for step in fw.steps)
    assert len(fw.kernels) == 1  # add, relu, sin fused; w.T and mm run eagerly
    eager_ops = [s.node.target.name for s in fw.steps if hasattr(s, "node")]
    assert eager_ops == ["permute", "mm"]  # a view feeding only eager ops is not copied

    out = fw(x.detach(), w.detach(), b.detach())[0]
    a, wa, ba = (t.detach().numpy() for t in (x, w, b))
    np.testing.assert_allclose(out.numpy(), np.sin(np.maximum(a @ wa.T + ba, 0)), rtol=1e-6)

    bw = compile_graph(parts.backward)
    assert len(bw.kernels) == 2  # the pointwise gradient, and the bias gradient's sum


def test_an_op_independent_of_the_fallback_fuses_with_its_readers():
    def f(x, a, b):
        return (x.sin() * 2.0 + a.exp() @ b,)

    x, a, b = _rand(3, 4), _rand(3, 2, seed=1), _rand(2, 4, seed=2)
    gm = make_fx(f)(x, a, b)
    compiled = compile_graph(gm)
    # exp before mm; sin and * 2 after it, in the add's loop (not stored before mm and reloaded)
    assert len(compiled.kernels) == 2
    (out,) = compiled(x, a, b)
    expected = np.sin(x.numpy()) * 2 + np.exp(a.numpy()) @ b.numpy()
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dims", [(1, 0, 2), (2, 0, 1), (-1, -2, -3)])
def test_permute_lowering_matches_numpy(dims):
    x = _rand(2, 3, 4)

    def f(x):
        return ((x.permute(*dims) * 3.0).exp(), x.permute(*dims).reshape(-1).sin())

    gm = make_fx(f)(x)
    compiled = compile_graph(gm)
    assert not any(isinstance(s, ExternStep) for s in compiled.steps)  # permute lowers
    assert len(compiled.kernels) == 2  # two output shapes, two loop nests
    scaled, flat = compiled(x)
    a = x.numpy()
    np.testing.assert_allclose(scaled.numpy(), np.exp(np.transpose(a, dims) * 3), rtol=1e-6)
    np.testing.assert_allclose(flat.numpy(), np.sin(np.transpose(a, dims).ravel()), rtol=1e-6)


def test_permute_of_a_strided_input():
    base = np.random.default_rng(4).uniform(-1, 1, (4, 6)).astype(np.float32)
    x = minitorch.from_numpy(base[::2, ::-1])  # non-contiguous, negative stride
    out = minitorch.compile(lambda x: x.T.cos() + 1.0)(x)
    np.testing.assert_allclose(out.numpy(), np.cos(base[::2, ::-1].T) + 1, rtol=1e-6)


def test_a_graph_of_fallback_ops_only_runs_eagerly():
    a, b = _rand(3, 4, seed=5), _rand(4, 2, seed=6)
    gm = make_fx(lambda a, b: (a @ b,))(a, b)
    compiled = compile_graph(gm)
    assert [type(s) for s in compiled.steps] == [ExternStep] and compiled.kernels == []
    (out,) = compiled(a, b)
    np.testing.assert_allclose(out.numpy(), a.numpy() @ b.numpy(), rtol=1e-6)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = minitorch.compile(lambda a, b: a @ b)(a, b)
    np.testing.assert_allclose(out.numpy(), a.numpy() @ b.numpy(), rtol=1e-6)


def test_a_view_read_only_by_the_output_stays_a_compiled_copy():
    x = _rand(2, 3)
    compiled = compile_graph(make_fx(lambda x: (x.T,))(x))
    assert len(compiled.steps) == 1 and len(compiled.kernels) == 1  # one segment
    (out,) = compiled(x)
    assert out.is_contiguous()
    np.testing.assert_array_equal(out.numpy(), x.numpy().T)


def _steps_of(fn, *inputs, backend="inductor"):
    """The loop_ir stage's report of compiling `fn` whole: its extern and segment lines."""
    minitorch._dynamo.reset()
    with warnings.catch_warnings(), minitorch._logging.Recorder() as recorder:
        warnings.simplefilter("error")  # no "runs eagerly because ..."
        out = minitorch.compile(fn, backend=backend, fullgraph=True)(*inputs)
    text = "\n".join(a.text for a in recorder.artifacts if a.stage == "loop_ir")
    return out, text


def test_a_tensor_power_after_matmul_is_an_extern_step_not_a_whole_frame_fallback():
    def f(x, w, y):
        return (x @ w).sin() ** y

    # x @ w in [0, 2], so sin is positive and a fractional power of it a number
    x, w, y = _rand(3, 2).abs(), _rand(2, 5, seed=1).abs(), _rand(3, 5, seed=2)
    out, text = _steps_of(f, x, w, y)
    np.testing.assert_allclose(out.numpy(), f(x, w, y).numpy(), rtol=1e-5)
    assert "extern:   mm = minitorch.ops.mm" in text
    assert "= minitorch.ops.pow(sin, arg2_1)  # pow with a tensor exponent" in text
    assert "segment:  sin = part" in text  # sin still compiles, between mm and pow


def test_a_dtype_the_backend_does_not_compile_runs_as_extern_steps(monkeypatch):
    def f(x, i):
        return x.sin() + (i * 2).sum()

    # a backend that compiles floats and bools only: the LLVM one, told to claim no integers
    monkeypatch.setattr(LLVMBackend, "dtypes", frozenset({"float32", "float64", "bool"}))
    x, i = _rand(3, 4), minitorch.tensor([[1, 2], [3, 4]])  # int64
    out, text = _steps_of(f, x, i)
    np.testing.assert_allclose(out.numpy(), f(x, i).numpy(), rtol=1e-6)
    assert "the code generator does not compile int64" in text and "segment:" in text
    out, text = _steps_of(f, x, i, backend="numpy")  # the numpy backend compiles int64
    np.testing.assert_allclose(out.numpy(), f(x, i).numpy(), rtol=1e-6)
    assert "extern:" not in text


@pytest.mark.parametrize("backend", ["inductor", "numpy", "interpreter"])
@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: (a + b, a * b, (a + b) * a),  # bool arithmetic: or, and
        lambda a, b: ((a > 0).int(), a > 0),  # a bool mask compared with an int: in int64
    ],
)
def test_bool_arithmetic_and_bool_int_comparisons_compile_or_run_extern(fn, backend):
    a = minitorch.tensor([True, False, True, False])
    b = minitorch.tensor([True, True, False, False])
    minitorch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a backend failure would fall back with a warning
        got = minitorch.compile(fn, backend=backend)(a, b)
    for g, e in zip(got, fn(a, b)):
        assert g.dtype is e.dtype
        np.testing.assert_array_equal(g.numpy(), e.numpy())
