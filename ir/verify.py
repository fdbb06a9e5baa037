"""The loop IR's verifier: the invariants that memory planning, the interpreter and every code
generator rely on (autodidax's `typecheck_jaxpr`, torch.fx's `graph.lint()`).

    verify(program)            # the buffers, as lowering made them
    verify(program, kernels)   # and the kernels the scheduler grouped them into

Each broken invariant raises a CompileError naming the buffer or kernel. Tests call it
directly; with config.check on (MINITORCH_CHECK=1), `schedule` calls it on what it made.

A program: every buffer has a name of its own, is contiguous over its ranges, and loads only
inputs and buffers computed before it; the outputs name buffers it has. Its kernels: they run
every buffer once, in program order; each node may run where it is, by the rules of
[Note: fusion] (ir/scheduler.py: `why_not`); a kernel reads only what an earlier kernel (or
the caller) stored, stores what a later loop of its own loads back, and the outputs are
stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ir.indexing import Expr
from ir.nodes import Layout, LoweredProgram
from ir.scheduler import FusedKernel, loads, reloads, why_not
from minitorch.errors import CompileError

if TYPE_CHECKING:
    from minitorch.dtype import DType


def verify(program: LoweredProgram, kernels: Sequence[FusedKernel] | None = None) -> None:
    """Check `program` (and `kernels`, when given); a CompileError names the first thing broken."""
    known = {b.name for b in program.inputs}
    for buffer in program.buffers:
        data = buffer.data
        if buffer.name in known:
            raise CompileError(f"two buffers are called {buffer.name}")
        if buffer.layout != _contiguous(data.ranges, data.dtype):
            raise CompileError(f"{buffer.name}: layout {buffer.layout} is not contiguous")
        for name, _ in loads(buffer):
            if name not in known:
                raise CompileError(f"{buffer.name} loads {name}, which is not computed before it")
        known.add(buffer.name)
    if not set(program.outputs) <= known:
        raise CompileError(f"outputs {program.outputs} name unknown buffers")
    if kernels is None:
        return

    if [node for k in kernels for node in k.nodes] != list(program.buffers):
        raise CompileError("the kernels must run every buffer exactly once, in program order")
    stored = {b.name for b in program.inputs}
    for kernel in kernels:
        _verify_loops(kernel)
        missing = set(kernel.reads) - stored
        if missing:
            raise CompileError(f"{kernel.name} reads {sorted(missing)}, which are never stored")
        unstored = set(reloads(kernel)) - set(kernel.writes)
        if unstored:
            raise CompileError(f"{kernel.name} loads {sorted(unstored)} back, but never stores it")
        stored |= set(kernel.writes)
    if not set(program.outputs) <= stored:
        raise CompileError(f"outputs {sorted(set(program.outputs) - stored)} are never stored")


def _contiguous(size: Sequence[int | Expr], dtype: DType) -> Layout:
    """Layout.contiguous, for sizes that may be symbols ([Note: symbolic sizes])."""
    stride: list[int | Expr] = []
    step: int | Expr = 1
    for n in reversed(size):
        stride.append(step)
        step = step * (max(n, 1) if isinstance(n, int) else n)
    return Layout(tuple(size), tuple(reversed(stride)), dtype)


def _verify_loops(kernel: FusedKernel) -> None:
    """Every node of `kernel` may run where it is, given the nodes before it (rules 1 and 2)."""
    so_far = replace(kernel, loops=())
    for loop in kernel.loops:
        if not loop.nodes:
            raise CompileError(f"{kernel.name} has an empty loop")
        so_far = replace(so_far, loops=(*so_far.loops, replace(loop, nodes=())))
        for node in loop.nodes:
            reason = why_not(so_far, len(so_far.loops) - 1, node)
            if reason is not None:
                raise CompileError(
                    f"{node.name} cannot run in the loop nest of {kernel.name}: {reason}"
                )
            last = so_far.loops[-1]
            so_far = replace(
                so_far, loops=(*so_far.loops[:-1], replace(last, nodes=(*last.nodes, node)))
            )
