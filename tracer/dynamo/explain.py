"""`explain(fn)(*args)`: run `fn` once under a fresh capture and report what it captured.

    out = explain(f)(x)
    out.graph_count, out.graph_break_count       # 1, 0
    out.ops_per_graph                            # [['Tensor.sin', 'operator.mul']]
    print(out)                                   # the whole report, readable

The call compiles into private caches (cache.private_caches) with the "eager" backend, so it
sees every frame converted on the way, its own and those of compiled functions it calls, and
leaves the real caches as they were: a later `minitorch.compile(f)` compiles afresh.

Today a frame that cannot be captured runs eagerly, so a "graph break" is that fallback: one
per frame, with the reason and the user's line. When graph breaks with resume functions land,
each cache entry lists its breaks and the graphs around them, and this report reads the same.
TorchDynamo's `torch._dynamo.explain(fn)(*args)` is the model.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from minitorch.errors import CompileError
from minitorch.nn.module import Module
from tracer.dynamo.cache import CacheEntry, GraphBreak, private_caches
from tracer.dynamo.compiler import EAGER
from tracer.dynamo.eval_frame import optimize
from tracer.fx import GraphModule


@dataclass
class ExplainOutput:
    """What one call captured: graphs, graph breaks and guards (print it for a report)."""

    graphs: list[GraphModule]  # in the order they were captured
    graph_break_count: int
    break_reasons: list[GraphBreak]  # each: .reason, .filename, .lineno
    ops_per_graph: list[list[str]]  # per graph, its ops: 'Tensor.sin', 'operator.add', ...
    guards: list[str]  # the guard parts of every cache entry, each once, in order
    compile_count: int  # frames converted (cache entries made), eager fallbacks included
    recompile_reasons: list[str] = field(default_factory=list)  # frames converted twice
    entries: list[CacheEntry] = field(default_factory=list, repr=False)  # in compile order

    @property
    def graph_count(self) -> int:
        return len(self.graphs)

    @property
    def op_count(self) -> int:
        return sum(len(ops) for ops in self.ops_per_graph)

    def __str__(self) -> str:
        lines = [
            f"Graph count: {self.graph_count}",
            f"Graph break count: {self.graph_break_count}",
            f"Op count: {self.op_count}",
            f"Compile count: {self.compile_count}",
        ]
        if self.break_reasons:
            lines.append("Break reasons:")
            for i, b in enumerate(self.break_reasons, 1):
                lines.append(f"  {i}. {b.reason}")
                if b.filename is not None and b.lineno is not None:
                    lines.append(f'     File "{b.filename}", line {b.lineno}')
                    text = linecache.getline(b.filename, b.lineno).strip()
                    if text:
                        lines.append(f"       {text}")
        if self.ops_per_graph:
            lines.append("Ops per graph:")
            for i, ops in enumerate(self.ops_per_graph, 1):
                lines.append(f"  graph {i}: {', '.join(ops) if ops else '(no ops)'}")
        if self.recompile_reasons:
            lines.append("Recompile reasons:")
            lines += [f"  {reason}" for reason in self.recompile_reasons]
        lines.append("Guards:")
        lines += [f"  {part}" for part in self.guards]
        return "\n".join(lines)


def explain(fn: Callable) -> Callable[..., ExplainOutput]:
    """`explain(fn)(*args, **kwargs)` runs `fn` once, captured, and returns an ExplainOutput.

    print(explain(f)(minitorch.randn(3)))
    """
    target = _uncompiled(fn)

    def run(*args: Any, **kwargs: Any) -> ExplainOutput:
        with private_caches() as (table, journal):
            optimize(target, backend=EAGER)(*args, **kwargs)
            recompiles = [r for _, cache in table.values() for r in cache.recompile_reasons]
        return _summarize(journal, recompiles)

    return run


def _uncompiled(fn: Callable) -> Callable:
    """The Python function (or bound forward) behind `fn`, which may be compiled already."""
    from tracer.dynamo.eval_frame import OptimizedModule

    if isinstance(fn, OptimizedModule):
        fn = fn._orig_mod
    if isinstance(fn, Module):
        return fn.forward
    if getattr(fn, "_dynamo_code", None) is not None:
        return fn.__wrapped__  # an optimize() wrapper: explain what it wraps
    if not callable(fn):
        raise CompileError(f"explain() takes a function or an nn.Module, got {type(fn).__name__}")
    return fn


def _summarize(entries: list[CacheEntry], recompile_reasons: list[str]) -> ExplainOutput:
    graphs = [e.graph_module for e in entries if e.graph_module is not None]
    breaks = [b for e in entries for b in e.graph_breaks]
    guards: dict[str, None] = {}  # an ordered set
    for e in entries:
        for part in e.guard.parts:
            guards.setdefault(part.code, None)
    return ExplainOutput(
        graphs=graphs,
        graph_break_count=len(breaks),
        break_reasons=breaks,
        ops_per_graph=[_ops(gm) for gm in graphs],
        guards=list(guards),
        compile_count=len(entries),
        recompile_reasons=recompile_reasons,
        entries=list(entries),
    )


def _ops(gm: GraphModule) -> list[str]:
    """'Tensor.sin' for a method call, 'operator.mul' or 'minitorch.relu' for a function."""
    names = []
    for node in gm.graph.nodes:
        if node.op == "call_method":
            names.append(f"Tensor.{node.target}")
        elif node.op == "call_function" and not hasattr(node.target, "__name__"):
            names.append(repr(node.target))  # a row of the op table: minitorch.ops.full
        elif node.op == "call_function":
            module = (getattr(node.target, "__module__", None) or "").lstrip("_").split(".")[0]
            names.append(f"{module}.{node.target.__name__}" if module else node.target.__name__)
        elif node.op in ("call_module", "get_attr"):
            names.append(f"{node.op} {node.target}")
    return names
