"""`convert_frame`: turn one frame into a cache entry (a graph, or a recorded eager fallback).

    frame ──InstructionTranslator──> fx graph + guards ──backend──> compiled graph
                                                                     + transformed code
          └─ Unsupported ──> an entry that runs the frame eagerly, under the guards so far
                             (or, with fullgraph=True, a CompileError at the user's line)

The eager entry is cached like a compiled one: calls that pass its guards would trace to the
same unsupported spot, so they run eagerly at once instead of tracing again (TorchDynamo marks
such frames "skip" the same way). Its reason is kept as a `GraphBreak` (reason and user line),
which is what `explain` and MINITORCH_LOGS=graph_breaks report; when graph breaks with resume
functions land, an entry will carry one per break.

MINITORCH_LOGS events printed from here, as each frame is converted: graph, guards,
graph_breaks, bytecode (recompiles is printed by eval_frame.py, which sees the miss).
"""

from __future__ import annotations

import dis
import linecache
import os
import time
import warnings
from typing import TYPE_CHECKING

from minitorch._logging import artifact, enabled, log, log_enabled
from minitorch.autograd import is_grad_enabled, set_grad_enabled
from minitorch.errors import CompileError
from tracer.dynamo.cache import CacheEntry, GraphBreak
from tracer.dynamo.compiler import GraphCompiler
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.guards import GuardFunction, compile_guards
from tracer.dynamo.output_graph import OutputGraph
from tracer.dynamo.source import Source
from tracer.dynamo.symbolic_convert import InstructionTranslator

if TYPE_CHECKING:
    from tracer.dynamo.eval_frame import Frame


def convert_frame(
    frame: Frame,
    compiler: GraphCompiler,
    fullgraph: bool,
    dynamic: bool | None = None,
    auto_dynamic: dict[Source, set[int]] | None = None,
) -> CacheEntry:
    """Trace `frame` and compile it with `compiler`; see the module docstring.

    `dynamic` and `auto_dynamic` choose the dynamic dims ([Note: dynamic shapes]).
    """
    start = time.perf_counter()
    output = OutputGraph(frame, compiler, fullgraph, dynamic, auto_dynamic)
    grad_mode = is_grad_enabled()  # a `with no_grad():` traced sets it (variables/grad_mode.py)
    try:
        try:
            InstructionTranslator(frame, output).run()
        except Unsupported as e:
            if not e.in_with_block:
                raise
            # Nothing can break inside the block: trace again, breaking at the block.
            set_grad_enabled(grad_mode)
            output = OutputGraph(frame, compiler, fullgraph, dynamic, auto_dynamic)
            output.trace_with_blocks = False
            InstructionTranslator(frame, output).run()
    except Unsupported as e:
        set_grad_enabled(grad_mode)  # before the guards read it
        if fullgraph:
            raise CompileError(_fullgraph_message(frame, e)) from None
        reason = f"{e.reason} (at {e.where()})" if e.where() else e.reason
        graph_break = GraphBreak(e.reason, e.filename, e.lineno)
        guard = _guard(frame, output)
        _report(frame, output, guard, time.perf_counter() - start, fallback=reason)
        log("graph_breaks", frame_title(frame), _break_text(frame, graph_break))
        return _finish(
            frame,
            output,
            CacheEntry(
                guard,
                None,
                None,
                compiler,
                fullgraph,
                fallback_reason=reason,
                graph_breaks=[graph_break],
            ),
        )
    finally:
        set_grad_enabled(grad_mode)
    guard = _guard(frame, output)
    _report(frame, output, guard, time.perf_counter() - start)
    if output.graph_module is not None:
        output.graph_module.meta["name"] = frame_title(frame)
    try:
        output.call_backend()
    except Exception as e:  # the backend's bug or limit: never a wrong answer, never half an entry
        reason = f"backend {compiler.name!r} failed: {type(e).__name__}: {e}"
        if fullgraph:
            raise CompileError(f"{frame_title(frame)}: {reason}") from e
        warnings.warn(
            f"minitorch.compile: {frame_title(frame)} runs eagerly because {reason}", stacklevel=4
        )
        log("graph_breaks", frame_title(frame), reason)
        return _finish(
            frame,
            output,
            CacheEntry(
                guard,
                None,
                None,
                compiler,
                fullgraph,
                fallback_reason=reason,
                graph_breaks=[GraphBreak(reason)],
            ),
        )
    for graph_break in output.graph_breaks:
        log("graph_breaks", frame_title(frame), _break_text(frame, graph_break))
    return _finish(
        frame,
        output,
        CacheEntry(
            guard,
            output.transformed,
            output.graph_module,
            compiler,
            fullgraph,
            graph_breaks=output.graph_breaks,
        ),
    )


