"""The report's data model as one HTML page. Every text is escaped (`_e`): a user's strings,
names and source cannot add markup, only show as text.

[Note: the page's contract]
The cross-highlighting (report.js) and the browser tests (tests/browser) read these and
nothing else:
- each source line is `.src-line` with `data-loc="file.py:12"`; a graph break's line is also
  `.graph-break` and holds its reason (`.why`);
- every element that came from source lines (an fx node's row or drawn node, a loop-IR
  buffer's lines, a kernel, a part of a kernel's code) has `data-locs="file.py:12 file.py:13"`
  and `data-stage`, one of captured, joint, forward, backward, loop_ir, kernel, code; fx nodes
  and kernels also carry `data-graph` and `data-node` (a kernel: `data-nodes`, the nodes it
  fused);
- a kernel is `.kernel` with `data-kernel="graph0/forward/kernel0"`, and `data-part`: the
  graph (forward or backward) whose nodes it fused.
Clicking a source line toggles `.hl` on it and on every element whose data-locs holds its key;
clicking a kernel toggles `.hl` on it, its code, its source lines and the nodes it fused (in
its forward or backward graph, and in the joint graph, which names them alike).
"""

from __future__ import annotations

import html
import os

from minitorch.compile.report import svg
from minitorch.compile.report.model import Frame, Graph, Kernel, Report, Row, SourceFile, Stage

_OPEN_ROWS = 400  # a stage longer than this starts folded


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def render(report: Report) -> str:
    """The whole page."""
    name = os.path.basename(report.script)
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>minitorch: {_e(name)}</title>",
        '<link rel="stylesheet" href="report.css"><script src="report.js" defer></script>',
        "</head><body>",
        f"<header><h1>What minitorch.compile made of {_e(name)}</h1>",
        f'<p class="heading">{_e(report.heading)}</p>',
        _summary(report),
        '<p class="hint">Click a source line to light up what it became in every stage; '
        "click a kernel to light up the lines and nodes it fused. Lines: "
        '<span class="key in-graph">in a graph</span> <span class="key graph-break">a graph '
        'break</span> <span class="key eager">run eagerly</span> <span class="key traced">run '
        "while capturing (no tensor op)</span></p></header>",
        '<main><section id="source" class="source"><h2>Source</h2>',
        *(_source(f) for f in report.sources),
        '</section><section id="compiled" class="compiled">',
        _frames(report.frames),
        *(_graph(g) for g in report.graphs),
        _events(report),
        "</section></main></body></html>",
    ]
    return "\n".join(parts)


def _summary(report: Report) -> str:
    counts = {
        "graphs": len(report.graphs),
        "kernels": sum(len(g.kernels) for g in report.graphs),
        "graph breaks": sum(len(f.breaks) for f in report.frames),
        "recompiles": sum(f.recompile is not None for f in report.frames),
    }
    cells = [f"<tr><th>{name}</th><td>{n}</td></tr>" for name, n in counts.items()]
    for kind, counts in report.caches.items():
        cells.append(f"<tr><th>{_e(kind)} on disk</th><td>{_e(counts)}</td></tr>")
    for stage, seconds in report.seconds.items():
        cells.append(f"<tr><th>{_e(stage)}</th><td>{seconds * 1e3:.1f} ms</td></tr>")
    if report.script_seconds is not None:
        seconds = report.script_seconds
        cells.append(f"<tr><th>script</th><td>{seconds * 1e3:.1f} ms (all of it)</td></tr>")
    return f'<table class="summary">{"".join(cells)}</table>'


def _source(file: SourceFile) -> str:
    lines = [f'<h3 title="{_e(file.path)}">{_e(file.name)}</h3><div class="file">']
    labels = {"graph": " in-graph", "break": " graph-break", "eager": " eager", "traced": " traced"}
    for line in file.lines:
        status = labels.get(line.status, "")
        why = "".join(f'<span class="why">{_e(note)}</span>' for note in line.notes)
        lines.append(
            f'<div class="src-line{status}" data-loc="{_e(file.name)}:{line.lineno}">'
            f'<span class="ln">{line.lineno}</span><code>{_e(line.text) or " "}</code>{why}</div>'
        )
    lines.append("</div>")
    return "".join(lines)


def _frames(frames: list[Frame]) -> str:
    parts = ["<h2>Compiled frames</h2>"]
    for frame in frames:
        parts.append(f'<div class="frame"><h3>{_e(frame.title)}</h3><ul>')
        if frame.recompile:
            parts.append(f'<li class="recompile">recompiled: {_e(frame.recompile)}</li>')
        if frame.fallback:
            parts.append(f'<li class="fallback">runs eagerly: {_e(frame.fallback)}</li>')
        for b in frame.breaks:
            where = f" (at {_e(b.loc)})" if b.loc else ""
            parts.append(
                f'<li class="break" data-loc="{_e(b.loc or "")}">graph break: '
                f"{_e(b.reason)}{where}</li>"
            )
        if frame.graph:
            parts.append(f'<li>graph: <a href="#{_e(frame.graph)}">{_e(frame.graph)}</a></li>')
        parts.append("</ul><details><summary>guards</summary>")
        parts.append(f'<pre class="guards">{_e(frame.guards)}</pre></details></div>')
    return "".join(parts)


