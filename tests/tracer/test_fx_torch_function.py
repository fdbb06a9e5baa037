"""The __torch_function__ protocol ([Note: __torch_function__]) and Proxies in minitorch calls.

PyTorch's documented protocol (torch.overrides, "Extending torch with a Tensor-like type"): a
class defining the classmethod `__torch_function__(cls, func, types, args=(), kwargs=None)` takes
over any torch function given one of its instances, also inside lists (`torch.cat`); subclasses
are asked before their bases; `NotImplemented` passes the call on; when every class declines,
the call raises a TypeError. torch.fx's Proxy uses it, so `torch.cat([p, q])` records a node
whoever made the Proxies.
"""

from __future__ import annotations

import operator
import types

import numpy as np
import pytest

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.overrides import _COVERED, has_torch_function, overridable
from tracer.fx import Graph, GraphModule, Proxy, TraceError, Transformer, symbolic_trace
from tracer.fx.proxy import GraphAppendingTracer


def assert_close(actual, expected) -> None:
    np.testing.assert_allclose(
        actual.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6
    )


class Logged:
    """A tensor-like wrapper, as in PyTorch's docs: logs each call, then runs it on the tensor."""

    calls: list = []

    def __init__(self, t):
        self.t = t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((func, types, args, kwargs))
        return func(*_unwrap(args), **_unwrap(kwargs or {}))


def _unwrap(a):
    if isinstance(a, Logged):
        return a.t
    if isinstance(a, (list, tuple)):
        return type(a)(_unwrap(x) for x in a)
    if isinstance(a, dict):
        return {k: _unwrap(v) for k, v in a.items()}
    return a


# ---- the protocol ----------------------------------------------------------------------------


# Not functions of tensors in PyTorch either (torch.overrides.get_ignored_functions()).
NOT_OVERRIDABLE = {
    "compile",
    "is_grad_enabled",
    "load",
    "save",
    "is_autocast_enabled",
    "get_autocast_dtype",
    "get_float32_matmul_precision",
    "set_float32_matmul_precision",
}


def test_every_public_function_hands_the_call_over():
    """A function added to minitorch or nn.functional later must be covered too."""
    public = [
        (f"minitorch.{n}", getattr(torch, n)) for n in torch.__all__ if n not in NOT_OVERRIDABLE
    ]
    public += [(f"F.{n}", getattr(F, n)) for n in F.__all__]
    missing = [
        name for name, fn in public if isinstance(fn, types.FunctionType) and fn not in _COVERED
    ]
    assert missing == [], (
        "add make_overridable(globals(), __all__) at the end of their module "
        "(see [Note: __torch_function__])"
    )


def test_the_hook_gets_func_types_args_and_kwargs_and_its_result_is_returned():
    Logged.calls.clear()
    x = torch.randn(2, 3)
    wrapped = Logged(x)
    out = torch.cat([x, wrapped], dim=0)  # the instance is inside a list
    ((func, kinds, args, kwargs),) = Logged.calls
    assert func is torch.cat and kinds == (Logged,)
    assert args == ([x, wrapped],) and kwargs == {"dim": 0}
    np.testing.assert_array_equal(out.numpy(), np.concatenate([x.numpy(), x.numpy()]))


@pytest.mark.parametrize(
    "call",
    [
        lambda w: torch.sum(w, dim=1),
        lambda w: F.relu(w),
        lambda w: F.linear(w, torch.ones(4, 3)),
        lambda w: torch.zeros_like(w),
        lambda w: torch.randn(2, 3).add(w),  # a Tensor method, with it as an argument
        lambda w: torch.where(torch.randn(2, 3) > 0, w, 0.0),
    ],
)
def test_functions_nn_functional_factories_and_methods_all_hand_it_over(call):
    Logged.calls.clear()
    x = torch.randn(2, 3)
    torch.manual_seed(0)
    got = call(Logged(x))
    torch.manual_seed(0)
    assert_close(got, call(x))
    assert len(Logged.calls) == 1


def test_subclasses_first_and_not_implemented_passes_the_call_on():
    asked = []

    class Base:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            asked.append(("Base", types))
            return "base"

    class Derived(Base):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            asked.append(("Derived", types))
            return NotImplemented

    assert torch.add(Base(), Derived()) == "base"
    assert asked == [("Derived", (Derived, Base)), ("Base", (Derived, Base))]


def test_when_every_class_declines_it_is_a_type_error_naming_the_function():
    class Declines:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    with pytest.raises(
        TypeError, match=r"no implementation found for 'minitorch.sin'.*Declines"
    ) as info:
        torch.sin(Declines())
    assert isinstance(info.value, torch.MinitorchError)


def test_plain_arguments_take_the_ordinary_path():
    x = torch.randn(3)
    assert not has_torch_function((x, 1, [x, 2.0], None))
    assert has_torch_function((x, [x, (Logged(x),)]))
    with pytest.raises(TypeError, match="expected a Tensor"):  # errors are unchanged
        torch.sin([1.0])


