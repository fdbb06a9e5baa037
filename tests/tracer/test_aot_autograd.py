"""AOT autograd: the joint graph, its partition, and aot_eager against eager autograd.

aot_eager is held to eager minitorch: the same outputs, and the same `.grad` after backward.
"""

from __future__ import annotations

import importlib
import operator
import warnings

import numpy as np
import pytest

import minitorch
from minitorch.ops import OPS
from tracer.aot import aot_autograd, partition_joint, trace_joint
from tracer.aot.aot_autograd import CompiledFunctionBackward
from tracer.fx import Graph, GraphModule

# AOT autograd, then each graph's own code (minitorch.compile's "aot_eager", for one shape).
aot_eager = aot_autograd(lambda gm, example_inputs: gm.forward)

# The module, which `tracer.aot.aot_autograd` (the function of the same name) hides.
AOT_MODULE = importlib.import_module("tracer.aot.aot_autograd")


def sincos_module() -> GraphModule:
    """sin(x)**2 + cos(x)**2, hand-built as bytecode capture would hand it over."""
    g = Graph()
    x = g.placeholder("x")
    pow_1 = g.call_function(operator.pow, (g.call_function(minitorch.sin, (x,)), 2))
    pow_2 = g.call_function(operator.pow, (g.call_function(minitorch.cos, (x,)), 2))
    g.output((g.call_function(operator.add, (pow_1, pow_2)),))
    return GraphModule({}, g)


def wrap(fn, num_inputs: int) -> GraphModule:
    """A hand-built GraphModule that calls `fn` on its inputs (one call_function node)."""
    g = Graph()
    inputs = tuple(g.placeholder(f"x{i}") for i in range(num_inputs))
    g.output(g.call_function(fn, inputs))
    return GraphModule({}, g)


SINCOS_JOINT = """\
graph():
    %primals_1 : [num_users=2] = placeholder[target=primals_1]
    %tangents_1 : [num_users=2] = placeholder[target=tangents_1]
    %sin : [num_users=3] = call_function[target=minitorch.ops.sin](args = (%primals_1,), kwargs = {})
    %pow_1 : [num_users=1] = call_function[target=minitorch.ops.pow](args = (%sin, 2), kwargs = {})
    %cos : [num_users=3] = call_function[target=minitorch.ops.cos](args = (%primals_1,), kwargs = {})
    %pow_2 : [num_users=1] = call_function[target=minitorch.ops.pow](args = (%cos, 2), kwargs = {})
    %add : [num_users=1] = call_function[target=minitorch.ops.add](args = (%pow_1, %pow_2), kwargs = {})
    %mul : [num_users=1] = call_function[target=minitorch.ops.mul](args = (%sin, 2), kwargs = {})
    %mul_1 : [num_users=1] = call_function[target=minitorch.ops.mul](args = (%tangents_1, %mul), kwargs = {})
    %mul_2 : [num_users=1] = call_function[target=minitorch.ops.mul](args = (%mul_1, %cos), kwargs = {})
    %mul_3 : [num_users=1] = call_function[target=minitorch.ops.mul](args = (%cos, 2), kwargs = {})
    %mul_4 : [num_users=1] = call_function[target=minitorch.ops.mul](args = (%tangents_1, %mul_3), kwargs = {})
    %neg : [num_users=1] = call_function[target=minitorch.ops.neg](args = (%sin,), kwargs = {})
    %mul_5 : [num_users=1] = call_function[target=minitorch.ops.mul](args = (%mul_4, %neg), kwargs = {})
    %add_1 : [num_users=1] = call_function[target=minitorch.ops.add](args = (%mul_2, %mul_5), kwargs = {})
    return (add, add_1)"""  # noqa: E501 - pinned as printed

SINCOS_FORWARD = """\
def forward(self, primals_1):
    sin = minitorch.ops.sin(primals_1)
    pow_1 = minitorch.ops.pow(sin, 2)
    cos = minitorch.ops.cos(primals_1);  primals_1 = None
    pow_2 = minitorch.ops.pow(cos, 2)
    add = minitorch.ops.add(pow_1, pow_2);  pow_1 = pow_2 = None
    return (add, sin, cos)
"""


def _placeholders(gm: GraphModule) -> list[str]:
    return [n.name for n in gm.graph.nodes if n.op == "placeholder"]


def _outputs(gm: GraphModule) -> list[str]:
    return [n.name for n in gm.graph.nodes[-1].args[0]]


