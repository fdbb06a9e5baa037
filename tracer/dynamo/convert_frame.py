"""`convert_frame`: turn one frame into a cache entry (a graph, or a recorded eager fallback).

    frame ──InstructionTranslator──> fx graph + guards ──backend──> compiled graph
                                                                     + transformed code
          └─ Unsupported ──> an entry that runs the frame eagerly, under the guards so far
                             (or, with fullgraph=True, a CompileError at the user's line)

The eager entry is cached like a compiled one: calls that pass its guards would trace to the
same unsupported spot, so they run eagerly at once instead of tracing again (TorchDynamo marks
such frames "skip" the same way).
"""

from __future__ import annotations

import linecache
import os
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

from minitorch._logging import artifact, enabled
from minitorch.errors import CompileError
from tracer.dynamo.cache import CacheEntry
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.guards import GuardFunction, compile_guards
from tracer.dynamo.output_graph import OutputGraph
from tracer.dynamo.symbolic_convert import InstructionTranslator

if TYPE_CHECKING:
    from tracer.dynamo.eval_frame import Frame


def convert_frame(frame: Frame, compiler_fn: Callable, fullgraph: bool) -> CacheEntry:
    """Trace `frame` and compile it with `compiler_fn`; see the module docstring."""
    start = time.perf_counter()
    output = OutputGraph(frame, compiler_fn)
    try:
        InstructionTranslator(frame, output).run()
    except Unsupported as e:
        if fullgraph:
            raise CompileError(_fullgraph_message(frame, e)) from None
        reason = f"{e.reason} (at {e.where()})" if e.where() else e.reason
        guard = compile_guards(list(output.guards), frame.f_locals, frame.f_globals)
        _report(frame, output, guard, time.perf_counter() - start, fallback=reason)
        return CacheEntry(guard, None, None, compiler_fn, fullgraph, fallback_reason=reason)
    guard = compile_guards(list(output.guards), frame.f_locals, frame.f_globals)
    _report(frame, output, guard, time.perf_counter() - start)
    if output.graph_module is not None:
        output.graph_module.meta["name"] = _title(frame)
    try:
        output.call_backend()
    except Exception as e:  # the backend's bug or limit: never a wrong answer, never half an entry
        name = getattr(compiler_fn, "__name__", type(compiler_fn).__name__)
        reason = f"backend {name!r} failed: {type(e).__name__}: {e}"
        if fullgraph:
            raise CompileError(f"{_title(frame)}: {reason}") from e
        warnings.warn(f"minitorch.compile: {_title(frame)} runs eagerly because {reason}",
                      stacklevel=4)
        return CacheEntry(guard, None, None, compiler_fn, fullgraph, fallback_reason=reason)
    return CacheEntry(guard, output.transformed, output.graph_module, compiler_fn, fullgraph)


def _title(frame: Frame) -> str:
    code = frame.code
    return f"{code.co_name} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"


def _report(frame: Frame, output: OutputGraph, guard: GuardFunction, seconds: float,
            fallback: str | None = None) -> None:
    """The 'graph' artifact of the walkthrough: the graph, then the guards."""
    if not enabled("graph"):
        return
    title = _title(frame)
    if fallback is not None:
        head = f"# runs eagerly: {fallback}\n"
    elif output.graph_module is None:
        head = "# no graph: the function computes no tensor op\n"
    else:
        head = output.graph_module.print_readable(print_output=False)
    artifact("graph", title, f"{head}\n{guard.source}", seconds)


def _fullgraph_message(frame: Frame, e: Unsupported) -> str:
    code = frame.code
    lines = [f"fullgraph=True, but {code.co_name} cannot be captured as one graph: {e.reason}"]
    if e.lineno is not None:
        lines.append(f'  File "{e.filename}", line {e.lineno}, in {code.co_name}')
        text = linecache.getline(e.filename, e.lineno).strip()
        if text:
            lines.append(f"    {text}")
    return "\n".join(lines)