def _guard(frame: Frame, output: OutputGraph) -> GuardFunction:
    return compile_guards(list(output.guards), frame.f_locals, frame.f_globals, output.dynamic_dims)


def _finish(frame: Frame, output: OutputGraph, entry: CacheEntry) -> CacheEntry:
    entry.code = frame.code
    entry.dynamic = output.dynamic
    entry.dynamic_dims = {s: set(d) for s, d in output.dynamic_dims.items()}
    entry.tensor_sizes = {
        g.source: tuple(g.source.get_value(frame.f_locals, frame.f_globals).shape)
        for g in output.guards
        if g.kind == "TENSOR_MATCH"
    }
    if output.specializations:
        log(
            "guards",
            frame_title(frame),
            "dynamic dims specialised because the code read "
            "them: " + ", ".join(output.specializations),
        )
    if log_enabled("bytecode"):
        log("bytecode", frame_title(frame), _bytecode_text(entry))
    return entry


def frame_title(frame: Frame) -> str:
    """How logs name a frame: "f (model.py:12)"."""
    code = frame.code
    return f"{code.co_name} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"


def _report(
    frame: Frame,
    output: OutputGraph,
    guard: GuardFunction,
    seconds: float,
    fallback: str | None = None,
) -> None:
    """The walkthrough's 'graph' artifact (the graph, then the guards) and the two log events."""
    if not (enabled("graph") or log_enabled("guards")):
        return
    title = frame_title(frame)
    if fallback is not None:
        head = f"# runs eagerly: {fallback}\n"
    elif output.graph_module is None:
        head = "# no graph: the function computes no tensor op\n"
    else:
        head = output.graph_module.print_readable(print_output=False)
    if enabled("graph"):
        artifact("graph", title, f"{head}\n{guard.source}", seconds, echo=False)
    if fallback is None:  # a fallback is logged as a graph break
        log("graph", title, head)
    log("guards", title, guard.source)


def _break_text(frame: Frame, graph_break: GraphBreak) -> str:
    """The reason, then the user's line as a traceback shows it."""
    return "\n".join([graph_break.reason, *_user_line(frame, graph_break)])


def _user_line(frame: Frame, graph_break: GraphBreak | Unsupported) -> list[str]:
    if graph_break.filename is None or graph_break.lineno is None:
        return []
    lines = [f'  File "{graph_break.filename}", line {graph_break.lineno}, in {frame.code.co_name}']
    text = linecache.getline(graph_break.filename, graph_break.lineno).strip()
    if text:
        lines.append(f"    {text}")
    return lines


def _bytecode_text(entry: CacheEntry) -> str:
    """The original bytecode, and what runs instead of it for this entry, disassembled.

    There is no transformed code object for CPython to run in the frame's place (we have no
    PEP 523 hook, see eval_frame.py): the replacement is a generated Python function, so we
    show its source and its own bytecode.
    """
    parts = ["# original bytecode", dis.Bytecode(entry.code).dis()]
    if entry.transformed is None:
        parts.append(
            "# no transformed code: this entry runs the original bytecode eagerly "
            f"because {entry.fallback_reason}"
        )
        return "\n".join(parts)
    parts += [
        f"# runs instead: {entry.transformed.name}(L, G), generated as Python source",
        entry.transformed.source,
        f"# {entry.transformed.name}'s bytecode",
        dis.Bytecode(entry.transformed.fn).dis(),
    ]
    return "\n".join(parts)


def _fullgraph_message(frame: Frame, e: Unsupported) -> str:
    code = frame.code
    lines = [f"fullgraph=True, but {code.co_name} cannot be captured as one graph: {e.reason}"]
    return "\n".join([*lines, *_user_line(frame, e)])
