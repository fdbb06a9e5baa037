"""Graph passes of your own, run by the compiler at a stage you name: the hook for passes.

    def drop_clones(gm: GraphModule) -> GraphModule | None: ...
    register_graph_pass("drop_clones", drop_clones, stage="forward")
    minitorch.compile(f)(x)                  # every forward graph goes through drop_clones

[Note: where graph passes run]
A pass takes a GraphModule and changes it in place (returning None) or returns a new one. It
runs at one stage of the pipeline, on every graph that reaches it:

    captured   the graph capture made, before AOT autograd traces it (tracer/aot)
    joint      AOT autograd's joint forward+backward graph, before it is partitioned
    forward    the forward graph after partitioning, and the inference graph (no backward)
    backward   the backward graph after partitioning

Passes of one stage run in the order they were registered, on a copy of the graph (the graph
handed in belongs to the stage before, which may still read it); with config.check on
(MINITORCH_CHECK=1) the result is linted, and the error names the pass. A pass must keep what
the graph computes: its outputs (number, values, dtypes, shapes) and its placeholders. The
course grades passes by exactly that (minitorch/course/assignments/graph_pass.py).

A pass is known by its name and a digest of its source, not by its repr, so that the
compiled-graph cache can tell two versions of a pass apart and match one across processes
(`identity`).
"""

from __future__ import annotations

import copy
import hashlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass

from minitorch.errors import CompileError
from tracer.fx.graph_module import GraphModule, lint_after

STAGES = ("captured", "joint", "forward", "backward")


@dataclass(frozen=True)
class GraphPass:
    name: str
    fn: Callable[[GraphModule], GraphModule | None]
    stage: str


_PASSES: dict[str, GraphPass] = {}  # name -> pass, in registration order


def register_graph_pass(name: str, fn: Callable, stage: str = "forward") -> None:
    """Run `fn(gm)` on every graph of `stage` (one of STAGES) from now on."""
    if stage not in STAGES:
        raise CompileError(
            f"register_graph_pass: unknown stage {stage!r}; expected one of {STAGES}"
        )
    if not callable(fn):
        raise CompileError(f"register_graph_pass: {name!r} is not callable: {fn!r}")
    if name in _PASSES:
        raise CompileError(f"a graph pass named {name!r} is already registered")
    _PASSES[name] = GraphPass(name, fn, stage)


def unregister_graph_pass(name: str) -> None:
    """Stop running the pass `name` (registered earlier)."""
    if name not in _PASSES:
        raise CompileError(f"no graph pass named {name!r} is registered")
    del _PASSES[name]


def graph_passes(stage: str | None = None) -> list[GraphPass]:
    """The registered passes (of `stage`), in the order they run."""
    return [p for p in _PASSES.values() if stage is None or p.stage == stage]


def run_graph_passes(stage: str, gm: GraphModule) -> GraphModule:
    """`gm` after every pass of `stage`; `gm` itself when there is none, else a new module."""
    passes = graph_passes(stage)
    if not passes:
        return gm
    meta = dict(gm.meta)
    gm = GraphModule(gm, copy.deepcopy(gm.graph))
    gm.meta.update(meta)
    for graph_pass in passes:
        try:
            result = graph_pass.fn(gm)
        except CompileError:
            raise
        except Exception as error:
            raise CompileError(
                f"graph pass {graph_pass.name!r} ({stage}) raised {type(error).__name__}: {error}"
            ) from error
        gm = gm if result is None else result
        if not isinstance(gm, GraphModule):
            raise CompileError(
                f"graph pass {graph_pass.name!r} ({stage}) returned {type(gm).__name__}, "
                "expected a GraphModule or None"
            )
        gm.recompile()
        lint_after(f"graph pass {graph_pass.name!r} ({stage})", gm)
    return gm


def identity(name: str, fn: Callable) -> str:
    """`name:digest`: the hook's name and the SHA-256 of its source (its module and qualified
    name where the source cannot be read), the same in every process."""
    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError):
        text = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(type(fn)))}"
    return f"{name}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"
