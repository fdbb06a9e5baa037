"""The guard's fast path over module trees ([Note: a module tree is one number] in
tracer/dynamo/epoch_guard.py): what it skips, what it keeps, what it costs.

That it gives eager's answers after every kind of change is the guard suite's job
(test_guard_suite_modules.py); here, the machinery.
"""

from __future__ import annotations

import gc
import weakref

import pytest

import minitorch
import minitorch.nn as nn
from minitorch import config
from minitorch.nn import epoch
from minitorch.nn.module import Module
from tests.tracer.dynamo.guard_suite import data
from tracer.dynamo import cache_entries, recompile_reasons

pytestmark = [pytest.mark.capture, pytest.mark.extras("epoch_guards")]


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = nn.ReLU()
        self.scale = 2.0

    def forward(self, x):
        return self.act(self.fc(x)) * self.scale


def run(m: nn.Module, x):
    return m(x)


def warm(m: nn.Module, calls: int = 3):
    """run, compiled, called `calls` times on m: the fast path has taken over."""
    compiled = minitorch.compile(run, backend="eager")
    for _ in range(calls):
        compiled(m, data(2, 3))
    return compiled


def the_guard(compiled):
    (entry,) = cache_entries(compiled)
    return entry.guard


def test_the_fast_guard_checks_the_tree_as_one_number():
    """No part about which modules, flags and attributes the tree holds: one check of the
    root and the epoch; the classes once each; every tensor, read without a walk."""
    guard = the_guard(warm(Net()))
    code = [line.split("  #")[0] for line in guard.fast.splitlines()]  # without comments
    assert code == [
        "def guard(L, G):",
        "    ___v = ___epoch_guard.unchanged((L['m'], ))",
        "    if ___v is None:",
        "        return ___epoch_guard.full_check(L, G)",
        "    (",
        "        ___L_m_fc_weight, ___L_m_fc_bias,",
        "    ) = ___v",
        "    return (",
        "        minitorch.is_grad_enabled()",
        "        and ___tensor_key(L['x']) == ___tensor_L_x",
        "        and ___type_Net.__call__ is ___function___call__",
        "        and ___type_Net.forward is ___function_forward",
        "        and ___type_Net.forward.__code__ is ___code_forward",
        "        and ___type_Linear.__call__ is ___function___call__",
        "        and ___type_Linear.forward is ___function_forward_",
        "        and ___type_Linear.forward.__code__ is ___code_forward_",
        "        and sys.modules['minitorch.nn.linear'].F is ___module_minitorch_nn_functional",
        "        and sys.modules['minitorch.nn.linear'].F.linear is ___function_linear",
        "        and ___tensor_key(___L_m_fc_weight) == ___tensor_L_m_fc_weight",
        "        and ___tensor_key(___L_m_fc_bias) == ___tensor_L_m_fc_bias",
        "        and ___type_ReLU.__call__ is ___function___call__",
        "        and ___type_ReLU.forward is ___function_forward__",
        "        and ___type_ReLU.forward.__code__ is ___code_forward__",
        "        and sys.modules['minitorch.nn.activation'].F is ___module_minitorch_nn_functional",
        "        and sys.modules['minitorch.nn.activation'].F.relu is ___function_relu",
        "        and ___alias_pattern((L['x'], ___L_m_fc_weight, ___L_m_fc_bias,)) == (0, 1, 2)",
        "    )",
    ]
    assert "L['m'].scale == 2.0" in guard.source  # the full guard is unchanged


def test_names_longer_than_a_line():
    """A deep model's names pass 100 columns: each stays whole in the fast guard."""
    m = nn.Sequential(nn.Sequential(nn.Sequential(Net())))
    m[0][0].add_module("a_submodule_with_a_name_long_enough_to_fill_a_line", Net())
    compiled = minitorch.compile(lambda m, x: m(x), backend="eager")
    for _ in range(3):
        assert minitorch.allclose(compiled(m, data(2, 3)), m(data(2, 3)))
    (entry,) = cache_entries(compiled)
    assert max(len(name) for name in entry.guard.fast.split()) > 100


def test_the_fast_path_walks_no_module(monkeypatch):
    m = Net()
    guard = the_guard(warm(m))
    calls = []
    getattr_ = Module.__getattr__

    def counted(self, name):
        calls.append(name)
        return getattr_(self, name)

    monkeypatch.setattr(Module, "__getattr__", counted)
    f_locals = {"m": m, "x": data(2, 3)}
    assert guard(f_locals, run.__globals__)
    assert calls == []
    m.eval()  # a change: the full guard walks the tree once, and records the new epoch
    assert guard(f_locals, run.__globals__) is False  # training was True
    m.train()
    assert guard(f_locals, run.__globals__)
    assert calls != []
    calls.clear()
    assert guard(f_locals, run.__globals__)
    assert calls == []


def test_a_miss_on_the_fast_path_is_explained_by_the_full_guard():
    compiled = warm(Net())
    compiled(Net(), data(5, 3))  # another model, another shape
    assert recompile_reasons(compiled) == [
        "L['x'].shape == (2, 3) failed: L['x'].shape was minitorch.Size([5, 3])"
    ]


def test_another_instance_reuses_the_entry_and_is_checked_in_full():
    compiled = warm(Net())
    other = Net()
    before = epoch.current
    assert minitorch.allclose(compiled(other, data(2, 3)), run(other, data(2, 3)))
    assert len(cache_entries(compiled)) == 1 and recompile_reasons(compiled) == []
    assert epoch.current == before
    seen = the_guard(compiled).namespace["___epoch_guard"].seen
    assert seen.roots[0]() is other  # recorded: the next call of `other` is fast


def test_a_guard_keeps_no_model_alive():
    m = Net()
    compiled = warm(m)
    dead = weakref.ref(m.fc.weight)
    alive = weakref.ref(m)
    del m
    gc.collect()
    assert alive() is None and dead() is None
    assert the_guard(compiled).namespace["___epoch_guard"].seen is None


def test_with_the_extra_off_only_the_full_guard_runs(monkeypatch):
    monkeypatch.setattr(config, "epoch_guards", False)
    guard = the_guard(warm(Net()))
    assert guard.fast is None and "___epoch_guard" not in guard.namespace


def test_a_frame_that_reads_no_module_has_no_fast_guard():
    compiled = minitorch.compile(lambda x: x * 2, backend="eager")
    compiled(data(3))
    assert the_guard(compiled).fast is None


class Sneaky(nn.Module):
    """Writes `k` past the epoch: its state is not the epoch's, so its parts stay."""

    def __init__(self) -> None:
        super().__init__()
        self.k = 2.0

    def __setattr__(self, name, value):
        if name == "k":
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    def forward(self, x):
        return x * self.k


class HoldsSneaky(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Sneaky()

    def forward(self, x):
        return self.inner(x) + 1


def test_a_module_with_its_own_setattr_is_checked_on_every_call():
    m = HoldsSneaky()
    compiled = warm(m)
    assert "and ___L_m_inner.k == 2.0\n" in the_guard(compiled).fast
    before = epoch.current
    m.inner.k = 3.0
    assert epoch.current == before
    assert minitorch.allclose(compiled(m, data(2, 3)), data(2, 3) * 3 + 1)
