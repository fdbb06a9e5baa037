"""How many cache entries real training code makes: modules are guarded by class and mode,
not identity, so a new instance with parameters of the same shapes reuses the compiled code,
and train/eval and grad mode give one entry per mode, however often they are switched.

Each case checks every compiled result against eager, then counts the entries of the code
object (tracer/dynamo/cache.py) and the graphs the backend was handed.
"""

from __future__ import annotations

import contextlib

import pytest

import minitorch
from minitorch import nn
from tests.tracer.dynamo.helpers import CountingBackend, assert_same
from tracer.dynamo import cache_entries, fallback_reasons, optimize, recompile_reasons

pytestmark = pytest.mark.capture


class Net(nn.Module):
    def __init__(self, width: int = 3, scale: float = 2.0, act: type = nn.ReLU) -> None:
        super().__init__()
        self.fc = nn.Linear(3, width)
        self.act = act()
        self.drop = nn.Dropout(0.0)  # branches on self.training
        self.scale = scale

    def forward(self, x):
        return self.drop(self.act(self.fc(x))) * self.scale


def step(model, x):
    return model(x).sum()


def run_step(models, x):
    backend = CountingBackend()
    compiled = optimize(step, backend=backend)
    for model in models:
        assert_same(compiled(model, x), step(model, x))
    return backend


def test_new_instances_of_a_class_passed_as_an_argument_share_one_entry():
    backend = run_step([Net() for _ in range(5)], minitorch.randn(2, 3))
    assert backend.count == 1
    assert len(cache_entries(step)) == 1 and recompile_reasons(step) == []


def test_the_graph_reads_each_instances_own_parameters():
    a, b = Net(), Net()
    x = minitorch.randn(2, 3)
    compiled = optimize(step, backend=CountingBackend())
    compiled(a, x).backward()
    loss = compiled(b, x)
    loss.backward()
    assert_same(loss, step(b, x))
    assert b.fc.weight.grad is not None and b.fc.bias.grad is not None


@pytest.mark.parametrize(
    "other",
    [
        pytest.param(lambda: Net(width=4), id="parameter_shape"),
        pytest.param(lambda: Net(scale=0.5), id="python_attribute"),
        pytest.param(lambda: Net(act=nn.Sigmoid), id="submodule_class"),
    ],
)
def test_an_instance_that_differs_where_tracing_looked_recompiles(other):
    backend = run_step([Net(), other(), Net()], minitorch.randn(2, 3))
    assert backend.count == 2 and len(cache_entries(step)) == 2


def test_a_parameter_that_requires_no_grad_recompiles():
    frozen = Net()
    frozen.fc.weight.requires_grad_(False)
    backend = run_step([Net(), frozen], minitorch.randn(2, 3))
    assert backend.count == 2


class WithLambda(nn.Module):
    def __init__(self, k: float) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = lambda t: t.relu() * k  # a new function object for each instance

    def forward(self, x):
        return self.act(self.fc(x))


def test_a_lambda_made_per_instance_is_guarded_by_code_and_cells():
    models = [WithLambda(2.0), WithLambda(2.0), WithLambda(3.0), WithLambda(2.0)]
    backend = run_step(models, minitorch.randn(2, 3))
    assert backend.count == 2  # k == 2.0, then k == 3.0


def set_training(model, mode):
    model.train(mode)
    return contextlib.nullcontext()


def set_grad(model, mode):
    return minitorch.enable_grad() if mode else minitorch.no_grad()


@pytest.mark.parametrize("switch", [set_training, set_grad], ids=["train_eval", "grad_mode"])
def test_switching_a_mode_keeps_one_entry_per_mode(switch):
    model = Net()
    compiled = minitorch.compile(model, backend=CountingBackend())
    x = minitorch.randn(2, 3)
    for _ in range(3):
        for mode in (True, False):
            with switch(model, mode):
                assert_same(compiled(x), model(x))
    assert len(cache_entries(model.forward)) == 2


def test_train_eval_and_grad_mode_together_make_four_entries():
    model = Net()
    compiled = minitorch.compile(model, backend=CountingBackend())
    x = minitorch.randn(2, 3)
    for _ in range(3):
        for mode in (True, False):
            compiled.train(mode)
            assert_same(compiled(x), model(x))
            with minitorch.no_grad():
                assert_same(compiled(x), model(x))
    assert len(cache_entries(model.forward)) == 4
    assert fallback_reasons(model.forward) == []


def test_a_function_with_the_same_code_and_other_globals_recompiles():
    namespace = {"K": 2.0}
    exec("def scale(t):\n    return t * K\n", namespace)  # noqa: S102 - its own globals
    other = {"K": 5.0}
    twin = type(namespace["scale"])(namespace["scale"].__code__, other)
    fns = [namespace["scale"]]

    def f(x):
        return fns[0](x)

    compiled = optimize(f, backend=CountingBackend())
    x = minitorch.randn(3)
    assert_same(compiled(x), f(x))
    fns[0] = twin
    assert_same(compiled(x), f(x))
    assert len(cache_entries(f)) == 2
