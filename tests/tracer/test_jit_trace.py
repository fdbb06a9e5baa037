"""`minitorch.jit.trace`: the seed documents' examples, and traced code held to eager minitorch.

Seed 000 names three things a tracer meets (a branch on a value, shape-dependent code, code
outside the library); seed 004 traces an `nn.Module` in eval mode, plain and compiled.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch as torch
from minitorch import nn
from minitorch.dtype import float32
from minitorch.jit import TracerWarning
from minitorch.ops.registry import OpDef, TensorMeta
from tracer.fx import GraphModule, Interpreter


def close(a, b) -> None:
    np.testing.assert_allclose(
        np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()), rtol=1e-5, atol=1e-6
    )


# ---- seed 000: the three problems of graph capture ------------------------------------------


def conditional_computation(x):
    if x.sum() < 0:
        return x + 1
    else:
        return x - 1


def shape_dependent(x):
    bsz, *sizes = x.shape
    return x.reshape(bsz, -1)


def external_code(x):
    return x + torch.from_numpy(np.random.random((5, 5, 5)))


CONDITIONAL_GRAPH = """\
graph():
    %x : [num_users=1] = placeholder[target=x]
    %sub : [num_users=1] = call_function[target=minitorch.ops.sub](args = (%x, 1), kwargs = {})
    return sub"""

CONDITIONAL_CODE = """\
def forward(self, x):
    sub = minitorch.ops.sub(x, 1);  x = None
    return sub
