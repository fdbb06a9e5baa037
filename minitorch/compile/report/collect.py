"""From what a run recorded to the report's data model (model.py): no HTML here.

Two sources, both filled while the script ran:

- the cache entries capture made, in compile order (tracer/dynamo/cache.py's
  `private_caches` journal): per compiled frame its captured graph, guards, graph breaks and
  fallback; the caches' recompile reasons;
- the walkthrough's recorder (minitorch/_logging.py): the joint, forward and backward graphs as
  printed, and, with the objects they were printed from, the loop IR (the forward or backward
  graph and its lowered steps) and the compiled graph (its kernels' code).

[Note: location keys]
Provenance (tracer/fx/provenance.py) hands every stage `Location`s: a captured node's
`meta["location"]` and `meta["call_stack"]`, an AOT node's `meta["location"]` and
`meta["origins"]` (the captured nodes it came from), a loop-IR buffer's or fused kernel's
`.locations`, and a kernel's code a comment `; buf3: from sin_1, pow_2 (sincos.py:13)` before
each buffer's part. The page keys a line as "sincos.py:13": the file's base name and the line,
what a reader sees in the comments. Everything here turns those into keys; a graph printed
before provenance existed (or a stage that keeps none) gets no keys, and is shown unlinked.
"""

from __future__ import annotations

import dis
import os
import re
from collections.abc import Iterable
from typing import Any

from minitorch import _logging
from minitorch.compile.report.model import (
    Frame,
    Graph,
    GraphBreak,
    Report,
    Row,
    SourceFile,
    SourceLine,
    Stage,
)
from minitorch.compile.report.rows import fx_rows, kernels_of, loop_ir_rows, ptx_rows

_PACKAGES = ("minitorch", "tracer", "ir", "codegen")  # the compiler's own files: not shown


