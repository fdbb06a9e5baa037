"""The min-cut partitioner (tracer/aot/min_cut.py) beside "default": what each saves, what the
backward recomputes, and both held to eager's values and gradients and to finite differences.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch import _dynamo, _logging, config
from minitorch.errors import AutogradError, CompileError
from tracer.aot import partition_joint, trace_joint
from tracer.aot.min_cut import recomputable

PARTITIONERS = ("default", "min_cut")  # the two in the tree (others may be registered)

C = 0.7978845608  # sqrt(2 / pi)
SINCOS_SCRIPT = str(pathlib.Path(__file__).parents[3] / "examples" / "sincos.py")


def sincos(x):
    return minitorch.sin(x) ** 2 + minitorch.cos(x) ** 2


def gelu_tanh(x):
    return 0.5 * x * (1 + minitorch.tanh(C * (x + 0.044715 * x * x * x)))


def mlp(x, y, w1, b1, w2, b2):
    return F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), y)


def softmax_by_max(x, weights):
    m = x.max(dim=1, keepdim=True)[0]
    e = minitorch.exp(x - m)
    return (e / e.sum(dim=1, keepdim=True) * weights).sum()  # weighted: a softmax sums to 1


def layernorm(x, w, b, weights):
    return (F.layer_norm(x, (x.shape[-1],), w, b) * weights).sum()


def dropout(x):
    return minitorch.sin(F.dropout(x, 0.5, training=True) * x).sum()


def _floats(rng, *shape, grad=True):
    return minitorch.tensor(rng.standard_normal(shape), dtype=minitorch.float64, requires_grad=grad)


def workloads(rng) -> dict:
    """name -> (a function returning a scalar loss, its float64 inputs)."""
    return {
        "sincos": (lambda x: sincos(x).sum(), [_floats(rng, 16)]),
        "gelu": (lambda x: gelu_tanh(x).sum(), [_floats(rng, 16)]),
        "mlp": (
            mlp,
            [
                _floats(rng, 5, 8, grad=False),
                minitorch.tensor([0, 3, 1, 3, 2]),
                _floats(rng, 6, 8),
                _floats(rng, 6),
                _floats(rng, 4, 6),
                _floats(rng, 4),
            ],
        ),
        "softmax": (softmax_by_max, [_floats(rng, 4, 7), _floats(rng, 4, 7, grad=False)]),
        "layernorm": (
            layernorm,
            [_floats(rng, 3, 8), _floats(rng, 8), _floats(rng, 8), _floats(rng, 3, 8, grad=False)],
        ),
        "dropout": (dropout, [_floats(rng, 64)]),
    }


NAMES = list(workloads(np.random.default_rng(0)))


def _fresh(inputs):
    return [x.detach().clone().requires_grad_(x.requires_grad) for x in inputs]


def _loss(fn, inputs):
    minitorch.manual_seed(0)  # dropout draws the same mask every time
    return fn(*inputs)


@pytest.mark.parametrize("partitioner", PARTITIONERS)
@pytest.mark.parametrize("name", NAMES)
def test_compiled_gradients_equal_eager_and_finite_differences(name, partitioner, monkeypatch):
    monkeypatch.setattr(config, "partitioner", partitioner)
    _dynamo.reset()
    fn, inputs = workloads(np.random.default_rng(0))[name]
    eager_inputs, compiled_inputs = _fresh(inputs), _fresh(inputs)
    want = _loss(fn, eager_inputs)
    want.backward()
    got = _loss(minitorch.compile(fn, fullgraph=True), compiled_inputs)
    got.backward()
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-10)
    for e, c in zip(eager_inputs, compiled_inputs):
        if e.requires_grad:
            np.testing.assert_allclose(c.grad.numpy(), e.grad.numpy(), rtol=1e-9, atol=1e-12)
            _check_finite_differences(fn, inputs, e, c.grad.numpy())


def _check_finite_differences(fn, inputs, wrt, grad, h=1e-6):
    """A few coordinates of `grad` against central differences of the eager loss."""
    i = next(
        k
        for k, x in enumerate(inputs)
        if x.shape == wrt.shape and np.array_equal(x.detach().numpy(), wrt.detach().numpy())
    )
    for flat in np.random.default_rng(1).choice(grad.size, size=min(4, grad.size), replace=False):
        index = np.unravel_index(flat, grad.shape)
        moved = []
        for step in (h, -h):
            values = [x.detach().numpy().copy() for x in inputs]
            values[i][index] += step
            moved.append(_loss(fn, [minitorch.tensor(v) for v in values]).item())
        np.testing.assert_allclose(
            grad[index], (moved[0] - moved[1]) / (2 * h), rtol=1e-4, atol=1e-6
        )


def _partition(fn, inputs, partitioner):
    return partition_joint(*trace_joint(lambda *a: (fn(*a),), inputs), partitioner)


def _recomputed(parts) -> list:
    """The backward's call_function nodes computed from saved values alone, not tangents."""
    nodes = parts.backward.graph.nodes
    placeholders = [n for n in nodes if n.op == "placeholder"]
    from_tangents = set(placeholders[parts.num_saved :])
    recomputed = []
    for node in nodes:
        if any(n in from_tangents for n in node.all_input_nodes):
            from_tangents.add(node)
        elif node.op == "call_function":
            recomputed.append(node)
    return recomputed


