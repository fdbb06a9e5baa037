"""`minitorch.compile`'s surface as PyTorch's: its arguments (mode, options, disable) with
PyTorch's errors, and the compiled module that forwards every attribute to the model."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.compile.modes import MODES
from tracer.dynamo import reset


@pytest.fixture(autouse=True)
def _fresh_caches():
    reset()
    yield
    reset()


def f(x):
    return x.sin() * 2 + 1


def close(a, b) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


# ---- compile's arguments ----------------------------------------------------------------------


def test_the_signature_is_pytorchs():
    params = inspect.signature(minitorch.compile).parameters
    assert list(params) == [
        "model",
        "fullgraph",
        "dynamic",
        "backend",
        "mode",
        "options",
        "disable",
    ]
    defaults = {name: p.default for name, p in params.items()}
    assert defaults == {
        "model": None,
        "fullgraph": False,
        "dynamic": None,
        "backend": "inductor",
        "mode": None,
        "options": None,
        "disable": False,
    }
    assert all(p.kind is p.KEYWORD_ONLY for name, p in params.items() if name != "model")


@pytest.mark.parametrize("mode", [None, *MODES])
def test_every_pytorch_mode_compiles_and_matches_eager(mode):
    x = minitorch.randn(5)
    close(minitorch.compile(f, mode=mode, backend="eager")(x), f(x))


def test_the_modes_are_pytorchs():
    assert list(MODES) == [
        "default",
        "reduce-overhead",
        "max-autotune",
        "max-autotune-no-cudagraphs",
    ]


def test_mode_with_the_default_backend_matches_eager():
    x = minitorch.randn(5)
    close(minitorch.compile(f, mode="max-autotune")(x), f(x))


def test_an_unknown_mode_is_pytorchs_runtime_error():
    with pytest.raises(
        RuntimeError,
        match=r"^Unrecognized mode=fastest, should be one of: "
        r"default, reduce-overhead, max-autotune, "
        r"max-autotune-no-cudagraphs$",
    ):
        minitorch.compile(f, mode="fastest")


def test_mode_and_options_together_are_refused():
    with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
        minitorch.compile(f, mode="default", options={"max_autotune": True})


def test_options_are_checked_by_name_and_type():
    x = minitorch.randn(4)
    close(minitorch.compile(f, options={"max-autotune": True}, backend="eager")(x), f(x))
    with pytest.raises(RuntimeError, match="Unexpected optimization option no_such_thing"):
        minitorch.compile(f, options={"no_such_thing": True})
    with pytest.raises(
        RuntimeError, match="Unexpected type of attr max_autotune, got int should be bool"
    ):
        minitorch.compile(f, options={"max_autotune": 1})


def test_a_function_backend_gets_the_mode_or_options_as_pytorch_passes_them():
    seen = []

    def backend(gm, example_inputs, **kwargs):
        seen.append(kwargs)
        return gm.forward

    x = minitorch.randn(3)
    minitorch.compile(f, backend=backend)(x)
    minitorch.compile(lambda t: t.cos(), backend=backend, mode="reduce-overhead")(x)
    minitorch.compile(lambda t: t.exp(), backend=backend, options={"anything": 1})(x)
    assert seen == [{}, {"mode": "reduce-overhead"}, {"options": {"anything": 1}}]


def test_disable_returns_the_model_itself():
    model = nn.Linear(2, 2)
    assert minitorch.compile(f, disable=True) is f
    assert minitorch.compile(model, disable=True) is model


def test_the_decorator_form_takes_the_settings():
    @minitorch.compile(mode="reduce-overhead", backend="eager")
    def g(x):
        return x * 3

    x = minitorch.randn(3)
    close(g(x), x * 3)


# ---- the compiled module ------------------------------------------------------------------------


class GPTLike(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1 = nn.Linear(3, 4)
        self.drop = nn.Dropout(0.5)
        self.block_size = 8

    def configure_optimizers(self, lr: float):
        return minitorch.optim.SGD(self.parameters(), lr=lr)

    def forward(self, x):
        return self.drop(self.l1(x)).sum()


def test_attributes_and_methods_are_the_models():
    model = GPTLike()
    compiled = minitorch.compile(model, backend="eager")
    assert compiled.l1 is model.l1 and compiled.block_size == 8
    assert compiled._orig_mod is model
    opt = compiled.configure_optimizers(lr=0.1)
    assert [id(p) for g in opt.param_groups for p in g["params"]] == [
        id(p) for p in model.parameters()
    ]
    assert [id(p) for p in compiled.parameters()] == [id(p) for p in model.parameters()]


def test_writes_go_to_the_model():
    model = GPTLike()
    compiled = minitorch.compile(model, backend="eager")
    compiled.block_size = 16
    assert model.block_size == 16 and "block_size" not in compiled.__dict__
    del compiled.block_size
    assert not hasattr(model, "block_size")


def test_train_and_eval_reach_every_submodule():
    model = GPTLike()
    compiled = minitorch.compile(model, backend="eager")
    assert compiled.eval() is compiled
    assert not compiled.training and not model.training and not model.drop.training
    compiled.train()
    assert compiled.training and model.training and model.drop.training
    model.eval()
    assert not compiled.training  # the model's own flag


def test_state_dict_keys_are_prefixed_as_pytorchs():
    model = GPTLike()
    compiled = minitorch.compile(model, backend="eager")
    assert list(compiled.state_dict()) == ["_orig_mod.l1.weight", "_orig_mod.l1.bias"]
    state = {k: v * 0 for k, v in compiled.state_dict().items()}
    compiled.load_state_dict(state)
    assert float(model.l1.weight.abs().sum()) == 0.0


def test_a_missing_attribute_names_the_models_class():
    compiled = minitorch.compile(GPTLike(), backend="eager")
    with pytest.raises(AttributeError, match="'GPTLike' object has no attribute 'nope'"):
        getattr(compiled, "nope")  # noqa: B009 - the lookup is the test


def test_the_compiled_module_trains_like_the_model():
    model = GPTLike()
    model.eval()  # dropout off: the two runs see the same values
    compiled = minitorch.compile(model)
    x = minitorch.randn(2, 3)
    loss = compiled(x)
    loss.backward()
    grad = model.l1.weight.grad
    model.zero_grad()
    expected = model(x)
    expected.backward()
    close(loss, expected)
    close(grad, model.l1.weight.grad)
