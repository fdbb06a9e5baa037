"""compile(model): nn.Module attributes, submodules, containers, train/eval and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn as nn
import minitorch.nn.functional as F
from tests.tracer.dynamo.helpers import CountingBackend, assert_same
from tracer.dynamo import cache_entries, fallback_reasons, recompile_reasons, reset

pytestmark = pytest.mark.capture


@pytest.fixture(autouse=True)
def _fresh_cache():
    reset()  # modules share their class's forward code, so its cache, across tests
    yield
    reset()


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)
        self.scale = 0.5

    def forward(self, x):
        h = self.fc1(x).relu()
        if self.training:
            h = h * self.scale
        return self.fc2(h)


class Scaled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(minitorch.randn(4, 3))
        self.scale = 2.0

    def forward(self, x):
        return (x @ self.weight) * self.scale + self.weight.T.sum() + self.weight.mT.mean()


class Stack(nn.Module):
    def __init__(self, container: type) -> None:
        super().__init__()
        self.layers = (
            container(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2))
            if container is nn.Sequential
            else container([nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2)])
        )

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x, len(self.layers)


def compiled(model, backend=None):
    backend = backend or CountingBackend()
    return minitorch.compile(model, backend=backend), backend


def test_mlp_is_one_graph_of_layer_calls():
    model = MLP()
    opt, backend = compiled(model)
    x = minitorch.randn(2, 4)
    for _ in range(3):
        assert_same(opt(x), model(x))
    assert fallback_reasons(model.forward) == []
    assert backend.count == 1
    targets = [n.target for n in backend.graphs[0].graph.nodes if n.op == "call_function"]
    assert targets.count(F.linear) == 2
    inputs = [n.meta["source"] for n in backend.graphs[0].graph.nodes if n.op == "placeholder"]
    assert "L['self'].fc1.weight" in inputs and "L['self'].fc2.bias" in inputs


def test_train_eval_switch_recompiles_naming_training():
    model = MLP()
    opt, backend = compiled(model)
    x = minitorch.randn(2, 4)
    assert_same(opt(x), model(x))
    model.eval()
    assert_same(opt(x), model(x))
    assert backend.count == 2
    (reason,) = recompile_reasons(model.forward)
    assert "L['self'].training" in reason
    model.train()
    assert_same(opt(x), model(x))
    assert backend.count == 2  # the training entry is still cached


def test_python_attribute_is_guarded_by_value():
    model = Scaled()
    opt, backend = compiled(model)
    x = minitorch.randn(2, 4)
    assert_same(opt(x), model(x))
    model.scale = 3.0
    assert_same(opt(x), model(x))
    assert backend.count == 2
    assert "L['self'].scale" in recompile_reasons(model.forward)[0]
    assert fallback_reasons(model.forward) == []


def test_parameters_are_reloaded_not_baked_in():
    model = Scaled()
    opt, backend = compiled(model)
    x = minitorch.randn(2, 4)
    opt(x)
    with minitorch.no_grad():
        model.weight.mul_(2.0)  # what an optimizer step does: same tensor, new values
    assert_same(opt(x), model(x))
    assert backend.count == 1


def test_another_instance_of_the_class_shares_the_entry():
    """Modules are guarded by class, not identity: b's parameters are read as graph inputs."""
    a, b = MLP(), MLP()
    opt_a, backend = compiled(a)
    opt_b = minitorch.compile(b, backend=backend)
    x = minitorch.randn(2, 4)
    assert_same(opt_a(x), a(x))
    assert_same(opt_b(x), b(x))
    assert backend.count == 1 and recompile_reasons(a.forward) == []


@pytest.mark.parametrize("container", [nn.Sequential, nn.ModuleList])
def test_container_iteration_is_unrolled(container):
    model = Stack(container)
    opt, backend = compiled(model)
    x = minitorch.randn(3, 4)
    assert_same(opt(x), model(x))
    assert backend.count == 1 and fallback_reasons(model.forward) == []
    model.layers.append(nn.Tanh())  # one more layer: the keys guard must catch it
    assert_same(opt(x), model(x))
    assert backend.count == 2
    assert "_modules" in recompile_reasons(model.forward)[0]


def test_top_level_sequential():
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 1))
    opt, backend = compiled(model)
    x = minitorch.randn(6, 4)
    assert_same(opt(x), model(x))
    assert backend.count == 1 and fallback_reasons(model.forward) == []


def test_tensor_T_and_mT_properties_are_captured():
    def fn(x):
        return x.T * 2, x.mT + 1

    from tests.tracer.dynamo.helpers import check_compiled

    backend = check_compiled(fn, minitorch.randn(2, 3, 4))
    assert backend.count == 1


def _grads(model, opt, x):
    model.zero_grad()
    opt(x).sum().backward()
    return [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.filterwarnings("ignore:minitorch.compile.*runs eagerly")
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_gradients_reach_the_parameters(backend):
    model = MLP()
    x = minitorch.randn(2, 4)
    expected = _grads(model, model, x)
    opt = minitorch.compile(model, backend=backend)
    for _ in range(2):
        got = _grads(model, opt, x)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    assert len(cache_entries(model.forward)) == 1
    if backend == "aot_eager":  # inductor has no lowering for permute yet: it may run eagerly
        assert fallback_reasons(model.forward) == []
