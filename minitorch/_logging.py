"""Artifacts of compilation, for the walkthrough CLI, and the events MINITORCH_LOGS prints.

Each stage of the pipeline reports what it built with `artifact(stage, title, text, seconds)`:
the captured graph and its guards, the joint graph, the forward and backward graphs, the
loop-level IR, each kernel's source, and (asked for only) the PTX the CUDA backend makes of the
same kernels. Bytecode capture also reports *events* with `log(event, title,
text)` as they happen: a graph captured, the guards of a new cache entry, a recompile and its
reason, a graph break and its line, the original and transformed bytecode. Nothing is kept or
printed unless a `Recorder` is installed (the walkthrough installs one) or MINITORCH_LOGS
names it, so compiling costs nothing extra otherwise:

    MINITORCH_LOGS=graph,guards,recompiles python train.py    # or, in a test:
    monkeypatch.setattr(minitorch.config, "logs", {"recompiles"})

An artifact may carry the object it was printed from (`obj`: the lowered steps, the compiled
graph), and a recorder keeps the events too: the HTML report (minitorch/compile/report/) reads
both. `MINITORCH_REPORT=DIR python train.py` records from the first compile on and writes that
report to DIR when the process exits.
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass, field

from minitorch import config

STAGES = ("graph", "joint", "forward", "backward", "loop_ir", "kernels", "ptx")  # walkthrough's
# Stages that cost a second compile: made only when asked for, by MINITORCH_LOGS or by a
# Recorder's `opt_in` (the walkthrough's --device cuda: [Note: compile-only PTX] in
# minitorch/compile/ptx.py)
OPT_IN = frozenset({"ptx"})
# bytecode capture's, and the kernel cache's on disk (codegen/disk_cache.py)
EVENTS = ("graph", "guards", "recompiles", "graph_breaks", "bytecode", "kernel_cache")
NAMES = frozenset(STAGES) | frozenset(EVENTS)  # what MINITORCH_LOGS may name


@dataclass
class Artifact:
    stage: str  # one of STAGES
    title: str  # e.g. "f (code object at sincos.py:4)"
    text: str  # the printed IR
    seconds: float | None  # how long the stage took, if it was timed
    obj: object = None  # what `text` prints, for the HTML report; None if not handed over


@dataclass
class CompiledCall:
    """The first call of a newly compiled function: enough to re-run it against eager."""

    original: object
    compiled: object
    args: tuple
    kwargs: dict


@dataclass
class Recorder:
    """Collects artifacts while installed: `with Recorder() as rec: ...`; the stages of
    OPT_IN only if named: `Recorder(opt_in={"ptx"})`."""

    artifacts: list[Artifact] = field(default_factory=list)
    events: list[Artifact] = field(default_factory=list)  # log()'s, as they happened
    calls: list[CompiledCall] = field(default_factory=list)
    opt_in: frozenset[str] | set[str] = frozenset()

    def wants(self, stage: str) -> bool:
        return stage not in OPT_IN or stage in self.opt_in

    def __enter__(self) -> Recorder:
        _recorders.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _recorders.remove(self)


_recorders: list[Recorder] = []


def enabled(stage: str) -> bool:
    """Whether anyone listens to `stage`: use it to skip building expensive text."""
    return any(rec.wants(stage) for rec in _recorders) or stage in config.logs


def artifact(
    stage: str,
    title: str,
    text: str,
    seconds: float | None = None,
    echo: bool = True,
    obj: object = None,
) -> None:
    """Hand `text` (printed from `obj`) to the recorders; print it if MINITORCH_LOGS names
    `stage` and `echo`."""
    item = Artifact(stage, title, text, seconds, obj)
    for rec in _recorders:
        if rec.wants(stage):
            rec.artifacts.append(item)
    if echo and stage in config.logs:
        _print(stage, title, text)


def log_enabled(event: str) -> bool:
    """Whether MINITORCH_LOGS names `event` (one of EVENTS)."""
    return event in config.logs


def log(event: str, title: str, text: str) -> None:
    """Print one capture event to stderr now, if MINITORCH_LOGS names it; recorders keep it."""
    for rec in _recorders:
        rec.events.append(Artifact(event, title, text, None))
    if event in config.logs:
        _print(event, title, text)


def _print(name: str, title: str, text: str) -> None:
    print(f"[minitorch {name}] {title}\n{text.rstrip()}\n", file=sys.stderr)


def compiled_call(original, compiled, args: tuple, kwargs: dict) -> None:
    for rec in _recorders:
        rec.calls.append(CompiledCall(original, compiled, args, kwargs))


def _check_names(names: set[str]) -> None:
    unknown = sorted(names - NAMES)
    if unknown:  # a typo would otherwise print nothing, silently
        warnings.warn(
            f"MINITORCH_LOGS: unknown name(s) {', '.join(unknown)}; known: "
            f"{', '.join(sorted(NAMES))}",
            stacklevel=2,
        )


_check_names(config.logs)


# NOTE: read here rather than in config.py, once, when the compiler first loads this module:
# recording must start before the first compile, and costs nothing when the variable is unset
if os.environ.get("MINITORCH_REPORT"):
    from minitorch.compile.report import record_until_exit

    record_until_exit(os.environ["MINITORCH_REPORT"])