def _saved(parts) -> list[str]:
    return [n.name for n in parts.backward.graph.nodes if n.op == "placeholder"][: parts.num_saved]


def test_sincos_saves_x_alone_and_recomputes_sin_and_cos():
    x = minitorch.rand(1000, requires_grad=True)
    default, min_cut = (_partition(sincos, [x], p) for p in PARTITIONERS)
    assert _saved(default) == ["sin", "cos"] and default.saved_bytes == 2 * 1000 * 4
    assert _saved(min_cut) == ["primals_1"] and min_cut.saved_bytes == 1000 * 4
    assert {n.target.name for n in _recomputed(min_cut)} >= {"sin", "cos"}
    assert min_cut.forward.code.rstrip().endswith("return (add, primals_1)")


def test_gelu_saves_x_alone():
    x = minitorch.rand(1000, requires_grad=True)
    default, min_cut = (_partition(gelu_tanh, [x], p) for p in PARTITIONERS)
    assert _saved(min_cut) == ["primals_1"] and min_cut.saved_bytes == 4000
    assert default.saved_bytes > min_cut.saved_bytes
    assert "tanh" in {n.target.name for n in _recomputed(min_cut)}


@pytest.mark.parametrize("name", NAMES)
def test_the_backward_recomputes_only_cheap_pointwise_ops(name):
    fn, inputs = workloads(np.random.default_rng(0))[name]
    parts = _partition(fn, inputs, "min_cut")
    in_forward = {n.name for n in parts.forward.graph.nodes}
    # (a value only the backward needs, like the count of maxima in amax's derivative, is
    # computed there once: that is no recomputation)
    again = [n for n in _recomputed(parts) if n.name in in_forward]
    assert again, "nothing recomputed: the test would pass for the wrong reason"
    assert all(recomputable(n) for n in again), [n.format_node() for n in again]


def test_dropouts_mask_is_saved_never_drawn_again():
    x = minitorch.rand(64, requires_grad=True)
    parts = _partition(dropout, [x], "min_cut")
    assert "dropout_keep" in _saved(parts)
    random = {"rng_state", "dropout_keep", "uniform", "normal", "randint"}
    assert not [n for n in parts.backward.graph.nodes if getattr(n.target, "name", "") in random]


def test_a_matmul_is_saved_rather_than_recomputed():
    fn, inputs = workloads(np.random.default_rng(0))["mlp"]
    parts = _partition(fn, inputs, "min_cut")
    assert "mm" in _saved(parts)  # the first layer's product: relu and its mask are recomputed
    assert "mm" not in {n.target.name for n in _recomputed(parts)}


def minimum_then_written(x):
    """min's gradient formula reads x and min(x) (their mask `x == m`, for min-cut a byte an
    element against x's four); then x is written in place through a detached view."""
    m = x.min()
    F.relu(x.detach()[:, ::2], inplace=True)
    return m