def _targets(gm: GraphModule) -> set:
    return {n.target for n in gm.graph.nodes if n.op == "call_function"}


# ---- the joint graph and its partition -------------------------------------------------------


def test_sincos_joint_graph():
    x = minitorch.randn(8, requires_grad=True)
    joint, spec = trace_joint(sincos_module(), [x])
    assert str(joint.graph) == SINCOS_JOINT
    assert (spec.num_primals, spec.num_outputs) == (1, 1)
    assert spec.grad_inputs == (0,) and spec.differentiable_outputs == (0,)
    joint.graph.lint()


def test_joint_graph_placeholders_carry_fake_values():
    x = minitorch.randn(2, 3, dtype=minitorch.float64, requires_grad=True)
    joint, _ = trace_joint(sincos_module(), [x])
    for node in joint.graph.nodes:
        if node.op == "placeholder":
            val = node.meta["val"]
            assert (tuple(val.shape), val.dtype) == ((2, 3), minitorch.float64)


def test_sincos_partition_saves_sin_and_cos():
    x = minitorch.randn(8, requires_grad=True)
    parts = partition_joint(*trace_joint(sincos_module(), [x]), "default")
    assert parts.num_saved == 2
    assert parts.forward.code == SINCOS_FORWARD
    assert _placeholders(parts.backward) == ["sin", "cos", "tangents_1"]
    assert _outputs(parts.backward) == ["add_1"]
    # the backward recomputes 2*sin and 2*cos rather than loading them
    assert _targets(parts.backward) == {OPS["mul"], OPS["neg"], OPS["add"]}
    parts.forward.graph.lint()
    parts.backward.graph.lint()


def test_partitioned_graphs_compute_the_value_and_the_gradient():
    values = np.linspace(-2, 2, 8)
    x = minitorch.tensor(values, dtype=minitorch.float64, requires_grad=True)
    parts = partition_joint(*trace_joint(sincos_module(), [x]), "default")
    with minitorch.no_grad():
        out, sin, cos = parts.forward(x)
        tangent = minitorch.tensor(np.arange(8.0))
        (grad,) = parts.backward(sin, cos, tangent)
    np.testing.assert_allclose(out.numpy(), np.ones(8))
    np.testing.assert_allclose(grad.numpy(), np.zeros(8), atol=1e-12)  # d/dx 1 = 0


# ---- aot_eager against eager -----------------------------------------------------------------


def _leaf(shape, requires_grad=True, positive=False, dtype=minitorch.float32, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.5, 2.0, shape) if positive else rng.standard_normal(shape)
    return minitorch.tensor(values, dtype=dtype, requires_grad=requires_grad)


def _copy(t: minitorch.Tensor) -> minitorch.Tensor:
    return minitorch.tensor(t.detach().numpy().copy(), requires_grad=t.requires_grad)


def check_aot_eager(fn, inputs, backward_through=None) -> None:
    """aot_eager(fn) gives eager's outputs, and the same .grad after a weighted backward.

    `backward_through` picks which outputs the loss uses (all that require grad by default).
    """
    eager_inputs = [_copy(t) for t in inputs]
    compiled = aot_eager(wrap(fn, len(inputs)), inputs)
    outs = compiled(*inputs)
    expected = fn(*eager_inputs)

    assert isinstance(outs, tuple) and len(outs) == len(expected)
    for out, exp in zip(outs, expected):
        assert tuple(out.shape) == tuple(exp.shape) and out.dtype is exp.dtype
        assert out.requires_grad == exp.requires_grad
        rtol = 1e-5 if out.dtype is minitorch.float32 else 1e-12
        np.testing.assert_allclose(out.detach().numpy(), exp.detach().numpy(), rtol=rtol)
        if out.requires_grad:
            assert isinstance(out.grad_fn, CompiledFunctionBackward)

    chosen = backward_through or [i for i, e in enumerate(expected) if e.requires_grad]
    rng = np.random.default_rng(1)
    weights = [
        minitorch.tensor(rng.standard_normal(tuple(expected[i].shape)), dtype=expected[i].dtype)
        for i in chosen
    ]

    def loss(results):
        total = 0.0
        for i, w in zip(chosen, weights):
            total = total + (results[i] * w).sum()
        return total

    loss(outs).backward()
    loss(expected).backward()
    for t, e in zip(inputs, eager_inputs):
        assert t.is_leaf
        if e.grad is None:
            assert t.grad is None
        else:
            assert tuple(t.grad.shape) == tuple(t.shape)
            np.testing.assert_allclose(t.grad.numpy(), e.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_aot_eager_sincos():
    x = _leaf((8,))
    eager_x = _copy(x)
    (out,) = aot_eager(sincos_module(), [x])(x)
    out.sum().backward()
    (minitorch.sin(eager_x) ** 2 + minitorch.cos(eager_x) ** 2).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), np.ones(8), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), eager_x.grad.numpy(), atol=1e-6)


