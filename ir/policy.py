"""Fusion policies: of the fusions the scheduler's rules allow, which it makes.

    register_fusion_policy("small_kernels", lambda kernel, buffer, fused, caps:
                           len(fused.nodes) <= 4)
    config.fusion_policy = "small_kernels"

[Note: fusion policies]
The rules of [Note: fusion] (ir/scheduler.py) say when a buffer *can* join the kernel before
it: when the kernel still computes what the buffers would compute one by one. Whether it
*should* is a policy, and the answer depends on the target. A GPU kernel of hundreds of ops
spills registers and compiles slowly (Inductor caps a fusion at `max_fusion_size` nodes); a
CPU kernel over a single row runs on one thread, where two kernels would each spread across
the pool. So the scheduler asks a policy about every fusion the rules allow:

    policy(kernel, buffer, fused, capabilities) -> bool

`kernel` is the kernel so far, `buffer` the next buffer, `fused` the kernel with `buffer` in
it (as the rules placed it), and `capabilities` what the target backend offers (`Capabilities`
below: the backend describes itself, `Backend.capabilities()`). True takes the fusion; False
starts a new kernel with `buffer`. A policy can only refuse fusions, never make one the rules
forbid, so every policy computes the same values; what it changes is how many kernels run and
how many bytes go through memory. config.fusion_policy names the one the compiler uses; the
default, "greedy", takes every fusion allowed, up to `capabilities.max_fusion_size` buffers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from minitorch import config
from minitorch.errors import CompileError

if TYPE_CHECKING:
    from ir.nodes import ComputedBuffer
    from ir.scheduler import FusedKernel


@dataclass(frozen=True)
class Capabilities:
    """What a target offers that a fusion policy may weigh."""

    backend: str = "interpreter"  # the code generator's name
    device: str = "cpu"
    parallel: bool = False  # rows run on many threads at once (a thread pool, a GPU grid)
    max_fusion_size: int = 64  # the most buffers one kernel should hold


FusionPolicy = Callable[["FusedKernel", "ComputedBuffer", "FusedKernel", Capabilities], bool]
_POLICIES: dict[str, FusionPolicy] = {}


def register_fusion_policy(name: str, policy: FusionPolicy) -> None:
    """Make `config.fusion_policy = name` ask `policy` about each fusion."""
    if not callable(policy):
        raise CompileError(f"register_fusion_policy: {name!r} is not callable: {policy!r}")
    if name in _POLICIES:
        raise CompileError(f"a fusion policy named {name!r} is already registered")
    _POLICIES[name] = policy


def unregister_fusion_policy(name: str) -> None:
    _POLICIES.pop(name, None)


def fusion_policies() -> dict[str, FusionPolicy]:
    """The registered policies by name, in registration order."""
    return dict(_POLICIES)


def current_policy() -> FusionPolicy:
    """The policy config.fusion_policy names; a CompileError listing the choices if none."""
    if config.fusion_policy not in _POLICIES:
        raise CompileError(
            f"unknown fusion policy {config.fusion_policy!r}; choose one of {', '.join(_POLICIES)}"
        )
    return _POLICIES[config.fusion_policy]


def greedy(
    kernel: FusedKernel, buffer: ComputedBuffer, fused: FusedKernel, capabilities: Capabilities
) -> bool:
    """Every fusion the rules allow, up to max_fusion_size buffers a kernel."""
    return len(fused.nodes) <= capabilities.max_fusion_size


register_fusion_policy("greedy", greedy)
