"""Traced softmax, log_softmax and layer_norm through lowering: max(dim) values as an amax
([Note: max values without indices]), nothing pointwise stored ([Note: inlining]), each
compared with eager."""

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from ir.interpreter import run_reference
from ir.lowering import lower_graph
from ir.nodes import Pointwise, Reduction
from ir.scheduler import schedule, verify
from minitorch._logging import Recorder
from tracer.aot import make_fx, partition_joint, trace_joint

rng = np.random.default_rng(31)


def lowered(gm):
    program = lower_graph(gm.graph)
    kernels = schedule(program)
    verify(program, kernels)
    return program, kernels


def reductions(program):
    return [b.data.reduction_type for b in program.buffers if isinstance(b.data, Reduction)]


def stored_pointwise(program, kernels):
    """The pointwise buffers some kernel writes that are not graph outputs."""
    return [
        name
        for k in kernels
        for name in k.writes
        if name not in program.outputs and isinstance(program.buffer(name).data, Pointwise)
    ]


def run_inference(fn, arrays):
    """fn's inference graph lowered and interpreted, checked against eager; (program, kernels)."""
    gm = make_fx(fn)(*[minitorch.tensor(a) for a in arrays])
    program, kernels = lowered(gm)
    got = run_reference(program, kernels, arrays)
    want = fn(*[minitorch.tensor(a) for a in arrays])
    for g, w in zip(got, want if isinstance(want, tuple) else (want,), strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)
    return program, kernels


# ---- max(dim) values without the indices --------------------------------------------------

SPECIAL_ROWS = np.array(
    [
        [1.0, 3.0, 3.0, -2.0, 0.5],  # a tie for the largest
        [2.0, 2.0, 2.0, 2.0, 2.0],  # all equal
        [1.0, np.nan, 5.0, np.nan, 0.0],  # NaN wins, wherever it is
        [np.nan, 1.0, 2.0, 3.0, 4.0],
        [-np.inf, -np.inf, -np.inf, -np.inf, -np.inf],
        [np.inf, 1.0, -np.inf, np.inf, 0.0],
        [-1.0, -7.0, -1.0, -7.0, -3.0],  # a tie for the smallest
    ],
    np.float32,
)

VALUES = {
    "max[0]": lambda x: x.max(dim=1)[0],
    "max.values keepdim": lambda x: x.max(dim=1, keepdim=True).values,
    "max dim 0": lambda x: x.max(dim=0)[0],
    "max dim -1": lambda x: x.max(-1)[0],
    "min[0]": lambda x: x.min(dim=1)[0],
    "min.values keepdim": lambda x: x.min(dim=-1, keepdim=True).values,
}


@pytest.mark.parametrize("name", VALUES)
def test_values_without_indices_are_an_amax(name):
    fn = VALUES[name]
    program, kernels = run_inference(fn, [rng.standard_normal((6, 5)).astype(np.float32)])
    assert reductions(program) == ["max" if "max" in name else "min"]
    assert len(kernels) == 1


@pytest.mark.parametrize("backend", ["interpreter", "numpy", "llvm"])
@pytest.mark.parametrize("name", VALUES)
def test_values_with_nan_and_ties_are_eager_values(backend, name):
    fn = VALUES[name]
    x = minitorch.tensor(SPECIAL_ROWS)
    np.testing.assert_array_equal(
        minitorch.compile(fn, backend=backend)(x).numpy(), fn(x).numpy()
    )  # NaN where eager has NaN


def test_values_with_their_indices_keep_the_argmax():
    def fn(x):
        values, indices = x.max(dim=1)
        return values, indices

    x = SPECIAL_ROWS
    program, _ = run_inference(fn, [x])
    assert "argmax" in reductions(program)
    got = minitorch.compile(fn)(minitorch.tensor(x))
    want = fn(minitorch.tensor(x))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


# ---- softmax, log_softmax, layer_norm: two kernels, nothing pointwise stored --------------

ROW_FUNCTIONS = {
    "softmax max[0]": lambda x: _softmax(x, x.max(dim=1, keepdim=True)[0]),
    "softmax .values": lambda x: _softmax(x, x.max(dim=1, keepdim=True).values),
    "softmax amax": lambda x: _softmax(x, x.amax(dim=1, keepdim=True)),
    "F.softmax": lambda x: F.softmax(x, dim=1),
    "F.log_softmax": lambda x: F.log_softmax(x, dim=-1),
    "F.layer_norm": lambda x: F.layer_norm(x, (16,)),
    "F.layer_norm affine": lambda x: F.layer_norm(x, (16,), minitorch.ones(16) * 2, None),
}


def _softmax(x, m):
    e = minitorch.exp(x - m)
    return e / e.sum(dim=1, keepdim=True)


@pytest.mark.parametrize("name", ROW_FUNCTIONS)
def test_row_functions_are_one_kernel_storing_only_the_output(name):
    x = rng.standard_normal((8, 16)).astype(np.float32)
    program, kernels = run_inference(ROW_FUNCTIONS[name], [x])
    assert stored_pointwise(program, kernels) == []
    assert len(kernels) == 1  # a loop per row reduction, then one for the output
    assert kernels[0].writes == program.outputs
    assert "argmax" not in reductions(program)


@pytest.mark.parametrize("affine", [True, False])
def test_compiled_layer_norm_module_is_one_kernel(affine):
    layer = minitorch.nn.LayerNorm(16, elementwise_affine=affine)
    x = minitorch.tensor(rng.standard_normal((8, 16)).astype(np.float32))
    with minitorch.no_grad(), Recorder() as rec:
        got = minitorch.compile(layer)(x)
    (title,) = [a.title for a in rec.artifacts if a.stage == "loop_ir"]
    assert title.endswith("1 fused kernel(s)")
    np.testing.assert_allclose(got.numpy(), layer(x).detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["F.softmax", "F.log_softmax", "F.layer_norm affine"])
def test_backward_stores_only_row_and_column_results(name):
    def fn(x, w):
        return (ROW_FUNCTIONS[name](x) * w,)

    arrays = [
        rng.standard_normal((8, 16)).astype(np.float32),
        rng.standard_normal(16).astype(np.float32),
    ]
    inputs = [minitorch.tensor(a, requires_grad=True) for a in arrays]
    partition = partition_joint(*trace_joint(fn, inputs))
    forward, backward = lowered(partition.forward), lowered(partition.backward)
    saved = run_reference(*forward, arrays)
    (result,) = fn(*inputs)
    np.testing.assert_allclose(saved[0], result.detach().numpy(), rtol=1e-5, atol=1e-6)
    grad_out = rng.standard_normal(result.shape).astype(np.float32)
    result.backward(minitorch.tensor(grad_out))
    grads = run_reference(*backward, [*saved[1:], grad_out])
    for got, x in zip(grads, inputs, strict=True):
        np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert stored_pointwise(*backward) == []
