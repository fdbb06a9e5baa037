"""The guard suite, part 3: a module tree changed after the guard's fast path took over.

A guard over a model skips its checks of the module tree while no module changed ([Note: a
module tree is one number] in tracer/dynamo/epoch_guard.py). Each case here compiles a
function of a three-level model, calls it until the fast path runs, changes one thing (deep
in the tree, in a container's table, in a tensor's metadata, in what is not a module), and
compares the next two calls with eager mode: the first after the change (a full check, or
the fast path where the change is not the epoch's), and the one after it (the fast path
again). Each case is run with the fast path and without it (config.epoch_guards).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import minitorch
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch import config
from minitorch.nn import epoch
from tests.tracer.dynamo.guard_suite import Case, data, registry
from tests.tracer.dynamo.helpers import assert_same
from tracer.dynamo import cache_entries, fallback_reasons

pytestmark = pytest.mark.capture

CASES: dict[str, Callable[[], Case]] = {}
case = registry(CASES)


class Config:
    """A plain object a module holds: not a module, so not the epoch's."""

    def __init__(self) -> None:
        self.k = 2.0


class Inner(nn.Module):
    shift = 1.0  # a class attribute, shadowed by the instance's own

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.scale = 2.0
        self.shift = 3.0
        self.register_buffer("offset", data(3))

    def forward(self, x):
        y = self.fc(x) * self.scale + self.offset + self.shift
        w = self.fc.weight  # what tracing folds into constants about a parameter
        y = y * (w.stride(0) + (2 if w.requires_grad else 0) + (4 if w.dtype.itemsize > 4 else 0))
        return y + 1 if self.training else y


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Inner()
        self.act = nn.ReLU()
        self.layers = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)])
        self.seq = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
        self.heads = nn.ModuleDict({"a": nn.Linear(3, 3)})
        self.config = Config()
        self.sizes = [1.0, 2.0]
        self.opts = {"shift": 0.5}

    def forward(self, x):
        y = self.act(self.inner(x))
        for layer in self.layers:
            y = layer(y)
        y = self.seq(y) + self.heads["a"](y)
        return y * self.config.k + self.sizes[0] + self.opts["shift"]