"""


def test_seed_000_branch_on_a_value_warns_and_is_frozen(capsys):
    input = torch.ones(5, 5, 5)  # sum > 0: the `else` branch
    with pytest.warns(TracerWarning, match="Python bool.*test_jit_trace.py"):
        f_traced = torch.jit.trace(conditional_computation, input)
    print(f_traced.graph)
    print(f_traced.code)
    assert capsys.readouterr().out == f"{CONDITIONAL_GRAPH}\n{CONDITIONAL_CODE}\n"
    assert isinstance(f_traced, GraphModule)
    # A negative input would take the other branch eagerly; the trace stays on `x - 1`.
    y = -torch.ones(5, 5, 5)
    close(f_traced(y), y - 1)
    close(conditional_computation(y), y + 1)


def test_seed_000_shapes_become_constants():
    f_traced = torch.jit.trace(shape_dependent, torch.randn(5, 5, 5))
    assert f_traced.code == (
        "def forward(self, x):\n"
        "    reshape = minitorch.ops.reshape(x, (5, -1));  x = None\n"
        "    return reshape\n"
    )
    y = torch.randn(5, 5, 5)
    close(f_traced(y), shape_dependent(y))


def test_seed_000_outside_code_is_frozen_as_a_constant():
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)  # from_numpy converts nothing: no warning
        f_traced = torch.jit.trace(external_code, torch.randn(5, 5, 5))
    assert [(n.op, str(n.target)) for n in f_traced.graph.nodes] == [
        ("placeholder", "x"),
        ("get_attr", "_tensor_constant0"),
        ("call_function", "minitorch.ops.add"),
        ("output", "output"),
    ]
    y = torch.randn(5, 5, 5)
    close(f_traced(y), y + f_traced._tensor_constant0)  # the same random numbers every call
    close(f_traced(y), f_traced(y))


# ---- seed 004: exporting a module by tracing ---------------------------------------------


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(10, 5)

    def forward(self, x):
        return self.linear(x)


MYMODEL_GRAPH = """\
graph():
    %x : [num_users=1] = placeholder[target=x]
    %linear_weight : [num_users=1] = get_attr[target=linear.weight]
    %permute : [num_users=1] = call_function[target=minitorch.ops.permute](args = (%linear_weight, (1, 0)), kwargs = {})
    %mm : [num_users=1] = call_function[target=minitorch.ops.mm](args = (%x, %permute), kwargs = {})
    %linear_bias : [num_users=1] = get_attr[target=linear.bias]
    %add : [num_users=1] = call_function[target=minitorch.ops.add](args = (%mm, %linear_bias), kwargs = {})
    return add"""  # noqa: E501 - the printed form, exactly


def test_seed_004_trace_a_module():
    model = MyModel()
    model.eval()
    example_input = torch.randn(1, 10)
    traced_model = torch.jit.trace(model, example_input)
    assert str(traced_model.graph) == MYMODEL_GRAPH
    assert not traced_model.training
    # The parameters are the module's own tensors, so the trace follows later updates.
    assert dict(traced_model.named_parameters()) == dict(model.named_parameters())
    x = torch.randn(3, 10)
    close(traced_model(x), model(x))
    with torch.no_grad():
        model.linear.bias.fill_(2.0)
    close(traced_model(x), model(x))


def test_seed_004_trace_a_compiled_module():
    model = MyModel()
    model.eval()
    compiled_model = torch.compile(model, backend="eager")
    example_input = torch.randn(1, 10)
    compiled_model(example_input)
    traced_model = torch.jit.trace(compiled_model, example_input)
    assert str(traced_model.graph) == MYMODEL_GRAPH  # what the compiled module computes
    x = torch.randn(2, 10)
    close(traced_model(x), model(x))


def test_trace_a_compiled_function_records_its_ops():
    def f(x):
        return (x.sin() + 1).cos() * x

    compiled = torch.compile(f, backend="eager")
    x = torch.randn(4, 8)
    compiled(x)
    traced = torch.jit.trace(compiled, x)
    assert [str(n.target) for n in traced.graph.nodes if n.op == "call_function"] == [
        "minitorch.ops.sin",
        "minitorch.ops.add",
        "minitorch.ops.cos",
        "minitorch.ops.mul",
    ]
    y = torch.randn(4, 8)
    close(traced(y), f(y))


# ---- modules: parameters and buffers are read by get_attr --------------------------------


def test_sequential_linear_relu_records_get_attr_for_weights():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    traced = torch.jit.trace(model, torch.randn(2, 4))
    reads = [n.target for n in traced.graph.nodes if n.op == "get_attr"]
    assert reads == ["0.weight", "0.bias"]
    assert list(traced.state_dict()) == ["0.weight", "0.bias"]
    assert all(n.op != "call_module" for n in traced.graph.nodes)  # ops, not layers
    x = torch.randn(5, 4)
    close(traced(x), model(x))


def test_buffers_stay_buffers():
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).eval()
    model[1].running_mean.fill_(0.5)  # non-trivial statistics
    traced = torch.jit.trace(model, torch.randn(2, 4))
    assert sorted(dict(traced.named_buffers())) == ["1.running_mean", "1.running_var"]
    assert sorted(dict(traced.named_parameters())) == ["0.bias", "0.weight", "1.bias", "1.weight"]
    x = torch.randn(6, 4)
    close(traced(x), model(x))


# ---- generated code and editing -----------------------------------------------------------


def test_code_is_python_that_reproduces_the_function():
    def f(x, y):
        return (x @ y).softmax(dim=-1).sum(dim=0), x.exp()

    x, y = torch.randn(3, 4), torch.randn(4, 2)
    traced = torch.jit.trace(f, (x, y))
    namespace = {"minitorch": torch}
    exec(traced.code, namespace)  # noqa: S102 - the generated text, on its own
    x2, y2 = torch.randn(3, 4), torch.randn(4, 2)
    for got, want in zip(namespace["forward"](traced, x2, y2), f(x2, y2)):
        close(got, want)
    assert Interpreter(traced).run(x2, y2)[1].shape == (3, 4)


def test_trace_edit_recompile_run():
    traced = torch.jit.trace(lambda x: x.sin() * 2, torch.randn(3))
    (sin,) = [n for n in traced.graph.nodes if n.target is torch.ops.sin]
    sin.target = torch.ops.cos
    traced.recompile()
    assert "minitorch.ops.cos(x)" in traced.code
    x = torch.randn(3)
    close(traced(x), x.cos() * 2)


def test_detach_reads_the_same_node():
    traced = torch.jit.trace(lambda x: x.detach() * 2, torch.randn(3))
    assert all(n.op != "get_attr" for n in traced.graph.nodes)  # not frozen as a constant
    x = torch.randn(3)
    close(traced(x), x * 2)


def test_multi_output_ops_get_one_getitem_per_output():
    # An unregistered two-output op: (x + 1, x * 2).
    pair = OpDef(
        "pair",
        "pointwise",
        meta=lambda x: (TensorMeta(x.shape, float32),) * 2,
        impl=lambda xp, a: (a + 1, a * 2),
    )
    traced = torch.jit.trace(lambda x: pair(x)[1], torch.randn(3))
    assert [(n.op, n.name) for n in traced.graph.nodes] == [
        ("placeholder", "x"),
        ("call_function", "pair"),
        ("call_function", "getitem_1"),
        ("output", "output"),
    ]
    x = torch.randn(3)
    close(Interpreter(traced).run(x), x * 2)


# ---- what the trace refuses or warns about, and that it cleans up ---------------------------


@pytest.mark.parametrize("convert", [float, int, lambda t: t.item(), lambda t: t.tolist()])
def test_every_conversion_to_python_warns(convert):
    with pytest.warns(TracerWarning) as record:
        torch.jit.trace(lambda x: x * convert(x.sum()), torch.ones(2))
    assert len(record) == 1  # bool(x) calls x.item(): one warning, not two


def test_in_place_ops_are_refused_and_tensor_is_restored():
    bool_before, item_before = torch.Tensor.__bool__, torch.Tensor.item

    def f(x):
        y = x * 1
        y.add_(1)
        return y

    with pytest.raises(torch.CompileError, match="add_ writes a tensor in place"):
        torch.jit.trace(f, torch.randn(3))
    assert torch.Tensor.__bool__ is bool_before and torch.Tensor.item is item_before
    assert "_in_place" not in torch.Tensor.__dict__  # inherited again, from the mixin
    y = torch.zeros(2)
    y.add_(1)  # in-place ops work again outside the trace
    assert y.tolist() == [1.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        assert bool(y.sum() > 0)  # and conversions no longer warn


def test_example_inputs_must_be_tensors():
    with pytest.raises(torch.CompileError, match="example inputs must be tensors.*'n'"):
        torch.jit.trace(lambda x, n: x * n, (torch.randn(2), 3))


def test_a_compiled_function_called_inside_a_trace_is_recorded_not_frozen():
    inner = torch.compile(lambda x: torch.sin(x) * 2, backend="eager")

    def outer(x):
        return inner(x) + 1

    traced = torch.jit.trace(outer, torch.rand(4))
    x = torch.rand(4)
    np.testing.assert_allclose(traced(x).numpy(), outer(x).numpy(), rtol=1e-6)
    assert "minitorch.ops.sin" in traced.code
