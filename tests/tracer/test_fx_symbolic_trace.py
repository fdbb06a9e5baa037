"""Symbolic tracing: the seed documents' torch.fx samples, held to eager minitorch.

Each sample runs as written with `import minitorch as torch`; the printed graph and code are
pinned (our graph prints `num_users=` where the seed's older PyTorch printed `#users=`).
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import minitorch as torch
from minitorch import nn
from minitorch.nn.module import Module
from tracer.fx import GraphModule, Proxy, TraceError, Tracer, symbolic_trace


def assert_close(actual, expected) -> None:
    np.testing.assert_allclose(
        actual.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6
    )


# ---- seed 001 / 002: param + linear + clamp ------------------------------------------------


class MyModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.param = torch.nn.Parameter(torch.rand(3, 4))
        self.linear = torch.nn.Linear(4, 5)

    def forward(self, x):
        return self.linear(x + self.param).clamp(min=0.0, max=1.0)


MY_MODULE_GRAPH = """\
graph():
    %x : [num_users=1] = placeholder[target=x]
    %param : [num_users=1] = get_attr[target=param]
    %add : [num_users=1] = call_function[target=operator.add](args = (%x, %param), kwargs = {})
    %linear : [num_users=1] = call_module[target=linear](args = (%add,), kwargs = {})
    %clamp : [num_users=1] = call_method[target=clamp](args = (%linear,), \
kwargs = {min: 0.0, max: 1.0})
    return clamp"""

MY_MODULE_CODE = """\
def forward(self, x):
    param = self.param
    add = x + param;  x = param = None
    linear = self.linear(add);  add = None
    clamp = linear.clamp(min = 0.0, max = 1.0);  linear = None
    return clamp