class Collector:
    """Builds a Report; keeps the full path of every file a location key names."""

    def __init__(self, script: str, heading: str) -> None:
        self.report = Report(script=script, heading=heading)
        self.paths: dict[str, str] = {}  # base name -> path
        self.in_graph: set[str] = set()  # keys of lines some captured node came from

    def key(self, location: Any) -> str | None:
        """A Location (or (filename, lineno) pair) as its key, "sincos.py:13"."""
        filename = getattr(location, "filename", None)
        lineno = getattr(location, "lineno", None)
        if filename is None and isinstance(location, (tuple, list)) and len(location) >= 2:
            filename, lineno = location[0], location[1]
        if not filename or lineno is None:
            return None
        name = os.path.basename(filename)
        self.paths.setdefault(name, filename)
        return f"{name}:{lineno}"

    def keys(self, locations: Iterable[Any]) -> tuple[str, ...]:
        found = (self.key(loc) for loc in locations or ())
        return tuple(dict.fromkeys(k for k in found if k))

    def node_locs(self, node: Any, origins: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
        """An fx node's keys: its location and call stack, and its origins' keys."""
        meta = node.meta
        keys = list(self.keys([meta.get("location"), *meta.get("call_stack", ())]))
        for origin in meta.get("origins", ()):
            keys += origins.get(origin, ())
        return tuple(dict.fromkeys(keys))


def collect(
    recorder: _logging.Recorder,
    journal: list,
    table: dict,
    script: str,
    heading: str,
    script_seconds: float | None = None,
) -> Report:
    """The report of one run: `journal` and `table` are `private_caches()`'s."""
    c = Collector(os.path.abspath(script), heading)
    c.key((script, 1))  # the script is always shown, first
    report = c.report
    report.script_seconds = script_seconds
    captured, versions = _frames(c, journal, table)
    _aot_stages(c, recorder.artifacts, captured, versions)
    for item in recorder.artifacts:
        if item.seconds is not None:
            report.seconds[item.stage] = report.seconds.get(item.stage, 0.0) + item.seconds
    report.events = [(e.stage, e.title, e.text) for e in recorder.events]
    report.caches = _disk_caches()
    report.sources = _sources(c, journal)
    return report


def _frames(c: Collector, journal: list, table: dict) -> tuple[dict, dict]:
    """Frames and captured graphs from the cache entries; returns each graph's node keys, and
    each frame title's versions in compile order (their Graph, or None: no graph)."""
    reasons = {id(code_ref()): list(cache.recompile_reasons) for code_ref, cache in table.values()}
    seen: dict[int, int] = {}  # id(code) -> versions so far
    captured: dict[str, dict[str, tuple[str, ...]]] = {}
    versions: dict[str, list[Graph | None]] = {}
    for entry in journal:
        code = entry.code
        title = _frame_title(code) if code is not None else "frame"
        version = seen.get(id(code), 0)
        seen[id(code)] = version + 1
        changed = reasons.get(id(code), [])
        frame = Frame(title, entry.guard.source, None, fallback=entry.fallback_reason)
        if version and version - 1 < len(changed):
            frame.recompile = changed[version - 1]
        for b in entry.graph_breaks:
            where = c.key((b.filename, b.lineno)) if b.filename else None
            frame.breaks.append(GraphBreak(b.reason, where))
        gm = entry.graph_module
        versions.setdefault(title, []).append(None)
        if gm is not None:
            graph = Graph(f"graph{len(c.report.graphs)}", gm.meta.get("name", title))
            names = {n.name: c.node_locs(n, {}) for n in gm.graph.nodes}
            c.in_graph.update(k for n in gm.graph.nodes for k in c.keys([n.meta.get("location")]))
            text = gm.print_readable(print_output=False)
            graph.stages.append(Stage("captured", graph.title, fx_rows(text, names)))
            captured[graph.key] = names
            frame.graph = graph.key
            c.report.graphs.append(graph)
            versions[title][-1] = graph
        c.report.frames.append(frame)
    return captured, versions


def _frame_title(code) -> str:
    """As capture's logs name a frame (convert_frame.frame_title): "f (model.py:12)"."""
    return f"{code.co_name} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"


def _aot_stages(c: Collector, artifacts: list, captured: dict, versions: dict) -> None:
    """Each AOT, loop-IR, kernel and PTX artifact, into its graph: the latest captured so far
    whose title starts its own. Capture reports each version of a frame ("graph", titled as
    the frame) before compiling it, in the order the journal lists them."""
    by_graph: dict[str, list] = {}
    captured_so_far: list[Graph] = []
    reported: dict[str, int] = {}  # frame title -> versions reported so far
    for item in artifacts:
        if item.stage == "graph":
            n = reported.get(item.title, 0)
            known = versions.get(item.title, [])
            if n < len(known):  # not a graph shown again (after the captured stage's passes)
                reported[item.title] = n + 1
                if known[n] is not None:
                    captured_so_far.append(known[n])
            continue
        graph = _owner(captured_so_far, item.title) or _owner(c.report.graphs, item.title)
        if graph is not None:
            by_graph.setdefault(graph.key, []).append(item)
    for graph in c.report.graphs:
        items = by_graph.get(graph.key, [])
        origins = captured.get(graph.key, {})
        # the forward and backward graphs, from the objects the loop IR was printed with
        names: dict[str, tuple[str, ...]] = {}
        for item in items:
            gm = _graph_module(item.obj)
            if gm is not None:
                names.update({n.name: c.node_locs(n, origins) for n in gm.graph.nodes})
        lowered = []
        for item in items:
            if item.stage in ("joint", "forward", "backward"):
                gm = _graph_module(item.obj)
                own = {n.name: c.node_locs(n, origins) for n in gm.graph.nodes} if gm else names
                stage = Stage(item.stage, item.title, fx_rows(item.text, own), item.seconds)
                graph.stages.append(stage)
                if item.stage == "forward" and not graph.saved:
                    graph.saved = item.title.split(", forward", 1)[-1].strip(" ()")
            elif item.stage == "loop_ir" and isinstance(item.obj, tuple):
                gm, steps = item.obj
                rows = loop_ir_rows(c, steps, names)
                graph.stages.append(Stage("loop_ir", item.title, rows, item.seconds))
                lowered.append(steps)
            elif item.stage == "loop_ir":
                rows = [Row(line) for line in item.text.splitlines()]
                graph.stages.append(Stage("loop_ir", item.title, rows, item.seconds))
            elif item.stage == "kernels":
                steps = lowered.pop(0) if lowered else []
                language = re.search(r"(\w+) kernel\(s\)", item.title)
                language = language.group(1) if language else ""
                part = item.title[len(graph.title) :].lstrip(", ").split()[0].rstrip(":,")
                made = kernels_of(c, graph, steps, item.obj, names, language, part)
                graph.kernels += made
                graph.stages.append(Stage("kernel", item.title, [], item.seconds))
            elif item.stage == "ptx":  # the kernels just made, for the GPU
                graph.ptx += ptx_rows(item.text, {k.name: k.locs for k in made})


def _owner(graphs: list[Graph], title: str) -> Graph | None:
    """The latest graph whose title begins `title` ("f (x.py:3), forward ...")."""
    for graph in reversed(graphs):
        if title.startswith(graph.title + ",") or title.startswith(graph.title + ":"):
            return graph
    return None


def _graph_module(obj: Any) -> Any:
    """The GraphModule an artifact was printed from: itself, or the first of a tuple."""
    if isinstance(obj, tuple) and obj:
        obj = obj[0]
    return obj if hasattr(obj, "graph") and hasattr(obj, "print_readable") else None


def _disk_caches() -> dict[str, str]:
    """The caches on disk: each kind's hits, misses, stores (codegen/disk_cache.py)."""
    from codegen import disk_cache

    kinds = {"kernels": disk_cache.stats, "compiled graphs": disk_cache.graph_stats}
    return {
        kind: ", ".join(f"{n} {what}" for what, n in sorted(counts.items()))
        for kind, counts in kinds.items()
        if counts
    }


def _sources(c: Collector, journal: list) -> list[SourceFile]:
    """The user's files, each line marked: in a graph, a graph break, or run eagerly."""
    breaks: dict[str, list[str]] = {}
    for frame in c.report.frames:
        for b in frame.breaks:
            if b.loc:
                breaks.setdefault(b.loc, []).append(b.reason)
    eager: dict[str, str] = {}  # the lines of frames that run eagerly: why
    traced: set[str] = set()  # the other lines of compiled frames
    for entry in journal:
        code = entry.code
        if code is None:
            continue
        name = os.path.basename(code.co_filename)
        c.paths.setdefault(name, code.co_filename)
        keys = [
            f"{name}:{line}"
            for _, line in dis.findlinestarts(code)
            if line is not None and line > code.co_firstlineno
        ]
        if entry.transformed is None:
            eager.update((k, entry.fallback_reason or "not captured") for k in keys)
        else:
            traced.update(keys)
    files = []
    for name, path in c.paths.items():
        if not os.path.isfile(path) or _is_compiler(path) and path != c.report.script:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            texts = f.read().splitlines()
        lines = []
        for lineno, text in enumerate(texts, 1):
            key = f"{name}:{lineno}"
            line = SourceLine(lineno, text)
            if key in breaks:
                line.status, line.notes = "break", breaks[key]
            elif key in c.in_graph:
                line.status = "graph"
            elif key in eager:
                line.status, line.notes = "eager", [f"runs eagerly: {eager[key]}"]
            elif key in traced:
                line.status = "traced"
            lines.append(line)
        files.append(SourceFile(path, name, lines))
    return files


def _is_compiler(path: str) -> bool:
    """A file of the compiler itself (minitorch's nn modules, ...): not the user's source."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    parts = os.path.relpath(os.path.abspath(path), root).split(os.sep)
    return parts[0] in _PACKAGES
