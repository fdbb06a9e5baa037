"""An fx graph drawn as SVG, from its rows (collect.fx_rows): inputs on top, output at the bottom.

Graphviz's `dot` lays a graph out best, and is used where it is on PATH, for graphs of up to
DOT_NODES nodes (a bigger one takes dot seconds); otherwise a layered layout of our own: each
node in the layer one below its deepest input (a topological layering, the rows being in
topological order already), nodes of a layer side by side, edges as straight lines. Every
node is a `<g class="node">` carrying the same `data-locs`, `data-node` and `data-stage` as its
text row, so that the page highlights both alike.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess

from minitorch.compile.report.model import Row

MAX_NODES = 250  # bigger graphs are shown as text only: a drawing that size helps nobody
DOT_NODES = 80  # dot's layout grows fast with a graph's crossings: ~10 s at 250 nodes
_W, _H, _GAP_X, _GAP_Y = 120, 26, 14, 34
_SVG_NODE = re.compile(r'<g id="node\d+" class="node">\s*<title>([^<]*)</title>')


def draw(rows: list[Row], stage: str, graph: str) -> str | None:
    """The graph as an `<svg>` element, or None when it has no nodes or too many."""
    nodes: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {}  # name -> label, ins, locs
    for row in rows:
        if row.node is None and row.inputs:  # the `def` line: its parameters are the inputs
            for name in row.inputs:
                nodes[name] = (name, (), ())
        elif row.node is not None:
            nodes[row.node] = (_label(row), tuple(i for i in row.inputs if i in nodes), row.locs)
    if not nodes or len(nodes) > MAX_NODES:
        return None
    if len(nodes) <= DOT_NODES and shutil.which("dot"):
        drawn = _graphviz(nodes, stage, graph)
        if drawn is not None:
            return drawn
    return _layered(nodes, stage, graph)


def _label(row: Row) -> str:
    """`sin = minitorch.ops.sin(primals_1)` -> "sin: sin"; `pow_1 = sin ** 2` -> "pow_1: **"."""
    if row.node == "output":
        return "output"
    rhs = row.text.split("=", 1)[-1].split(";")[0].strip()
    call = re.match(r"([\w.]+)\(", rhs)
    op = call.group(1).rsplit(".", 1)[-1] if call else re.sub(r"[\w\s.]+", " ", rhs).strip()
    return f"{row.node}: {op[:12]}" if op else row.node


def _attrs(name: str, locs: tuple[str, ...], stage: str, graph: str) -> str:
    return (
        f'class="node" data-node="{html.escape(name)}" data-graph="{html.escape(graph)}" '
        f'data-stage="{html.escape(stage)}" data-locs="{html.escape(" ".join(locs))}"'
    )


def _layered(nodes: dict, stage: str, graph: str) -> str:
    layer: dict[str, int] = {}
    for name, (_, inputs, _) in nodes.items():
        layer[name] = 1 + max((layer[i] for i in inputs), default=-1)
    rows: dict[int, list[str]] = {}
    for name, depth in layer.items():
        rows.setdefault(depth, []).append(name)
    widest = max(len(names) for names in rows.values())
    width = widest * (_W + _GAP_X) + _GAP_X
    height = len(rows) * (_H + _GAP_Y) + _GAP_Y
    at: dict[str, tuple[float, float]] = {}
    for depth, names in rows.items():
        left = (width - len(names) * (_W + _GAP_X) + _GAP_X) / 2
        for i, name in enumerate(names):
            at[name] = (left + i * (_W + _GAP_X), _GAP_Y / 2 + depth * (_H + _GAP_Y))
    parts = [
        f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">'
    ]
    for name, (_, inputs, _) in nodes.items():  # edges first, under the nodes
        x2, y2 = at[name]
        for i in inputs:
            x1, y1 = at[i]
            parts.append(
                f'<line class="edge" x1="{x1 + _W / 2:.0f}" y1="{y1 + _H:.0f}" '
                f'x2="{x2 + _W / 2:.0f}" y2="{y2:.0f}"/>'
            )
    for name, (label, _, locs) in nodes.items():
        x, y = at[name]
        parts.append(
            f"<g {_attrs(name, locs, stage, graph)}>"
            f'<rect x="{x:.0f}" y="{y:.0f}" width="{_W}" height="{_H}" rx="4"/>'
            f'<text x="{x + _W / 2:.0f}" y="{y + _H / 2 + 4:.0f}">{html.escape(label[:18])}</text>'
            f"<title>{html.escape(label)}</title></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _graphviz(nodes: dict, stage: str, graph: str) -> str | None:
    """Laid out by `dot`; each node's `<g>` then given the page's attributes."""
    ids = {name: f"n{i}" for i, name in enumerate(nodes)}
    lines = [
        "digraph G {",
        "nodesep=0.15; ranksep=0.3;",
        'node [shape=box, style="rounded,filled", fillcolor="#eef4ff", color="#6688aa", '
        'height=0.25, fontsize=9, fontname="monospace"];',
        'edge [color="#999999", arrowsize=0.5];',
    ]
    for name, (label, inputs, _) in nodes.items():
        lines.append(f'{ids[name]} [label="{_dot_string(label)}"];')
        lines += [f"{ids[i]} -> {ids[name]};" for i in inputs]
    lines.append("}")
    try:
        done = subprocess.run(
            ["dot", "-Tsvg"], input="\n".join(lines), capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    by_id = {ids[name]: (name, locs) for name, (_, _, locs) in nodes.items()}
    svg = done.stdout[done.stdout.find("<svg") :]

    def tag(found: re.Match) -> str:
        name, locs = by_id.get(found.group(1), (found.group(1), ()))
        return f"<g {_attrs(name, locs, stage, graph)}><title>{found.group(1)}</title>"

    return _SVG_NODE.sub(tag, svg.replace("<svg ", '<svg class="graph" ', 1))


def _dot_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
