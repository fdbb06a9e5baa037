"""The loop IR's verifier where it lives (ir/verify.py), and `schedule` calling it under
config.check. What each check catches is pinned in test_scheduler.py
(test_verify_catches_broken_programs_and_schedules, test_verify_catches_an_illegal_fusion)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from ir_testing import GraphBuilder, lower_and_schedule

import ir.scheduler
import ir.verify
import minitorch.dtype as dt
from ir.indexing import Var
from ir.lowering import lower_graph
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Pointwise
from ir.ops_handler import ops
from ir.scheduler import schedule
from minitorch import config
from minitorch.errors import CompileError


def sincos_forward() -> GraphBuilder:
    """sin(x)**2 + cos(x)**2, with sin and cos returned too: one fused kernel."""
    g = GraphBuilder()
    x = g.placeholder("primals_1", np.linspace(-3, 3, 64, dtype=np.float32))
    sin, cos = g.call("sin", x), g.call("cos", x)
    g.output(g.call("add", g.call("pow", sin, 2), g.call("pow", cos, 2)), sin, cos)
    return g


def test_the_scheduler_still_exports_verify():
    from ir.scheduler import verify

    assert verify is ir.verify.verify


def test_schedule_verifies_its_kernels_when_checks_are_on(monkeypatch):
    program = lower_graph(sincos_forward())
    seen = []
    monkeypatch.setattr(ir.verify, "verify", lambda p, ks: seen.append((p, ks)))
    monkeypatch.setattr(config, "check", True)
    kernels = schedule(program)
    assert seen == [(program, kernels)]
    monkeypatch.setattr(config, "check", False)
    schedule(program)
    assert len(seen) == 1  # off: no checker runs


def test_a_broken_schedule_is_caught_naming_the_stage_and_the_kernel(monkeypatch):
    # a memory planner that forgets to store anything: the program's outputs are never written
    monkeypatch.setattr(ir.scheduler, "plan_writes", lambda groups, *_: [()] * len(groups))
    monkeypatch.setattr(config, "check", True)
    with pytest.raises(CompileError) as caught:
        lower_and_schedule(sincos_forward())
    message = str(caught.value)
    assert message.startswith("after scheduling, the loop IR is broken: outputs ")
    assert "are never stored" in message
    assert "kernel0: FusedKernel(" in message  # the kernels are printed


def test_verify_takes_sizes_that_are_symbols():
    # [Note: symbolic sizes]: a (s0, s1) buffer is contiguous with strides (s1, 1); verify
    # once crashed comparing them (found running the conformance suite with checks on)
    s0, s1 = Var("s0"), Var("s1")
    layout = Layout((s0, s1), (s1, 1), dt.float32)
    body = Pointwise(dt.float32, (s0, s1), lambda i: ops.sin(ops.load("x", i[0] * s1 + i[1])))
    program = LoweredProgram(
        (InputBuffer("x", layout),), (ComputedBuffer("buf0", layout, body),), ("buf0",)
    )
    ir.verify.verify(program, schedule(program))
    strided = replace(program.buffers[0], layout=Layout((s0, s1), (1, s0), dt.float32))
    with pytest.raises(CompileError, match="not contiguous"):
        ir.verify.verify(replace(program, buffers=(strided,)))