def test_aot_eager_broadcasting():
    def f(x, b, s):
        return (minitorch.exp(x * b) - b + s,)

    check_aot_eager(f, [_leaf((3, 4)), _leaf((4,), seed=1), _leaf((), seed=2)])


def test_aot_eager_sum_and_mean():
    def f(x):
        return (x.sum(dim=1), x.mean(dim=0, keepdim=True), (x * x).mean(), x.sum((0, -1)))

    check_aot_eager(f, [_leaf((2, 3, 4))])


def test_aot_eager_division():
    def f(x, y):
        return (x / y, 1.0 / y, x / 4.0)

    check_aot_eager(f, [_leaf((3, 2)), _leaf((2,), positive=True, seed=1)])


def test_aot_eager_pow():
    def f(x, y):
        return (x**2, x**3, y**0.5, y**-1.5, x**1)

    check_aot_eager(f, [_leaf((5,)), _leaf((5,), positive=True, seed=1)])


def test_aot_eager_views():
    def f(x):
        return (x.reshape(2, -1).expand(3, 2, 6).sum(0).log(),)

    check_aot_eager(f, [_leaf((3, 4), positive=True)])


def test_aot_eager_with_an_input_that_does_not_require_grad():
    def f(x, c):
        return (x * c + minitorch.sin(c),)

    c = _leaf((3,), requires_grad=False, seed=1)
    check_aot_eager(f, [_leaf((3,)), c])
    assert c.grad is None


def test_aot_eager_multiple_outputs():
    def f(x, y):
        return (minitorch.sin(x), x * y, (x + y).sum())

    check_aot_eager(f, [_leaf((4,)), _leaf((4,), seed=1)])


def test_aot_eager_backward_through_some_outputs_only():
    def f(x, y):
        return (minitorch.sin(x), x * y, (x + y).sum())

    check_aot_eager(f, [_leaf((4,)), _leaf((4,), seed=1)], backward_through=[1])


def test_aot_eager_an_output_that_needs_no_grad():
    def f(x, c):
        return (x * 2.0, c + 1.0)

    check_aot_eager(f, [_leaf((3,)), _leaf((3,), requires_grad=False, seed=1)])


def test_aot_eager_an_input_that_is_not_used():
    def f(x, unused):
        return (x * 2.0,)

    unused = _leaf((3,), seed=1)
    check_aot_eager(f, [_leaf((3,)), unused])
    assert unused.grad is None


def test_a_missing_tangent_is_zeros_of_the_output_dtype():
    def f(x, y):
        return (x * 2.0, y * 3.0)

    x, y = _leaf((3,), dtype=minitorch.float64), _leaf((3,), dtype=minitorch.float64, seed=1)
    a, _ = aot_eager(wrap(f, 2), [x, y])(x, y)
    a.sum().backward()  # no gradient reaches the second output
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])
    assert x.grad.dtype is minitorch.float64
    # Eager leaves y.grad None; a compiled backward, like PyTorch's, fills in zeros.
    assert y.grad is None or (y.grad.dtype is minitorch.float64 and not y.grad.numpy().any())


def test_aot_eager_float64():
    def f(x):
        return (minitorch.exp(x) * x,)

    x = _leaf((3,), dtype=minitorch.float64)
    check_aot_eager(f, [x])
    assert x.grad.dtype is minitorch.float64


def test_a_graph_returning_its_input_leaves_the_input_a_leaf():
    g = Graph()
    x = g.placeholder("x")
    g.output((x, g.call_function(minitorch.sin, (x,))))
    t = _leaf((3,))
    same, sin = aot_eager(GraphModule({}, g), [t])(t)
    assert t.is_leaf and t.grad_fn is None
    (same.sum() + sin.sum()).backward()
    np.testing.assert_allclose(t.grad.numpy(), 1 + np.cos(t.detach().numpy()), rtol=1e-6)


