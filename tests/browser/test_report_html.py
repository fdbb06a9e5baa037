"""The compile report without a browser: the pieces (collect's parsing, svg's layout, render's
escaping) on hand-made input, and the page's contract ([Note: the page's contract] in
minitorch/compile/report/render.py) on a real compile, through the recorder in-process."""

from __future__ import annotations

import html.parser
import os
import re
import subprocess
import sys
from pathlib import Path

import minitorch as torch
from minitorch import _logging
from minitorch.compile import report
from minitorch.compile.report import collect, svg
from minitorch.compile.report import rows as report_rows
from minitorch.compile.report.model import Frame, Graph, Report, Row, SourceFile, SourceLine, Stage
from minitorch.compile.report.render import render

ROOT = Path(__file__).resolve().parents[2]
FX = """class GraphModule(minitorch.nn.Module):
    def forward(self, x: "f32[4, 8]", w: "f32[8]"):
        sin = minitorch.sin(x);  x = None
        pow_1 = sin ** 2;  sin = None
        add = pow_1 + w;  pow_1 = w = None
        return (add,)"""


def test_fx_rows_name_nodes_their_inputs_and_locations():
    names = {"x": (), "w": (), "sin": ("f.py:3",), "pow_1": ("f.py:3",), "add": ("f.py:4",)}
    rows = report_rows.fx_rows(FX, names)
    assert rows[1].inputs == ("x", "w")  # the placeholders: commas in "f32[4, 8]" are no split
    by_node = {r.node: r for r in rows if r.node}
    assert by_node["pow_1"].inputs == ("sin",) and by_node["pow_1"].locs == ("f.py:3",)
    assert by_node["add"].inputs == ("pow_1", "w") and by_node["add"].locs == ("f.py:4",)
    assert by_node["output"].inputs == ("add",)


def test_code_is_split_at_each_buffers_comment():
    source = "\n".join(
        ["define void @k() {", "; buf0: from sin (f.py:3)", "  %a = x"]
        + ["; buf1: from add (f.py:4, g.py:9)", "  ret"]
    )
    rows = report_rows.code_rows(collect.Collector("f.py", ""), source, ("f.py:3", "f.py:4"))
    assert [(r.node, r.locs) for r in rows] == [
        (None, ("f.py:3", "f.py:4")),  # the head serves every buffer
        ("buf0", ("f.py:3",)),
        ("buf0", ("f.py:3",)),
        ("buf1", ("f.py:4", "g.py:9")),
        ("buf1", ("f.py:4", "g.py:9")),
    ]


def test_layered_drawing_keeps_the_contract():
    rows = report_rows.fx_rows(FX, {"x": (), "w": (), "sin": ("f.py:3",), "pow_1": (), "add": ()})
    drawn = svg._layered(*_nodes(rows), "captured", "graph0")
    assert drawn.count('class="node"') == 6  # x, w, sin, pow_1, add, output
    assert 'data-node="sin" data-graph="graph0" data-stage="captured" data-locs="f.py:3"' in drawn
    assert drawn.count("<line") == 5  # x->sin, sin->pow_1, pow_1->add, w->add, add->output


def _nodes(rows):
    nodes = {}
    for row in rows:
        if row.node is None and row.inputs:
            nodes.update({name: (name, (), ()) for name in row.inputs})
        elif row.node:
            nodes[row.node] = (row.node, row.inputs, row.locs)
    return (nodes,)


class _Elements(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_every_text_is_escaped():
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    page = render(
        Report(
            script=f"/tmp/{evil}.py",
            heading=evil,
            sources=[
                SourceFile(f"/tmp/{evil}.py", f"{evil}.py", [SourceLine(1, evil, "break", [evil])])
            ],
            frames=[Frame(evil, evil, "graph0", fallback=evil, recompile=evil)],
            graphs=[Graph("graph0", evil, [Stage("captured", evil, [Row(evil, (evil,), evil)])])],
            events=[(evil, evil, evil)],
        )
    )
    parser = _Elements()
    parser.feed(page)
    assert [t for t, _ in parser.tags].count("script") == 1  # report.js
    assert "img" not in [t for t, _ in parser.tags]
    assert all(
        "alert" not in value or name in ("data-loc", "data-locs", "data-node", "title")
        for _, attrs in parser.tags
        for name, value in attrs.items()
        if value
    )


def test_a_compile_keeps_the_pages_contract(tmp_path):
    def f(x):
        return torch.sin(x) ** 2 + torch.cos(x) ** 2

    with report.capturing() as (table, journal), _logging.Recorder() as recorder:
        torch.compile(f)(torch.rand(8, requires_grad=True)).sum().backward()
    path = report.write(str(tmp_path), recorder, table, journal, __file__)
    page = open(path).read()
    assert (tmp_path / "report.js").is_file() and (tmp_path / "report.css").is_file()
    lineno = f.__code__.co_firstlineno + 1
    key = f"test_report_html.py:{lineno}"
    assert f'class="src-line in-graph" data-loc="{key}"' in page
    stages = set(re.findall(r'data-stage="(\w+)"[^>]*data-locs="[^"]*' + re.escape(key), page))
    assert {"captured", "joint", "forward", "backward", "loop_ir", "kernel"} <= stages
    assert re.search(r'class="kernel" data-kernel="graph0/forward/kernel0"', page)


def test_walkthrough_html_marks_the_graph_break(tmp_path, capsys):
    from minitorch.compile.walkthrough import main

    assert main(["tests/browser/graph_break.py", "--html", str(tmp_path)]) == 0
    assert "the report:" in capsys.readouterr().out
    page = (tmp_path / "index.html").read_text()
    broken = re.search(
        r'<div class="src-line graph-break" data-loc="graph_break.py:9">.*?</div>', page
    )
    assert broken and "a branch on a tensor&#x27;s value" in broken.group(0)
    assert page.count('<section class="graph"') == 2  # before the break and after it


def test_minitorch_report_writes_at_exit(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import minitorch as torch\n\n\ndef f(x):\n    return torch.sin(x) * 2\n\n\n"
        "torch.compile(f)(torch.rand(3))\n"
    )
    out = tmp_path / "report"
    env = {**os.environ, "MINITORCH_REPORT": str(out), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "the compile report is" in done.stderr
    page = (out / "index.html").read_text()
    assert '<section class="graph" id="graph0">' in page
    assert '<div class="src-line in-graph" data-loc="prog.py:5">' in page


def test_a_recompile_has_its_own_graph_and_says_what_changed(tmp_path):
    def g(x):
        return torch.sin(x) + 1

    compiled = torch.compile(g, dynamic=False)
    with report.capturing() as (table, journal), _logging.Recorder() as recorder:
        compiled(torch.rand(4, requires_grad=True)).sum().backward()
        compiled(torch.rand(4, 3, requires_grad=True)).sum().backward()
    page = open(report.write(str(tmp_path), recorder, table, journal, __file__)).read()
    first, second = page.split('<section class="graph"')[1:3]
    assert "size=(4,)" in first and "size=(4, 3)" not in first  # each version's own loop IR
    assert "size=(4, 3)" in second and "size=(4,)" not in second
    assert '<li class="recompile">recompiled: L[&#x27;x&#x27;].shape' in page
