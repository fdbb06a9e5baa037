"""Artifacts of compilation, for the walkthrough CLI and for MINITORCH_LOGS.

Each stage of the pipeline reports what it built with `artifact(stage, title, text, seconds)`:
the captured graph and its guards, the joint graph, the forward and backward graphs, the
loop-level IR, the LLVM IR. Nothing is kept unless a `Recorder` is installed (the walkthrough
installs one) or MINITORCH_LOGS names the stage, so compiling costs nothing extra otherwise.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from minitorch import config

STAGES = ("graph", "joint", "forward", "backward", "loop_ir", "llvm_ir")


@dataclass
class Artifact:
    stage: str  # one of STAGES
    title: str  # e.g. "f (code object at sincos.py:4)"
    text: str  # the printed IR
    seconds: float | None  # how long the stage took, if it was timed


@dataclass
class CompiledCall:
    """The first call of a newly compiled function: enough to re-run it against eager."""

    original: object
    compiled: object
    args: tuple
    kwargs: dict


@dataclass
class Recorder:
    """Collects artifacts while installed: `with Recorder() as rec: ...`."""

    artifacts: list[Artifact] = field(default_factory=list)
    calls: list[CompiledCall] = field(default_factory=list)

    def __enter__(self) -> Recorder:
        _recorders.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _recorders.remove(self)


_recorders: list[Recorder] = []


def enabled(stage: str) -> bool:
    """Whether anyone listens to `stage`: use it to skip building expensive text."""
    return bool(_recorders) or stage in config.logs


def artifact(stage: str, title: str, text: str, seconds: float | None = None) -> None:
    item = Artifact(stage, title, text, seconds)
    for rec in _recorders:
        rec.artifacts.append(item)
    if stage in config.logs:
        print(f"[minitorch {stage}] {title}\n{text}", file=sys.stderr)


def compiled_call(original, compiled, args: tuple, kwargs: dict) -> None:
    for rec in _recorders:
        rec.calls.append(CompiledCall(original, compiled, args, kwargs))
