"""`FxGraphDrawer`: a GraphModule's graph as a Graphviz drawing (DOT text, or SVG via `dot`).

    gm = symbolic_trace(lambda x: minitorch.relu(x) + 1)
    print(FxGraphDrawer(gm, "f").get_dot_graph().to_string())
    digraph "f" {
        node [shape=record, style=filled, fontname="Helvetica"];
        "x" [label="{name=%x|op_code=placeholder|target=x}", fillcolor="#d9ead3"];
        "relu" [label="{name=%relu|op_code=call_function|target=minitorch.relu}", ...];
        "add" [label="{name=%add|op_code=call_function|target=operator.add|args=(%relu, 1)}", ...];
        "output" [label="{name=%output|op_code=output|target=output}", fillcolor="#f4cccc"];
        "x" -> "relu";
        "relu" -> "add";
        "add" -> "output";
    }

    with open("f.svg", "wb") as file:                  # seed 003
        file.write(FxGraphDrawer(gm, "f").get_dot_graph().create_svg())

One record per node, one edge per input. A node's shape and dtype are shown when known: from
`meta['tensor_meta']` (after ShapeProp) or `meta['val']` (graphs from Dynamo and AOT).
Rendering needs Graphviz's `dot` program; the text alone needs nothing.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from minitorch.errors import MinitorchError, at_user_line
from tracer.fx.graph_module import GraphModule
from tracer.fx.node import Node, _format_arg, target_name

_FILL = {
    "placeholder": "#d9ead3",
    "get_attr": "#fff2cc",
    "call_function": "#cfe2f3",
    "call_method": "#d9d2e9",
    "call_module": "#fce5cd",
    "output": "#f4cccc",
}


class GraphvizError(MinitorchError, RuntimeError):
    """Graphviz's `dot` program is missing or could not render the graph."""


class DotGraph:
    """A drawing in Graphviz's DOT language, which `dot` can render."""

    def __init__(self, source: str) -> None:
        self.source = source

    def to_string(self) -> str:
        return self.source

    def create_svg(self) -> bytes:
        return self.create("svg")

    def create(self, format: str = "svg") -> bytes:
        """Render with `dot -T<format>` ('svg', 'png', 'pdf', ...); returns the file's bytes."""
        dot = shutil.which("dot")
        if dot is None:
            raise GraphvizError(
                at_user_line(
                    "drawing an fx graph needs the program `dot` from Graphviz, which is not on "
                    "PATH. "
                    "Install Graphviz (apt-get install graphviz, brew install graphviz, or "
                    "conda install graphviz), or save get_dot_graph().to_string() to a .dot file "
                    "and render it elsewhere"
                )
            )
        done = subprocess.run(
            [dot, f"-T{format}"], input=self.source.encode(), capture_output=True, check=False
        )
        if done.returncode != 0:
            raise GraphvizError(
                at_user_line(
                    f"`dot -T{format}` failed: {done.stderr.decode(errors='replace').strip()}"
                )
            )
        return done.stdout


class FxGraphDrawer:
    """Draws `gm.graph`; `name` names the drawing."""

    def __init__(self, gm: GraphModule, name: str) -> None:
        self.gm = gm
        self.name = name

    def get_dot_graph(self) -> DotGraph:
        lines = [
            f"digraph {_quote(self.name)} {{",
            '    node [shape=record, style=filled, fontname="Helvetica"];',
        ]
        nodes = self.gm.graph.nodes
        for node in nodes:
            label = "{" + "|".join(_escape(field) for field in _fields(node)) + "}"
            lines.append(
                f"    {_quote(node.name)} [label={_quote(label)}, "
                f"fillcolor={_quote(_FILL[node.op])}];"
            )
        for node in nodes:
            for inp in node.all_input_nodes:
                lines.append(f"    {_quote(inp.name)} -> {_quote(node.name)};")
        lines.append("}")
        return DotGraph("\n".join(lines) + "\n")

    def get_main_dot_graph(self) -> DotGraph:
        return self.get_dot_graph()


def _fields(node: Node) -> list[str]:
    """The rows of a node's record: name, opcode, target, then constants and shape if any."""
    fields = [f"name=%{node.name}", f"op_code={node.op}", f"target={target_name(node.target)}"]
    if node.op != "output" and _has_constant(node.args):
        fields.append(f"args={_format_arg(node.args)}")
    if node.kwargs:
        fields.append("kwargs=" + _format_arg(node.kwargs))
    shape, dtype = _shape_and_dtype(node)
    if shape is not None:
        fields += [f"shape={list(shape)}", f"dtype={dtype.name}"]
    return fields


def _has_constant(args: tuple) -> bool:
    """Whether args hold more than nodes (the edges already show the nodes)."""
    return any(not isinstance(a, Node) for a in args)


def _shape_and_dtype(node: Node) -> tuple[Any, Any]:
    meta = node.meta.get("tensor_meta")
    if meta is None:
        meta = node.meta.get("val")
    if hasattr(meta, "shape") and hasattr(meta, "dtype"):
        return meta.shape, meta.dtype
    return None, None


def _escape(text: str) -> str:
    """Backslash the characters that structure a record label: { } | < > and spaces kept."""
    for ch in "\\{}|<>":
        text = text.replace(ch, "\\" + ch)
    return text


def _quote(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'