def test_second_backward_through_a_compiled_graph_raises():
    x = _leaf((3,))
    (out,) = aot_eager(sincos_module(), [x])(x)
    loss = out.sum()
    loss.backward()
    with pytest.raises(minitorch.AutogradError, match="second time"):
        loss.backward()


# ---- inference graphs, decompositions, constants ---------------------------------------------


class Recorder:
    """A graph compiler that keeps each graph it is given and runs its code."""

    def __init__(self) -> None:
        self.graphs: list[GraphModule] = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward


def _no_joint(*args, **kwargs):
    raise AssertionError("a joint graph was traced although nothing requires grad")


def test_inference_graph_when_nothing_requires_grad(monkeypatch):
    monkeypatch.setattr(AOT_MODULE, "trace_joint", _no_joint)
    record = Recorder()
    x = _leaf((4,), requires_grad=False)
    (out,) = aot_autograd(record)(sincos_module(), [x])(x)
    assert not out.requires_grad
    np.testing.assert_allclose(out.numpy(), np.ones(4), rtol=1e-6)
    (graph,) = record.graphs
    assert _placeholders(graph) == ["arg0_1"]
    assert _outputs(graph) == ["add"]


def test_inference_graph_under_no_grad(monkeypatch):
    monkeypatch.setattr(AOT_MODULE, "trace_joint", _no_joint)
    record = Recorder()
    x = _leaf((4,))
    with minitorch.no_grad():
        (out,) = aot_autograd(record)(sincos_module(), [x])(x)
    assert not out.requires_grad and len(record.graphs) == 1
    assert _placeholders(record.graphs[0]) == ["arg0_1"]


def test_mean_is_decomposed():
    def f(x):
        return (x.mean(dim=1),)

    for requires_grad in (False, True):
        record = Recorder()
        x = _leaf((2, 3), requires_grad=requires_grad)
        aot_autograd(record)(wrap(f, 1), [x])
        for gm in record.graphs:
            assert all(n.target is not OPS["mean"] for n in gm.graph.nodes)
            assert "mean" not in gm.code
        assert {OPS["sum"], OPS["div"]} <= _targets(record.graphs[0])


def test_a_tensor_made_inside_the_function_becomes_a_get_attr_constant():
    def f(x):
        return (x * minitorch.tensor([1.0, 2.0, 3.0]),)

    x = _leaf((3,))
    joint, spec = trace_joint(wrap(f, 1), [x])
    (constant,) = joint.graph.find_nodes(op="get_attr")
    assert constant.target == "_tensor_constant0"
    assert joint._tensor_constant0.tolist() == [1.0, 2.0, 3.0]
    parts = partition_joint(joint, spec)
    assert parts.forward.graph.find_nodes(op="get_attr")
    assert "self._tensor_constant0" in parts.forward.code
    check_aot_eager(f, [x])


def test_random_ops_are_not_merged_by_common_subexpression_elimination():
    from minitorch.nn import functional as NF

    x = minitorch.rand(64, requires_grad=True)
    joint, _ = trace_joint(lambda x: (NF.dropout(x, 0.5) + NF.dropout(x, 0.5),), [x])
    # dropout_mask is dropout_keep(x, p, rng_state(x)): each draw reads the generator once
    draws = [n for n in joint.graph.nodes if getattr(n.target, "name", "") == "rng_state"]
    masks = [n for n in joint.graph.nodes if getattr(n.target, "name", "") == "dropout_keep"]
    assert len(draws) == 2 and len(masks) == 2


def drops_a_draw(x, z):
    from minitorch.nn import functional as NF

    NF.dropout(z, 0.25, training=True)  # nothing reads it, but it advanced the generator
    return NF.dropout(x, p=0.5)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_draw_nothing_reads_still_advances_the_generator(backend):
    # found by the fuzzer (seed 203851): the training graph's forward dropped the draw, so the
    # next dropout drew another mask (an inference graph kept it)
    x, z = (minitorch.ones(4, 16, dtype=minitorch.float64, requires_grad=True) for _ in range(2))
    minitorch.manual_seed(0)
    eager = drops_a_draw(x, z)
    minitorch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager would hide the bug
        compiled = minitorch.compile(drops_a_draw, backend=backend)(x, z)
    np.testing.assert_array_equal(compiled.detach().numpy(), eager.detach().numpy())
    compiled.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), eager.detach().numpy())  # the mask, times 2