class Root(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.head = nn.Linear(3, 2, bias=False)

    def forward(self, x):
        return self.head(self.block(x)) * self.head.weight.shape[0]


def model_case(change: Callable, setup: Callable = lambda m: None, after=None) -> Case:
    """`change(m, monkeypatch)` on a fresh Root (after `setup(m)`), called as `m(x)`."""
    minitorch.manual_seed(0)
    m = Root()
    setup(m)
    return Case(lambda x: m(x), lambda: (data(2, 3),), lambda mp: change(m, mp), after)


def float64_inputs() -> tuple:
    return (data(2, 3, dtype=np.float64),)


def parameter(shape: tuple[int, ...], start: float = 0.5) -> nn.Parameter:
    return nn.Parameter(data(*shape, start=start))


# ---- the module tree: changes that move the epoch -------------------------------------------


@case
def deep_training_flag():
    return model_case(lambda m, mp: m.block.inner.eval())


@case
def root_training_flag():
    return model_case(lambda m, mp: m.eval())


@case
def deep_number_attribute():
    return model_case(lambda m, mp: setattr(m.block.inner, "scale", 3.0))


@case
def deep_attribute_deleted():
    """`del` uncovers the class attribute."""
    return model_case(lambda m, mp: delattr(m.block.inner, "shift"))


@case
def deep_attribute_deleted_for_good():
    """Eager mode raises AttributeError now: so must the compiled call."""
    return model_case(lambda m, mp: delattr(m.block.inner, "scale"))


@case
def deep_submodule_swapped():
    return model_case(lambda m, mp: setattr(m.block, "act", nn.Sigmoid()))


@case
def deep_parameter_replaced():
    return model_case(lambda m, mp: setattr(m.block.inner.fc, "weight", parameter((3, 3))))


@case
def deep_parameter_set_to_none():
    return model_case(lambda m, mp: setattr(m.block.inner.fc, "bias", None))


@case
def deep_buffer_replaced():
    return model_case(lambda m, mp: setattr(m.block.inner, "offset", data(3, start=5.0)))


@case
def deep_forward_hook_added():
    hook = lambda mod, args, out: out * 10  # noqa: E731
    return model_case(lambda m, mp: m.block.inner.fc.register_forward_hook(hook))


@case
def deep_forward_pre_hook_added():
    hook = lambda mod, args: (args[0] * 10,)  # noqa: E731
    return model_case(lambda m, mp: m.block.inner.register_forward_pre_hook(hook))


@case
def deep_forward_hook_removed():
    def setup(m):
        m.block.handle = m.block.act.register_forward_hook(lambda mod, args, out: out * 10)

    return model_case(lambda m, mp: m.block.handle.remove(), setup)


@case
def module_list_appended():
    return model_case(lambda m, mp: m.block.layers.append(nn.Linear(3, 3)))


@case
def module_list_item_swapped():
    def change(m, mp):
        m.block.layers[1] = nn.Linear(3, 3)

    return model_case(change)


@case
def module_list_same_keys_other_modules():
    """insert then delete: the keys are '0', '1' again, the modules are not."""

    def change(m, mp):
        m.block.layers.insert(0, nn.Linear(3, 3))
        del m.block.layers[-1]

    return model_case(change)


@case
def sequential_item_deleted():
    def change(m, mp):
        del m.block.seq[1]

    return model_case(change)


@case
def module_dict_item_swapped():
    def change(m, mp):
        m.block.heads["a"] = nn.Linear(3, 3)

    return model_case(change)


@case
def modules_table_written():
    def change(m, mp):
        m.block._modules["act"] = nn.Sigmoid()

    return model_case(change)


@case
def parameters_table_written():
    def change(m, mp):
        m.block.inner.fc._parameters["weight"] = parameter((3, 3))

    return model_case(change)


@case
def deep_instance_forward():
    return model_case(lambda m, mp: setattr(m.block.inner, "forward", lambda x: x * 5))


@case
def deep_class_swapped():
    return model_case(lambda m, mp: setattr(m.block.act, "__class__", nn.Sigmoid))


@case
def apply_sets_attributes():
    def scale(mod):
        if isinstance(mod, Inner):
            mod.scale = 4.0

    return model_case(lambda m, mp: m.apply(scale))


@case
def same_state_other_epoch():
    """eval() then train(): the state is as before, only the epoch moved (and a module was
    made): the full check passes again."""

    def change(m, mp):
        m.eval()
        m.train()
        nn.Linear(2, 2)
        with minitorch.no_grad():
            m.head.weight.mul_(2)

    return model_case(change)


# ---- what is not the epoch's: classes, functions, plain objects ----------------------------


@case
def class_forward_patched():
    return model_case(lambda m, mp: mp.setattr(Inner, "forward", lambda self, x: self.fc(x) * 5))


@case
def layer_function_rebound():
    return model_case(lambda m, mp: mp.setattr(F, "linear", lambda x, w, b=None: x * 0 + 1))


@case
def config_attribute():
    return model_case(lambda m, mp: setattr(m.block.config, "k", 5.0))


@case
def list_attribute_mutated():
    def change(m, mp):
        m.block.sizes[0] = 5.0

    return model_case(change)


@case
def dict_attribute_mutated():
    def change(m, mp):
        m.block.opts["shift"] = 2.0

    return model_case(change)


# ---- tensors: metadata and values, which move no epoch ------------------------------------


@case
def parameter_values_in_place():
    """An optimizer step: every parameter written in place."""

    def change(m, mp):
        with minitorch.no_grad():
            for p in m.parameters():
                p.mul_(2)

    return model_case(change)


@case
def parameter_data_reshaped():
    return model_case(lambda m, mp: setattr(m.head.weight, "data", data(4, 3)))


@case
def parameter_data_transposed():
    """The same shape, other strides."""
    return model_case(lambda m, mp: setattr(m.block.inner.fc.weight, "data", data(3, 3).t()))


@case
def model_to_float64():
    return model_case(lambda m, mp: m.to(minitorch.float64), after=float64_inputs)


@case
def load_state_dict_values():
    def change(m, mp):
        m.load_state_dict({k: v * 2 for k, v in m.state_dict().items()})

    return model_case(change)


@case
def load_state_dict_assign_float64():
    def change(m, mp):
        state = {k: v.double() * 2 for k, v in m.state_dict().items()}
        m.load_state_dict(state, assign=True)

    return model_case(change, after=float64_inputs)


@case
def all_parameters_frozen():
    """requires_grad_(False): the output no longer requires grad."""
    return model_case(lambda m, mp: m.requires_grad_(False))


ROOTS = {"model": Root()}


def through_a_list(x):
    return ROOTS["model"](x)


@case
def root_replaced_by_another_instance():
    minitorch.manual_seed(1)
    return Case(
        through_a_list, lambda: (data(2, 3),), change=lambda mp: mp.setitem(ROOTS, "model", Root())
    )


# ---- the checks -----------------------------------------------------------------------------


def _fast_path_ready(compiled) -> bool:
    """Does the newest entry's guard hold a record of the current epoch?"""
    for entry in cache_entries(compiled):
        fast = entry.guard.namespace.get("___epoch_guard")
        if fast is not None and fast.seen is not None and fast.seen.epoch == epoch.current:
            return True
    return False


@pytest.mark.parametrize("epoch_guards", [True, False], ids=["fast", "full"])
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_change_after_the_fast_path(name, backend, epoch_guards, monkeypatch):
    monkeypatch.setattr(config, "epoch_guards", epoch_guards)
    c = CASES[name]()
    compiled = minitorch.compile(c.fn, backend=backend)
    results = []
    for step in range(5):  # three calls, the change, two calls
        if step == 3:
            if epoch_guards:
                assert _fast_path_ready(compiled), "the fast path never took over"
            c.change(monkeypatch)
        after = c.after if step >= 3 and c.after else c.inputs
        compiled_args, eager_args = after(), after()
        actual = _call(compiled, compiled_args)
        expected = _call(c.fn, eager_args)
        assert_same(actual, expected)
        assert_same(compiled_args, eager_args)
        results.append(expected)
    assert _differs(results[2], results[3]), "the change must change eager's answer"
    assert any(e.transformed is not None for e in cache_entries(compiled)), (
        f"nothing was captured: {fallback_reasons(compiled)}"
    )


def _call(fn: Callable, args: tuple):
    """fn(*args), or the class of the exception it raised."""
    try:
        return fn(*args)
    except Exception as e:
        return type(e)


def _differs(a, b) -> bool:
    try:
        assert_same(a, b)
    except AssertionError:
        return True
    return False


# ---- a compiled model and an eager twin: state the calls change, and gradients ------------


class Accumulator(nn.Module):
    """Writes one buffer and reads another: right only while they do not share memory."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("a", data(2, 3))
        self.register_buffer("b", data(2, 3, start=10.0))

    def forward(self, x):
        self.a.add_(1)
        return x * self.b


def freeze_one(m: Root) -> None:
    m.block.inner.fc.weight.requires_grad_(False)


def unfreeze_one(m: Root) -> None:
    m.block.inner.fc.weight.requires_grad = True


def freeze_one_by_attribute(m: Root) -> None:
    m.head.weight.requires_grad = False


def share_memory(m: Accumulator) -> None:
    m.b.data = m.a


TWIN_CASES = {
    "one_parameter_frozen": (Root, freeze_one, lambda m: None),
    "one_parameter_frozen_by_attribute": (Root, freeze_one_by_attribute, lambda m: None),
    "one_parameter_unfrozen": (Root, unfreeze_one, freeze_one),
    "buffers_come_to_share_memory": (Accumulator, share_memory, lambda m: None),
}


@pytest.mark.parametrize("epoch_guards", [True, False], ids=["fast", "full"])
@pytest.mark.parametrize("name", sorted(TWIN_CASES))
def test_change_to_twins_after_the_fast_path(name, epoch_guards, monkeypatch):
    """A compiled model and an eager twin, changed alike: outputs, buffers and gradients."""
    monkeypatch.setattr(config, "epoch_guards", epoch_guards)
    make, change, setup = TWIN_CASES[name]
    twins = []
    for _ in range(2):
        minitorch.manual_seed(0)
        twins.append(make())
        setup(twins[-1])
    compiled = minitorch.compile(lambda m, x: m(x), backend="aot_eager")
    for step in range(5):
        if step == 3:
            assert not epoch_guards or _fast_path_ready(compiled), "no fast path"
            for m in twins:
                change(m)
        outputs = [run(m, data(2, 3)) for run, m in zip([compiled, lambda m, x: m(x)], twins)]
        assert_same(*outputs)
        for out in outputs:
            if out.requires_grad:
                out.sum().backward()
        grads = [{k: p.grad for k, p in m.named_parameters()} for m in twins]
        assert_same(*grads)
        assert_same(*[dict(m.named_buffers()) for m in twins])
        for m in twins:
            m.zero_grad()