# ---- Proxies outside symbolic_trace's own calls ----------------------------------------------


def test_a_graph_built_by_hand_records_minitorch_calls_on_proxies():
    graph = Graph()
    tracer = GraphAppendingTracer(graph)  # one tracer for all: a call takes one tracer's Proxies
    x = Proxy(graph.placeholder("x"), tracer)
    y = Proxy(graph.placeholder("y"), tracer)
    out = torch.cat([x, F.relu(y)], dim=1) * 2
    graph.output(out.node)
    cat = out.node.args[0]
    assert (cat.op, cat.target, cat.kwargs) == ("call_function", torch.cat, {"dim": 1})
    assert cat.args[0][0] is x.node and cat.args[0][1].target is F.relu
    gm = GraphModule(torch.nn.Module(), graph)
    a, b = torch.randn(2, 3), torch.randn(2, 2)
    assert_close(gm(a, b), torch.cat([a, F.relu(b)], dim=1) * 2)


def test_graph_appending_tracer_extends_a_traced_graph():
    gm = symbolic_trace(lambda x: x.sin())
    graph = gm.graph
    (output,) = graph.find_nodes(op="output")
    tracer = GraphAppendingTracer(graph)
    with graph.inserting_before(output):
        extra = torch.stack([Proxy(output.args[0], tracer), Proxy(output.args[0], tracer) + 1])
    output.args = (extra.node,)
    gm.recompile()
    x = torch.randn(3)
    assert_close(gm(x), torch.stack([x.sin(), x.sin() + 1]))


def test_proxy_without_a_tracer_appends_to_its_nodes_graph():
    graph = Graph()
    x = Proxy(graph.placeholder("x"))
    assert isinstance(x.tracer, GraphAppendingTracer) and x.tracer.graph is graph
    out = torch.sum(x.exp(), dim=0)
    assert [n.op for n in graph.nodes] == ["placeholder", "call_method", "call_function"]
    assert out.node.target is torch.sum and out.node.graph is graph


def test_proxies_of_two_tracers_in_one_call_are_refused():
    graph = Graph()  # as in PyTorch, even two Proxy(node) of one graph: a tracer each
    x = Proxy(graph.placeholder("x"))
    y = Proxy(graph.placeholder("y"))
    with pytest.raises(TraceError, match="2 different tracers"):
        torch.cat([x, y])


def test_symbolic_trace_records_cat_and_stack_of_proxies_and_factories():
    def f(x, y):
        both = torch.cat([x, y], dim=-1)
        return torch.stack((both, torch.zeros_like(both), torch.ones(both.shape))) + both.sum()

    gm = symbolic_trace(f)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert {torch.cat, torch.stack, torch.zeros_like, torch.ones} <= set(targets)
    assert operator.add in targets
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    assert_close(gm(x, y), f(x, y))


def test_a_transformer_override_may_call_minitorch_functions_on_its_proxies():
    class ReluToClamp(Transformer):
        def call_method(self, target, args, kwargs):
            if target == "relu":
                return torch.clamp(args[0], min=0.0)  # args[0] is a Proxy of the new graph
            return super().call_method(target, args, kwargs)

    gm = ReluToClamp(symbolic_trace(lambda x: (x * 2).relu())).transform()
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [
        operator.mul,
        torch.clamp,
    ]
    x = torch.randn(5)
    assert_close(gm(x), (x * 2).relu())


def test_tensor_methods_given_a_proxy_record_call_method():
    table = torch.randn(5, 3)

    def f(i, x):
        return table[i].sum(0) + table.view(x.shape).to(x.dtype).sum() + table.reshape_as(x).mean()

    gm = symbolic_trace(f)
    methods = [n.target for n in gm.graph.nodes if n.op == "call_method"]
    assert {"__getitem__", "view", "to", "reshape_as"} <= set(methods)
    i, x = torch.tensor(2), torch.randn(3, 5, dtype=torch.float64)
    result = gm(i, x)
    assert result.dtype is torch.float64
    assert_close(result, f(i, x))


def _scaled_sin(x):
    return x.sin() * 2


scaled_sin = overridable(_scaled_sin)  # as the library's own functions are made


def test_capture_inlines_the_function_under_the_hook_and_guards_it_once():
    """Bytecode capture walks into the function's body, not into the hook's wrapper (a closure
    it would refuse), and guards that body's code."""

    def f(x):
        return scaled_sin(x) + 1

    explained = torch._dynamo.explain(f)(torch.randn(3))
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)
    assert any("scaled_sin'].__wrapped__.__code__" in g for g in explained.guards)
    compiled_graphs = []

    def backend(gm, example_inputs):
        compiled_graphs.append(gm)
        return gm

    compiled = torch.compile(f, backend=backend)
    for _ in range(3):
        x = torch.randn(3)
        assert_close(compiled(x), x.sin() * 2 + 1)
    assert len(compiled_graphs) == 1  # the guards hold: no recompiles
