"""The compiler's hooks (minitorch/compile/hooks.py): graph passes at each stage, partitioners
and fusion policies, registered from outside the tree, checked, and keyed by their source."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import minitorch
from minitorch import config
from minitorch.compile import hooks
from minitorch.compile.graph_cache import hook_identities
from minitorch.errors import CompileError
from tracer.fx.passes.registry import identity


@pytest.fixture
def registered():
    """Names registered by a test, unregistered after it."""
    names = {"pass": [], "partitioner": [], "policy": []}
    yield names
    for name in names["pass"]:
        hooks.unregister_graph_pass(name)
    for name in names["partitioner"]:
        hooks.unregister_partitioner(name)
    for name in names["policy"]:
        hooks.unregister_fusion_policy(name)


def _sincos(x):
    return minitorch.sin(x) ** 2 + minitorch.cos(x) ** 2


@pytest.mark.parametrize("stage", hooks.STAGES)
def test_a_graph_pass_runs_at_its_stage_on_a_copy(stage, registered):
    seen = []

    def record(gm):
        seen.append(len(gm.graph.nodes))

    hooks.register_graph_pass(f"record_{stage}", record, stage=stage)
    registered["pass"].append(f"record_{stage}")
    x = minitorch.randn(8, requires_grad=True)
    out = minitorch.compile(_sincos)(x)
    out.sum().backward()
    assert len(seen) == 1, f"the {stage} pass ran {len(seen)} times"
    np.testing.assert_allclose(out.detach().numpy(), 1.0, rtol=1e-5)


def test_a_pass_that_rewrites_changes_what_runs(registered):
    def sin_to_cos(gm):
        for node in gm.graph.nodes:
            if getattr(node.target, "name", None) == "sin":
                node.target = minitorch.ops.cos

    hooks.register_graph_pass("sin_to_cos", sin_to_cos, stage="forward")
    registered["pass"].append("sin_to_cos")
    x = minitorch.randn(8)
    got = minitorch.compile(lambda x: minitorch.sin(x) + 0)(x)
    np.testing.assert_allclose(got.numpy(), np.cos(x.numpy()), rtol=1e-6)


def test_a_pass_that_raises_is_named(registered):
    def broken(gm):
        raise ValueError("oops")

    hooks.register_graph_pass("broken", broken, stage="forward")
    registered["pass"].append("broken")
    with pytest.raises(CompileError, match="graph pass 'broken' \\(forward\\) raised ValueError"):
        minitorch.compile(lambda x: x + 1, fullgraph=True)(minitorch.randn(3))


def test_bad_registrations_are_refused(registered):
    with pytest.raises(CompileError, match="unknown stage"):
        hooks.register_graph_pass("p", lambda gm: None, stage="lowered")
    with pytest.raises(CompileError, match="already registered"):
        hooks.register_partitioner("default", lambda joint: [])
    with pytest.raises(CompileError, match="not callable"):
        hooks.register_fusion_policy("p", 3)


def test_a_registered_partitioner_chooses_what_is_saved(registered, monkeypatch):
    def save_primals(joint):  # save only the inputs: the backward recomputes the rest
        return list(joint.primals)

    hooks.register_partitioner("primals", save_primals)
    registered["partitioner"].append("primals")
    monkeypatch.setattr(config, "partitioner", "primals")
    x = minitorch.randn(16, requires_grad=True)
    y = minitorch.compile(lambda x: minitorch.exp(minitorch.sin(x)))(x)
    y.sum().backward()
    want = np.exp(np.sin(x.detach().numpy())) * np.cos(x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5)


def test_a_partitioner_saving_from_a_tangent_is_refused(registered, monkeypatch):
    hooks.register_partitioner("tangents", lambda joint: list(joint.tangents))
    registered["partitioner"].append("tangents")
    monkeypatch.setattr(config, "partitioner", "tangents")
    with pytest.raises(CompileError, match="partitioner 'tangents' saved tangents_1"):
        minitorch.compile(_sincos, fullgraph=True)(minitorch.randn(4, requires_grad=True))


def test_a_partitioner_that_saves_too_little_is_refused(registered, monkeypatch):
    hooks.register_partitioner("nothing", lambda joint: [])
    registered["partitioner"].append("nothing")
    monkeypatch.setattr(config, "partitioner", "nothing")
    with pytest.raises(CompileError, match="the backward needs primals_1"):
        minitorch.compile(_sincos, fullgraph=True)(minitorch.randn(4, requires_grad=True))


def test_a_partitioner_may_not_recompute_a_random_op(registered, monkeypatch):
    def before_random(joint):  # the inputs of the random ops, not their draws
        return [n for n in joint.forward_nodes if n.op == "placeholder"]

    hooks.register_partitioner("redraw", before_random)
    registered["partitioner"].append("redraw")
    monkeypatch.setattr(config, "partitioner", "redraw")

    def f(x):
        return minitorch.nn.functional.dropout(x, 0.5) * x

    with pytest.raises(CompileError, match="a random op"):
        minitorch.compile(f, fullgraph=True)(minitorch.randn(64, requires_grad=True))


def test_a_fusion_policy_changes_kernels_not_values(registered, monkeypatch):
    from codegen.registry import get_backend
    from minitorch.compile.inductor import lower
    from tracer.aot import aot_trace
    from tracer.fx import symbolic_trace

    def softmax(x):
        return minitorch.softmax(x, dim=-1)

    x = minitorch.randn(8, 32)
    forward = aot_trace(symbolic_trace(softmax), [x]).forward
    backend = get_backend("llvm")
    fused = sum(len(step[2]) for step in lower(forward, backend))
    hooks.register_fusion_policy("never", lambda kernel, buffer, fused, caps: False)
    registered["policy"].append("never")
    monkeypatch.setattr(config, "fusion_policy", "never")
    apart = sum(len(step[2]) for step in lower(forward, backend))
    assert (fused, apart) == (1, 3)  # max, the sum of exps, the quotient
    got = minitorch.compile(softmax)(x)
    np.testing.assert_allclose(got.numpy(), minitorch.softmax(x, dim=-1).numpy(), rtol=1e-6)


def test_the_policy_is_told_the_backend(registered, monkeypatch):
    told = set()

    def remember(kernel, buffer, fused, caps):
        told.add((caps.backend, caps.device, caps.parallel))
        return True

    hooks.register_fusion_policy("remember", remember)
    registered["policy"].append("remember")
    monkeypatch.setattr(config, "fusion_policy", "remember")
    minitorch.compile(lambda x: minitorch.softmax(x, -1), backend="interpreter")(
        minitorch.randn(4, 4)
    )
    assert told == {("interpreter", "cpu", False)}


def test_a_hook_is_known_by_name_and_source():
    def a(gm):
        return None

    def b(gm):
        return gm

    assert identity("p", a) != identity("p", b)
    assert identity("p", a) == identity("p", a)
    assert identity("p", a).startswith("p:")
    assert "0x" not in "".join(hook_identities())  # no repr with an address in the key


def test_the_walkthrough_loads_a_plugin_and_lists_the_hooks(tmp_path):
    plugin = tmp_path / "my_hooks.py"
    plugin.write_text(
        "from minitorch.compile.hooks import register_graph_pass, register_partitioner\n"
        "register_graph_pass('noop', lambda gm: None, stage='joint')\n"
        "register_partitioner('mine', lambda joint: list(joint.primals))\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "minitorch.compile", "examples/sincos.py", "--stage", "forward"]
        + ["--plugin", str(plugin), "--partitioner", "mine"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "graph_passes: noop (joint)" in run.stdout
    assert "partitioner: default, min_cut, mine (in use)" in run.stdout


def test_a_plugins_lowering_and_launch_plans_are_in_the_key(monkeypatch):
    from ir import lowering

    def lower_fake(out, x):
        return None

    monkeypatch.setitem(lowering.ADDED, "fake", lower_fake)
    assert f"lowering/{identity('fake', lower_fake)}" in hook_identities()
