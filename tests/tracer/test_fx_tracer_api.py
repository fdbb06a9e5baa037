"""The overridable Tracer, concrete_args and generated code, held to torch.fx's documented API.

torch.fx.Tracer documents its policy methods: `create_node` and `create_proxy` (every node is
made through them), `is_leaf_module`, `call_module`, `getattr(attr, attr_val,
parameter_proxy_cache)`, `path_of_module` (NameError for a module that is not a submodule) and
`trace(root, concrete_args)`. `symbolic_trace(f, concrete_args=...)` keeps the input in the
generated signature and checks its value; inputs keep their default values.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import minitorch as torch
from minitorch import nn
from tracer.fx import GraphModule, Interpreter, Proxy, Tracer, symbolic_trace
from tracer.fx.symbolic_trace import ConcreteArgError


def assert_close(actual, expected) -> None:
    np.testing.assert_allclose(
        actual.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6
    )


class Stacked(nn.Module):
    """Numbered submodules (ModuleList, Sequential), a parameter read, a default input."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
        self.head = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
        self.register_buffer("shift", torch.ones(3))

    def forward(self, x, scale=2.0):
        for layer in self.layers:
            x = layer(x)
        return torch.stack([self.head(x), x]) * scale + self.layers[0].weight.sum() + self.shift


def model_and_input():
    torch.manual_seed(0)
    return Stacked(), torch.randn(2, 3)


# ---- create_node / create_proxy ----------------------------------------------------------


class Tagging(Tracer):
    """Tags every node it makes, as torch.fx's docs suggest for adding metadata."""

    def __init__(self):
        super().__init__()
        self.made = []
        self.proxied = []

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        node.meta["tag"] = "seen"
        self.made.append(node)
        return node

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        self.proxied.append(kind)
        return super().create_proxy(kind, target, args, kwargs, name, type_expr)


def test_an_overridden_create_node_makes_every_node():
    model, x = model_and_input()
    tracer = Tagging()
    graph = tracer.trace(model)
    assert tracer.made == graph.nodes
    assert all(n.meta["tag"] == "seen" for n in graph.nodes)
    kinds = {n.op for n in graph.nodes}
    assert kinds == {
        "placeholder",
        "get_attr",
        "call_function",
        "call_method",
        "call_module",
        "output",
    }
    assert set(tracer.proxied) == kinds - {"output"}  # the output is a node, not a Proxy
    assert_close(GraphModule(model, graph)(x), model(x))


class SinIsCos(Tracer):
    """create_proxy may change what is recorded: every minitorch.sin becomes minitorch.cos."""

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        if target is torch.sin:
            target = torch.cos
        return super().create_proxy(kind, target, args, kwargs, name, type_expr)


def test_what_create_proxy_records_is_what_runs():
    graph = SinIsCos().trace(lambda x: torch.sin(x) + 1)
    x = torch.randn(4)
    assert_close(GraphModule(nn.Module(), graph)(x), torch.cos(x) + 1)


# ---- modules: path_of_module, is_leaf_module, call_module, getattr -----------------------


def test_path_of_module_names_submodules_and_raises_name_error_for_others():
    model, _ = model_and_input()
    tracer = Tracer()
    tracer.trace(model)
    assert tracer.path_of_module(model.layers[1]) == "layers.1"
    assert tracer.path_of_module(model.head[0]) == "head.0"
    with pytest.raises(NameError, match="not installed as a submodule"):
        tracer.path_of_module(nn.Linear(3, 3))