def _graph(graph: Graph) -> str:
    parts = [
        f'<section class="graph" id="{_e(graph.key)}"><h2>{_e(graph.key)}: {_e(graph.title)}</h2>'
    ]
    moved = [k.bytes_read + k.bytes_written for k in graph.kernels if k.bytes_read is not None]
    parts.append(
        f'<p class="saved">{len(graph.kernels)} kernel(s), moving {sum(moved):,} bytes'
        f"{'' if len(moved) == len(graph.kernels) else ' (and symbolic sizes)'}</p>"
    )
    if graph.saved:
        parts.append(f'<p class="saved">saved for the backward: {_e(graph.saved)}</p>')
    for stage in graph.stages:
        if stage.stage == "kernel":
            continue
        parts.append(_stage(graph, stage))
    if graph.kernels:
        parts.append(_kernels(graph))
    if graph.ptx:
        parts.append('<details class="stage"><summary>PTX (--device cuda)</summary>')
        parts.append(_pre(graph.ptx, "code", graph.key) + "</details>")
    parts.append("</section>")
    return "".join(parts)


def _stage(graph: Graph, stage: Stage) -> str:
    took = "" if stage.seconds is None else f" ({stage.seconds * 1e3:.1f} ms)"
    folded = "" if len(stage.rows) > _OPEN_ROWS else " open"
    drawing = ""
    if stage.stage != "loop_ir":
        drawn = svg.draw(stage.rows, stage.stage, graph.key)
        drawing = f'<div class="drawing">{drawn}</div>' if drawn else ""
    return (
        f'<details class="stage"{folded} data-for="{_e(stage.stage)}">'
        f"<summary>[{_e(stage.stage)}] {_e(stage.title)}{_e(took)}</summary>"
        f"{drawing}{_pre(stage.rows, stage.stage, graph.key)}</details>"
    )


def _pre(rows: list[Row], stage: str, graph: str) -> str:
    out = ['<pre class="ir">']
    for row in rows:
        text = _e(row.text)
        if not row.locs and row.node is None:
            out.append(text + "\n")
            continue
        node = f' data-node="{_e(row.node)}"' if row.node else ""
        out.append(
            f'<span class="row" data-stage="{_e(stage)}" data-graph="{_e(graph)}"{node} '
            f'data-locs="{_e(" ".join(row.locs))}">{text}</span>\n'
        )
    out.append("</pre>")
    return "".join(out)


def _kernels(graph: Graph) -> str:
    parts = [
        '<h3>Kernels</h3><table class="kernels"><tr><th>kernel</th><th>fused</th>'
        "<th>bytes read</th><th>bytes written</th><th>bytes moved</th></tr>"
    ]
    for k in graph.kernels:
        moved = None if None in (k.bytes_read, k.bytes_written) else k.bytes_read + k.bytes_written
        parts.append(
            f'<tr class="kernel" {_kernel_attrs(k, graph, "kernel")}>'
            f"<td>{_e(k.stage)} {_e(k.name)}</td><td>{_e(', '.join(k.nodes))}</td>"
            f"<td>{_bytes(k.bytes_read)}</td><td>{_bytes(k.bytes_written)}</td>"
            f"<td>{_bytes(moved)}</td></tr>"
        )
    parts.append("</table>")
    for k in graph.kernels:
        folded = "" if len(k.code) > _OPEN_ROWS else " open"
        parts.append(
            f'<details class="stage kernel-code"{folded} data-kernel="{_e(k.key)}">'
            f'<summary class="kernel" {_kernel_attrs(k, graph, "kernel")}>'
            f"{_e(k.stage)} {_e(k.name)} ({_e(k.language)})</summary>"
            f"{_pre(k.code, 'code', graph.key)}</details>"
        )
    return "".join(parts)


def _kernel_attrs(k: Kernel, graph: Graph, stage: str) -> str:
    return (
        f'data-kernel="{_e(k.key)}" data-graph="{_e(graph.key)}" data-stage="{stage}" '
        f'data-locs="{_e(" ".join(k.locs))}" data-nodes="{_e(" ".join(k.nodes))}" '
        f'data-part="{_e(k.stage)}"'
    )


def _bytes(n: int | None) -> str:
    return "symbolic" if n is None else f"{n:,}"


def _events(report: Report) -> str:
    if not report.events:
        return ""
    parts = ['<details class="events"><summary>Capture\'s events</summary>']
    for event, title, text in report.events:
        parts.append(f"<h4>[{_e(event)}] {_e(title)}</h4><pre>{_e(text)}</pre>")
    return "".join(parts) + "</details>"