@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_an_input_a_backward_formula_reads_is_saved_so_writing_it_fails_backward(
    partitioner, monkeypatch
):
    """As in eager (and PyTorch's eager): the write bumps x's version, and backward refuses."""
    monkeypatch.setattr(config, "partitioner", partitioner)
    _dynamo.reset()
    x = minitorch.tensor([[1.5, -2.0, 0.5]], requires_grad=True)
    assert "primals_1" in _saved(_partition(minitorch.min, [x], partitioner))
    for fn in (minimum_then_written, minitorch.compile(minimum_then_written)):
        x = minitorch.tensor([[1.5, -2.0, 0.5]], requires_grad=True)
        with pytest.raises(AutogradError, match="modified by an inplace operation"):
            fn(x).backward()


def normalized_then_clipped(x):
    """div's formula reads its inputs, not the quotient; the quotient, a graph output, is
    clamped in place after the graph (a graph break at the write into a view)."""
    q = x - x.mean(1, keepdim=True)
    q = q / (q.pow(2).mean(1, keepdim=True) + 1e-5).sqrt()
    q[:, ::2].clamp_(-1, 1)
    return q


@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_an_output_written_after_the_graph_is_not_saved_where_eager_reads_none(
    partitioner, monkeypatch
):
    """The backward's a/b of div's formula, merged by CSE with the forward's quotient, made the
    compiled backward read the output, and refuse a backward that eager runs."""
    monkeypatch.setattr(config, "partitioner", partitioner)
    _dynamo.reset()
    grads = []
    for fn in (normalized_then_clipped, minitorch.compile(normalized_then_clipped)):
        x = minitorch.tensor([[0.3, 0.5, -1.0]], requires_grad=True)
        fn(x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5)


def test_the_partition_gives_eager_values_without_compiling():
    fn, inputs = workloads(np.random.default_rng(0))["gelu"]
    parts = _partition(fn, inputs, "min_cut")
    with minitorch.no_grad():
        out, *saved = parts.forward(*inputs)
        (grad,) = parts.backward(*saved, minitorch.tensor(1.0, dtype=minitorch.float64))
    x = _fresh(inputs)[0]
    fn(x).backward()
    np.testing.assert_allclose(out.item(), fn(inputs[0]).item())
    np.testing.assert_allclose(grad.numpy(), x.grad.numpy())


def test_an_unknown_partitioner_is_an_error(monkeypatch):
    x = minitorch.rand(4, requires_grad=True)
    with pytest.raises(CompileError, match="unknown partitioner 'greedy'"):
        _partition(sincos, [x], "greedy")


@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_the_walkthrough_titles_the_forward_with_both_partitioners_bytes(partitioner, monkeypatch):
    monkeypatch.setattr(config, "partitioner", partitioner)
    _dynamo.reset()
    x = minitorch.rand(1000, requires_grad=True)
    with _logging.Recorder() as recorder:
        minitorch.compile(sincos)(x).sum().backward()
    (title,) = [a.title for a in recorder.artifacts if a.stage == "forward"]
    x_alone, sin_and_cos = (1, "4,000", "primals_1"), (2, "8,000", "sin, cos")  # float32
    mine, theirs = (x_alone, sin_and_cos) if partitioner == "min_cut" else (sin_and_cos, x_alone)
    other = next(p for p in PARTITIONERS if p != partitioner)
    assert (
        f'{mine[0]} saved for backward, {mine[1]} bytes: {mine[2]}; partitioner "{other}" '
        f"would save {theirs[0]}, {theirs[1]} bytes"
    ) in title


@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_the_walkthroughs_partitioner_flag(partitioner, capsys):
    from minitorch.compile.walkthrough import main

    before = config.partitioner
    _dynamo.reset()
    assert main([SINCOS_SCRIPT, "--stage", "forward", "--partitioner", partitioner]) == 0
    saved = "primals_1" if partitioner == "min_cut" else "sin, cos"
    assert f"bytes: {saved}; partitioner " in capsys.readouterr().out
    assert config.partitioner == before
