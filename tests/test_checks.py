"""MINITORCH_CHECK=1 (config.check): every IR's checker runs after its stage.

fx's `Graph.lint` after capture and after AOT autograd (joint, forward, backward), the loop IR's
`verify` after scheduling. A broken graph or kernel fails loudly, naming the stage; with the
switch off, no checker runs. tests/models, tests/fuzz and tests/conformance run with it on.
"""

from __future__ import annotations

import numpy as np
import pytest

import ir.scheduler
import ir.verify
import minitorch
from minitorch import config, nn
from minitorch.errors import CompileError
from tracer.dynamo import reset
from tracer.dynamo.output_graph import OutputGraph
from tracer.fx import Graph, GraphLintError


def sincos(x):
    return minitorch.sin(x) ** 2 + minitorch.cos(x) ** 2


@pytest.fixture
def checks(monkeypatch):
    """config.check on, every graph compiled afresh; yields the lists of what was checked."""
    monkeypatch.setattr(config, "check", True)
    monkeypatch.setattr(config, "graph_cache", False)  # a graph loaded from disk is not lowered
    reset()
    linted, verified = [], []
    lint, verify = Graph.lint, ir.verify.verify
    monkeypatch.setattr(Graph, "lint", lambda g: (linted.append(g), lint(g))[1])
    monkeypatch.setattr(ir.verify, "verify", lambda p, ks: (verified.append(ks), verify(p, ks))[1])
    yield linted, verified
    reset()


def test_sincos_forward_and_backward_pass_every_check(checks):
    linted, verified = checks
    x = minitorch.rand(1000, requires_grad=True)
    out = minitorch.compile(sincos)(x)
    out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), 1.0, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 0.0, atol=1e-5)
    assert len(linted) == 4  # the captured graph; the joint, forward and backward graphs
    assert len(verified) == 2  # the kernels of the forward and of the backward


def test_an_mlp_training_step_passes_every_check(checks):
    linted, verified = checks
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    x, y = minitorch.randn(32, 2), minitorch.randint(0, 2, (32,))

    def step(model):
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss

    want = step(model).item()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    got = minitorch.compile(step)(model).item()
    assert got == pytest.approx(want, rel=1e-5)
    for p, g in zip(model.parameters(), grads, strict=True):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-4, atol=1e-6)
    assert len(linted) >= 4 and len(verified) >= 2


def test_with_checks_off_no_checker_runs(monkeypatch):
    monkeypatch.setattr(config, "check", False)
    monkeypatch.setattr(config, "graph_cache", False)

    def refuse(*args):
        raise AssertionError("a checker ran with config.check off")

    monkeypatch.setattr(Graph, "lint", refuse)
    monkeypatch.setattr(ir.verify, "verify", refuse)
    reset()
    x = minitorch.rand(100, requires_grad=True)
    minitorch.compile(sincos)(x).sum().backward()
    reset()


def test_a_broken_captured_graph_is_caught_naming_the_stage(checks, monkeypatch):
    finish = OutputGraph._finish_graph

    def finish_badly(self, values):  # a capture bug: the last op moved before its inputs
        result = finish(self, values)
        nodes = self.graph._nodes
        nodes.insert(0, nodes.pop(-2))
        return result

    monkeypatch.setattr(OutputGraph, "_finish_graph", finish_badly)
    with pytest.raises(
        GraphLintError,
        match="after capture, graph 'sincos': node add uses pow_1 before it is defined",
    ):
        minitorch.compile(sincos)(minitorch.rand(10))


def test_a_broken_loop_ir_program_is_caught_naming_the_stage(checks, monkeypatch):
    # a memory planner that stores nothing: the graph's outputs are never written
    monkeypatch.setattr(ir.scheduler, "plan_writes", lambda groups, *_: [()] * len(groups))
    with pytest.raises(CompileError, match="after scheduling, the loop IR is broken: outputs"):
        minitorch.compile(sincos, fullgraph=True)(minitorch.rand(10))
