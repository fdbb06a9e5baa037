"""A compiled module runs what the module's call runs *now*: patches made after compiling
(`m.forward = f`, `M.forward = g`, `m.__class__ = B`, `M.__call__ = h`, a submodule's forward)
are seen on the next call, with every backend ([Note: a module's call is looked up on every
call] in tracer/dynamo/optimized_module.py). The reference is the same module called eagerly.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn as nn
from tests.tracer.dynamo.helpers import CountingBackend
from tracer.dynamo import fallback_reasons, optimize

BACKENDS = ["eager", "aot_eager", "inductor"]


def _x() -> minitorch.Tensor:
    return minitorch.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])


def _same(compiled_model, model, x) -> None:
    """The compiled model gives what the model itself gives now."""
    np.testing.assert_allclose(compiled_model(x).numpy(), model(x).numpy(), rtol=1e-6)


def _classes():
    """Fresh classes for each test: some tests patch them."""

    class M(nn.Module):
        def forward(self, x):
            return x + 1

    class B(nn.Module):
        def forward(self, x):
            return x - 5

    return M, B


@pytest.mark.parametrize("backend", BACKENDS)
def test_forward_set_on_the_instance_is_run(backend):
    M, _ = _classes()
    m, x = M(), _x()
    cm = minitorch.compile(m, backend=backend)
    _same(cm, m, x)
    m.forward = lambda t: t * 10
    np.testing.assert_allclose(cm(x).numpy(), (x * 10).numpy())
    del m.forward  # the class's forward again
    np.testing.assert_allclose(cm(x).numpy(), (x + 1).numpy())


@pytest.mark.parametrize("backend", BACKENDS)
def test_forward_replaced_on_the_class_is_run(backend):
    M, _ = _classes()
    m, x = M(), _x()
    cm = minitorch.compile(m, backend=backend)
    _same(cm, m, x)
    M.forward = lambda self, t: t * 3
    np.testing.assert_allclose(cm(x).numpy(), (x * 3).numpy())


@pytest.mark.parametrize("backend", BACKENDS)
def test_class_of_the_instance_changed_is_run(backend):
    M, B = _classes()
    m, x = M(), _x()
    cm = minitorch.compile(m, backend=backend)
    _same(cm, m, x)
    m.__class__ = B
    np.testing.assert_allclose(cm(x).numpy(), (x - 5).numpy())
    m.__class__ = M
    np.testing.assert_allclose(cm(x).numpy(), (x + 1).numpy())


@pytest.mark.parametrize("backend", BACKENDS)
def test_call_overridden_on_the_class_is_run(backend):
    M, _ = _classes()
    m, x = M(), _x()
    cm = minitorch.compile(m, backend=backend)
    _same(cm, m, x)
    M.__call__ = lambda self, t: self.forward(t) * 100
    np.testing.assert_allclose(cm(x).numpy(), ((x + 1) * 100).numpy())


@pytest.mark.parametrize("backend", BACKENDS)
def test_forward_bound_to_another_object_is_run(backend):
    M, B = _classes()
    m, other, x = M(), B(), _x()
    cm = minitorch.compile(m, backend=backend)
    _same(cm, m, x)
    m.forward = other.forward  # a bound method of another module
    np.testing.assert_allclose(cm(x).numpy(), (x - 5).numpy())


def _nested():
    class Inner(nn.Module):
        def forward(self, x):
            return x.relu()

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            return self.inner(x) + 1

    return Inner, Outer


@pytest.mark.parametrize("backend", BACKENDS)
def test_submodule_patches_are_run(backend):
    Inner, Outer = _nested()
    m, x = Outer(), _x()
    cm = minitorch.compile(m, backend=backend)
    _same(cm, m, x)
    m.inner.forward = lambda t: t * 7  # on the instance
    _same(cm, m, x)
    del m.inner.forward
    _same(cm, m, x)
    Inner.forward = lambda self, t: t.abs()  # on the class
    _same(cm, m, x)

    class Other(nn.Module):
        def forward(self, t):
            return t - 2

    m.inner.__class__ = Other  # its class
    _same(cm, m, x)
    Other.__call__ = lambda self, t: t * 0.5  # its __call__
    _same(cm, m, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_called_from_a_compiled_function_follows_patches(backend):
    Inner, _ = _nested()
    model = Inner()

    def f(x):
        return model(x) * 2

    cf, x = minitorch.compile(f, backend=backend), _x()
    np.testing.assert_allclose(cf(x).numpy(), f(x).numpy())
    model.forward = lambda t: t + 100
    np.testing.assert_allclose(cf(x).numpy(), f(x).numpy())
    Inner.forward = lambda self, t: t - 100
    np.testing.assert_allclose(cf(x).numpy(), f(x).numpy())  # the instance's still wins
    del model.forward
    np.testing.assert_allclose(cf(x).numpy(), f(x).numpy())


def test_patched_instance_forward_is_inlined_into_one_graph():
    """A submodule whose forward is set on the instance is still one graph, not a break."""
    Inner, Outer = _nested()
    m, x = Outer(), _x()
    m.inner.forward = lambda t: t * 7
    backend = CountingBackend()
    compiled = optimize(m.forward, backend=backend)
    np.testing.assert_allclose(compiled(x).numpy(), m(x).numpy())
    assert backend.count == 1
    assert fallback_reasons(m.forward) == []


def test_overridden_call_is_inlined_into_one_graph():
    class Doubling(nn.Module):
        def __call__(self, x):
            return self.forward(x) * 2

        def forward(self, x):
            return x + 1

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Doubling()

        def forward(self, x):
            return self.inner(x).sin()

    m, x = Outer(), _x()
    backend = CountingBackend()
    compiled = optimize(m.forward, backend=backend)
    np.testing.assert_allclose(compiled(x).numpy(), m(x).numpy(), rtol=1e-6)
    assert backend.count == 1
    assert fallback_reasons(m.forward) == []


def test_the_new_target_is_captured_with_the_same_backend():
    """The patched forward is compiled too (with the module's backend), not run eagerly."""
    M, _ = _classes()
    m, x = M(), _x()
    backend = CountingBackend()
    cm = minitorch.compile(m, backend=backend)
    cm(x)
    assert backend.count == 1

    def new_forward(t):
        return t.cos()

    m.forward = new_forward
    np.testing.assert_allclose(cm(x).numpy(), x.cos().numpy(), rtol=1e-6)
    assert backend.count == 2
    cm(x)  # cached
    assert backend.count == 2


def test_gradients_flow_through_a_patched_forward():
    lin = nn.Linear(3, 2)
    cm = minitorch.compile(lin, backend="aot_eager")
    x = _x()
    cm(x).sum().backward()
    lin.zero_grad()
    lin.forward = lambda t: (t * 2) @ lin.weight.T
    cm(x).sum().backward()
    expected = (x * 2).sum(0).numpy()[None, :].repeat(2, axis=0)
    np.testing.assert_allclose(lin.weight.grad.numpy(), expected, rtol=1e-6)
    assert lin.bias.grad is None or np.all(lin.bias.grad.numpy() == 0)


# ---- forward hooks (minitorch/nn/hooks.py) ------------------------------------------------------


def _double_output(module, args, output):
    return output * 2


def _shift_input(module, args):
    return (args[0] + 100,)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hooks_added_after_compiling_run(backend):
    M, _ = _classes()
    m, x = M(), _x()
    cm = minitorch.compile(m, backend=backend)
    _same(cm, m, x)
    post = m.register_forward_hook(_double_output)
    np.testing.assert_allclose(cm(x).numpy(), ((x + 1) * 2).numpy())
    pre = m.register_forward_pre_hook(_shift_input)
    np.testing.assert_allclose(cm(x).numpy(), ((x + 101) * 2).numpy())
    post.remove()
    pre.remove()
    np.testing.assert_allclose(cm(x).numpy(), (x + 1).numpy())


@pytest.mark.parametrize("backend", BACKENDS)
def test_submodule_hooks_added_after_compiling_run(backend):
    _, Outer = _nested()
    m, x = Outer(), _x()
    cm = minitorch.compile(m, backend=backend)
    _same(cm, m, x)
    with m.inner.register_forward_hook(_double_output):
        np.testing.assert_allclose(cm(x).numpy(), (x.relu() * 2 + 1).numpy())
        _same(cm, m, x)
    np.testing.assert_allclose(cm(x).numpy(), (x.relu() + 1).numpy())


def test_a_submodule_with_hooks_is_called_at_a_graph_break():
    _, Outer = _nested()
    m, x = Outer(), _x()
    m.inner.register_forward_pre_hook(_shift_input)
    report = minitorch._dynamo.explain(m)(x)
    assert report.graph_break_count == 1
    assert "forward hooks" in str(report.break_reasons[0])
    _same(minitorch.compile(m, backend="eager"), m, x)


def test_hooks_with_kwargs_and_prepend():
    calls = []

    class Scale(nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale

    def pre(module, args, kwargs):
        calls.append("pre")
        return args, {**kwargs, "scale": 3.0}

    def first(module, args, output):
        calls.append("first")

    def post(module, args, kwargs, output):
        calls.append("post")
        return output + kwargs["scale"]

    m, x = Scale(), _x()
    m.register_forward_pre_hook(pre, with_kwargs=True)
    m.register_forward_hook(post, with_kwargs=True)
    m.register_forward_hook(first, prepend=True)
    np.testing.assert_allclose(m(x).numpy(), (x * 3 + 3).numpy())
    assert calls == ["pre", "first", "post"]
    calls.clear()
    cm = minitorch.compile(m, backend="aot_eager")
    np.testing.assert_allclose(cm(x).numpy(), (x * 3 + 3).numpy())
    assert calls == ["pre", "first", "post"]


def test_an_overridden_call_skips_hooks_as_in_pytorch():
    class Direct(nn.Module):
        def __call__(self, x):
            return self.forward(x)

        def forward(self, x):
            return x + 1

    m, x = Direct(), _x()
    m.register_forward_hook(_double_output)
    _same(minitorch.compile(m, backend="eager"), m, x)
    np.testing.assert_allclose(m(x).numpy(), (x + 1).numpy())


def test_module_call_patched_for_every_module_is_run():
    """`nn.Module.__call__ = f` changes every module's call (the compiled wrapper's own too,
    so its forward is what is checked here)."""
    M, _ = _classes()
    m, x = M(), _x()
    cm = minitorch.compile(m, backend="eager")

    def f(t):
        return m(t) - 1

    cf = minitorch.compile(f, backend="eager")
    _same(cm, m, x)
    np.testing.assert_allclose(cf(x).numpy(), x.numpy())
    original = nn.Module.__call__
    nn.Module.__call__ = lambda self, *args: self.forward(*args) * 3
    try:
        np.testing.assert_allclose(cm.forward(x).numpy(), ((x + 1) * 3).numpy())
        np.testing.assert_allclose(cf(x).numpy(), ((x + 1) * 3 - 1).numpy())
    finally:
        nn.Module.__call__ = original
    np.testing.assert_allclose(cm(x).numpy(), (x + 1).numpy())
    np.testing.assert_allclose(cf(x).numpy(), x.numpy())