"""


def test_seed_my_module_graph_and_code():
    torch.manual_seed(0)
    module = MyModule()
    from minitorch.fx import symbolic_trace as seed_symbolic_trace

    symbolic_traced: torch.fx.GraphModule = seed_symbolic_trace(module)
    assert str(symbolic_traced.graph) == MY_MODULE_GRAPH
    assert symbolic_traced.code == MY_MODULE_CODE
    symbolic_traced.graph.lint()
    x = torch.rand(3, 4) * 2 - 1
    assert_close(symbolic_traced(x), module(x))


# ---- seed 001: topk(sum(linear(x + linear.weight).relu())) ---------------------------------


class TopkModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.param = torch.nn.Parameter(torch.rand(3, 4))
        self.linear = torch.nn.Linear(4, 5)

    def forward(self, x):
        return torch.topk(torch.sum(self.linear(x + self.linear.weight).relu(), dim=-1), 3)


TOPK_TABLE = """\
opcode         name           target                   args                kwargs
-------------  -------------  -----------------------  ------------------  -----------
placeholder    x              x                        ()                  {}
get_attr       linear_weight  linear.weight            ()                  {}
call_function  add            <built-in function add>  (x, linear_weight)  {}
call_module    linear         linear                   (add,)              {}
call_method    relu           relu                     (linear,)           {}
call_function  sum_1          minitorch.sum            (relu,)             {'dim': -1}
call_function  topk           minitorch.topk           (sum_1, 3)          {}
output         output         output                   (topk,)             {}"""


def test_seed_topk_module_tabular(capsys):
    torch.manual_seed(0)
    m = TopkModule()
    gm = torch.fx.symbolic_trace(m)
    gm.graph.print_tabular()
    assert capsys.readouterr().out.rstrip("\n") == TOPK_TABLE
    add = gm.graph.nodes[2]
    assert add.target is operator.add and gm.graph.nodes[5].target is torch.sum
    x = torch.rand(5, 4)
    values, indices = gm(x)
    expected = m(x)
    assert_close(values, expected.values)
    np.testing.assert_array_equal(indices.numpy(), expected.indices.numpy())


# ---- seed 001: the transform recipe (replace torch.add by torch.mul) -----------------------


class AddModule(torch.nn.Module):
    def forward(self, x, y):
        return torch.add(x, y)


def transform(m: torch.nn.Module, tracer_class: type = torch.fx.Tracer) -> torch.nn.Module:
    graph: torch.fx.Graph = tracer_class().trace(m)
    for node in graph.nodes:
        if node.op == "call_function":
            if node.target == torch.add:
                node.target = torch.mul
    graph.lint()
    return torch.fx.GraphModule(m, graph)


def test_seed_transform_replaces_add_with_mul():
    x, y = torch.rand(2, 3), torch.rand(2, 3)
    gm = transform(AddModule())
    assert "minitorch.mul(x, y)" in gm.code
    assert_close(gm(x, y), x * y)


# ---- what a Proxy records ------------------------------------------------------------------


def all_the_operators(x, y):
    a = (x + y) * 2 - y / 3 + 1 - x
    b = 2**x + (-a) + abs(y) - (1 / (y + 1))
    c = (a @ b.t())[0] + x.shape[1]  # shape: a getattr node, then a getitem node
    return torch.sum(c, dim=0) + (x > y) * 1.0 + x.relu().exp()


def test_operators_and_methods_match_eager():
    gm = symbolic_trace(all_the_operators)
    x, y = torch.rand(3, 4), torch.rand(3, 4)
    assert_close(gm(x, y), all_the_operators(x, y))
    ops = {(n.op, n.target) for n in gm.graph.nodes}
    assert ("call_function", operator.pow) in ops and ("call_function", operator.matmul) in ops
    assert ("call_function", operator.gt) in ops and ("call_function", getattr) in ops
    assert ("call_method", "relu") in ops and ("call_method", "exp") in ops
    assert ("call_function", torch.sum) in ops and ("call_function", operator.abs) in ops


def test_method_call_records_no_getattr_node():
    gm = symbolic_trace(lambda x: x.relu())
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_method", "output"]


def test_nn_functional_records_the_public_function():
    def f(x):
        return nn.functional.softmax(x, dim=-1)

    gm = symbolic_trace(f)
    (call,) = gm.graph.find_nodes(op="call_function")
    assert call.target is nn.functional.softmax and call.kwargs == {"dim": -1}
    x = torch.rand(2, 3)
    assert_close(gm(x), f(x))


def test_tensor_constant_becomes_an_attribute():
    bias = torch.tensor([1.0, 2.0, 3.0])
    gm = symbolic_trace(lambda x: x + bias)
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "get_attr", "call_function", "output"]
    assert "self._tensor_constant0" in gm.code
    x = torch.rand(2, 3)
    assert_close(gm(x), x + bias)


# ---- modules: leaves, traced-through containers, buffers -----------------------------------


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        self.register_buffer("scale", torch.tensor([2.0, 3.0]))

    def forward(self, x):
        return self.body(x) * self.scale + self.scale


def test_containers_are_traced_through_and_buffers_read_once():
    torch.manual_seed(0)
    net = Net()
    gm = symbolic_trace(net)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_module"]
    assert targets == ["body.0", "body.1", "body.2"]
    assert [n.target for n in gm.graph.nodes if n.op == "get_attr"] == ["scale"]
    assert len(gm.graph.find_nodes(op="get_attr")[0].users) == 2
    assert dict(gm.named_buffers()).keys() == {"scale"}
    x = torch.rand(5, 4)
    assert_close(gm(x), net(x))


class LinearIsNotALeaf(Tracer):
    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        return not isinstance(m, nn.Linear) and super().is_leaf_module(m, module_qualified_name)


def test_is_leaf_module_override_traces_into_linear():
    torch.manual_seed(0)
    module = MyModule()
    graph = LinearIsNotALeaf().trace(module)
    assert not graph.find_nodes(op="call_module")
    assert {n.target for n in graph.find_nodes(op="get_attr")} == {
        "param",
        "linear.weight",
        "linear.bias",
    }
    gm = GraphModule(module, graph)
    x = torch.rand(3, 4)
    assert_close(gm(x), module(x))


def test_trace_edit_recompile_run():
    torch.manual_seed(0)
    module = MyModule()
    gm = symbolic_trace(module)
    clamp = gm.graph.find_nodes(op="call_method", target="clamp")[0]
    with gm.graph.inserting_after(clamp):
        neg = gm.graph.call_function(operator.neg, (clamp,))
    clamp.replace_all_uses_with(neg)
    neg.args = (clamp,)  # replace_all_uses_with also rewired neg itself
    gm.graph.lint()
    gm.recompile()
    x = torch.rand(3, 4)
    assert_close(gm(x), -module(x))


# ---- what cannot be traced ([Note: what a Proxy cannot know]) ------------------------------


class Branchy(nn.Module):
    def forward(self, x, flag):
        if x.sum() > 0:  # the data-dependent line
            return x.relu()
        return x


def test_bool_of_proxy_names_the_users_line():
    with pytest.raises(TraceError) as info:
        symbolic_trace(Branchy())
    message = str(info.value)
    assert "test_fx_symbolic_trace.py:" in message
    assert "if x.sum() > 0:" in message
    assert "concrete_args" in message and "jit.trace" in message and "compile" in message
    assert isinstance(info.value, torch.MinitorchError)


def test_failed_trace_restores_the_library():
    original_sum, original_call = torch.sum, Module.__call__
    with pytest.raises(TraceError):
        symbolic_trace(lambda x: torch.sum(x) if torch.sum(x) > 0 else x)
    assert torch.sum is original_sum and Module.__call__ is original_call


@pytest.mark.parametrize(
    "fn", [lambda x: len(x), lambda x: [v for v in x], lambda x: range(x.shape[0])]
)
def test_len_iteration_and_int_raise(fn):
    with pytest.raises(TraceError, match="symbolic tracing cannot"):
        symbolic_trace(fn)


class Flagged(nn.Module):
    def forward(self, x, flag):
        if flag:
            return x.relu()
        return -x


def test_concrete_args_fix_the_branch():
    x = torch.rand(2, 3) - 0.5
    on = symbolic_trace(Flagged(), concrete_args={"flag": True})
    off = symbolic_trace(Flagged(), concrete_args={"flag": False})
    # PyTorch keeps the input and checks it: placeholders x, flag; the check; relu; output
    assert [n.op for n in on.graph.nodes] == [
        "placeholder",
        "placeholder",
        "call_function",
        "call_method",
        "output",
    ]
    assert_close(on(x, True), x.relu())
    assert_close(off(x, flag=False), -x)
    with pytest.raises(TraceError, match="not inputs"):
        symbolic_trace(Flagged(), concrete_args={"nope": 1})


def test_proxy_repr_and_hash():
    seen = []

    def f(x):
        seen.append(x)
        return x

    symbolic_trace(f)
    (proxy,) = seen
    assert isinstance(proxy, Proxy) and repr(proxy) == "Proxy(x)" and {proxy: 1}[proxy] == 1


def test_retracing_a_graph_module_gives_the_same_code():
    torch.manual_seed(0)
    gm = symbolic_trace(MyModule())
    again = symbolic_trace(gm)
    assert again.code == MY_MODULE_CODE
    x = torch.rand(3, 4)
    assert_close(again(x), gm(x))


def test_graph_module_is_a_module_state_dict_load_to_and_training():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    gm = symbolic_trace(model)
    assert list(gm.state_dict()) == list(model.state_dict())  # parameters and buffers, dotted

    other = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    gm.load_state_dict(other.state_dict())
    x = torch.randn(5, 3)
    assert_close(gm.eval()(x), other.eval()(x))

    as64 = gm.to(torch.float64)
    assert all(p.dtype is torch.float64 for p in as64.parameters())
    assert as64(x.double()).dtype is torch.float64

    gm.train()
    opt = torch.optim.SGD(gm.parameters(), lr=0.1)
    w = dict(gm.named_parameters())["0.weight"]
    before = w.detach().numpy().copy()
    loss = gm(x.double()).sum()
    loss.backward()
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), before - 0.1 * w.grad.numpy(), rtol=1e-12)