class RecordsModules(Tracer):
    """Every module a leaf, and every call_module and parameter read logged."""

    def __init__(self):
        super().__init__()
        self.calls = []
        self.reads = []

    def is_leaf_module(self, m, module_qualified_name):
        return module_qualified_name != ""

    def call_module(self, m, forward, args, kwargs):
        self.calls.append(self.path_of_module(m))
        return super().call_module(m, forward, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        if isinstance(attr_val, torch.Tensor):
            self.reads.append(attr)
        return super().getattr(attr, attr_val, parameter_proxy_cache)


def test_is_leaf_module_call_module_and_getattr_overrides_are_asked():
    model, x = model_and_input()
    tracer = RecordsModules()
    graph = tracer.trace(model)
    assert tracer.calls == ["layers.0", "layers.1", "head"]
    assert tracer.reads == ["weight", "shift"]
    modules = [n.target for n in graph.nodes if n.op == "call_module"]
    assert modules == ["layers.0", "layers.1", "head"]  # head is a leaf: not traced into
    assert_close(GraphModule(model, graph)(x), model(x))


def test_trace_takes_concrete_args_and_returns_a_graph():
    model, x = model_and_input()
    graph = Tracer().trace(model, concrete_args={"scale": 3.0})
    assert_close(GraphModule(model, graph)(x, 3.0), model(x, 3.0))


# ---- concrete_args -------------------------------------------------------------------------


class Flagged(nn.Module):
    def forward(self, x, flag, bias):
        if flag:
            x = x.relu()
        return x if bias is None else x + bias


def test_concrete_args_keep_the_input_and_check_its_value():
    x = torch.randn(2, 3)
    gm = symbolic_trace(Flagged(), concrete_args={"flag": True, "bias": None})
    assert list(inspect.signature(gm.forward).parameters) == ["x", "flag", "bias"]
    assert_close(gm(x, True, None), x.relu())
    assert_close(gm(x, flag=1, bias=None), x.relu())  # PyTorch compares with ==: 1 == True
    with pytest.raises(
        AssertionError, match="flag has been specialized to have value True"
    ) as info:
        gm(x, False, None)
    assert isinstance(info.value, (ConcreteArgError, torch.MinitorchError))
    with pytest.raises(AssertionError, match="bias has been specialized to have value None"):
        gm(x, True, torch.ones(3))


def test_the_check_survives_dead_code_elimination_and_interpretation():
    gm = symbolic_trace(Flagged(), concrete_args={"flag": False, "bias": None})
    gm.graph.eliminate_dead_code()
    gm.recompile()
    x = torch.randn(2, 3)
    with pytest.raises(AssertionError, match="flag"):
        gm(x, True, None)
    with pytest.raises(AssertionError, match="flag"):
        Interpreter(gm).run(x, True, None)
    assert_close(Interpreter(gm).run(x, False, None), x)


def test_a_concrete_value_that_cannot_be_checked_warns():
    bias = torch.ones(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gm = symbolic_trace(Flagged(), concrete_args={"flag": False, "bias": bias})
    assert any("cannot check" in str(w.message) and "bias" in str(w.message) for w in caught)
    x = torch.randn(2, 3)
    assert_close(gm(x, False, bias), x + bias)


# ---- generated code: numbered submodules, defaults, recompile, print_readable ------------


def test_numbered_submodules_and_defaults_in_generated_code():
    model, x = model_and_input()
    gm = symbolic_trace(model)
    assert "getattr(self.layers, '0')" in gm.code and "getattr(self.head, '1')" in gm.code
    assert "def forward(self, x, scale = 2.0):" in gm.code
    assert_close(gm(x), model(x))
    assert_close(gm(x, 0.5), model(x, 0.5))
    assert_close(Interpreter(gm).run(x), model(x))  # the default, without the generated code


def test_flattened_parameters_of_numbered_submodules():
    model, x = model_and_input()

    class NoLeaves(Tracer):
        def is_leaf_module(self, m, module_qualified_name):
            return False

    gm = GraphModule(model, NoLeaves().trace(model))
    targets = [n.target for n in gm.graph.nodes if n.op == "get_attr"]
    assert "layers.0.weight" in targets and "head.0.bias" in targets
    assert "getattr(self.layers, '0').weight" in gm.code
    assert_close(gm(x), model(x))


def test_recompile_and_print_readable_after_an_edit():
    model, x = model_and_input()
    gm = symbolic_trace(model)
    (stack,) = [n for n in gm.graph.nodes if n.target is torch.stack]
    stack.target = torch.cat
    code = gm.recompile()
    assert "minitorch.cat(" in code and code == gm.code
    expected = (
        torch.cat(
            [model.head(model.layers[1](model.layers[0](x))), model.layers[1](model.layers[0](x))]
        )
        * 2.0
    )
    assert_close(gm(x), expected + model.layers[0].weight.sum() + model.shift)
    text = gm.print_readable(print_output=False)
    assert text.startswith("class Stacked(minitorch.nn.Module):\n    def forward(self, x, scale")
    compile(text, "<print_readable>", "exec")  # valid Python


def test_generated_code_with_numbered_submodules_compiles_into_one_graph():
    """fx code reads `getattr(self.layers, '0')`, as PyTorch's does: capture must follow it."""
    model, x = model_and_input()
    gm = symbolic_trace(model)
    explained = torch._dynamo.explain(gm)(x)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)
    assert_close(torch.compile(gm)(x), model(x))


def test_interpreter_takes_defaults_and_names_a_missing_input():
    model, x = model_and_input()
    gm = symbolic_trace(model)
    assert_close(Interpreter(gm).run(x, 0.5), model(x, 0.5))
    with pytest.raises(TypeError, match="missing a value for its input 'x'") as info:
        Interpreter(gm).run()
    assert isinstance(info.value, torch.MinitorchError)


class Marked(Proxy):
    """A Proxy subclass, as a tracer's `proxy` may return (torch.fx's extension point)."""


class MarkingTracer(Tracer):
    def proxy(self, node):
        return Marked(node, self)


def test_an_overridden_proxy_makes_every_value_seen_in_forward():
    seen = []

    def f(x):
        y = torch.relu(x) + 1
        seen.extend([x, y, y.sum()])
        return y

    graph = MarkingTracer().trace(f)
    assert all(type(v) is Marked for v in seen)
    x = torch.randn(4)
    assert_close(GraphModule(nn.Module(), graph)(x), f(x))
