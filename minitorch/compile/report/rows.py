"""Each stage's printed text as rows, each row keyed by the source lines it came from
([Note: location keys] in collect.py): fx graphs (`fx_rows`), the loop IR (`loop_ir_rows`), a
graph's fused kernels with their bytes and code (`kernels_of`), generated code split at its
buffers' comments (`code_rows`) and PTX modules split by kernel (`ptx_rows`)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from minitorch.compile.report.model import Graph, Kernel, Row

if TYPE_CHECKING:
    from minitorch.compile.report.collect import Collector

_DEF = re.compile(r"^\s*def \w+\((.*)\)")
_ASSIGN = re.compile(r"^\s*(\w+) = (.*)$")
_RETURN = re.compile(r"^\s*return (.*)$")
_NAME = re.compile(r"[A-Za-z_]\w*")
_BUFFER = re.compile(r"^\s*(buf\w+|kernel\w*): ")
# `; buf3: from sin_1, pow_2 (sincos.py:13)` (LLVM), `# ...` (numpy), `// ...` (PTX)
_SECTION = re.compile(r"^\s*(?:;|#|//)\s*(buf\w+): from ([^(]*?)\s*(?:\((.*)\))?\s*$")
_GLOBL = re.compile(r"^\s*// \.globl\s+(\w+)")  # a kernel's start in a PTX module


def fx_rows(text: str, names: dict[str, tuple[str, ...]]) -> list[Row]:
    """A printed GraphModule as rows: each node's line with the node's keys and its inputs
    (the names on its right-hand side), the placeholders from the `def` line."""
    rows = []
    for line in text.splitlines():
        header, assign, ret = _DEF.match(line), _ASSIGN.match(line), _RETURN.match(line)
        if header:
            unquoted = re.sub(r'"[^"]*"', "", header.group(1))  # "f32[4, 8]" holds commas
            params = [p.split(":")[0].strip() for p in unquoted.split(",")]
            rows.append(Row(line, inputs=tuple(p for p in params if p and p != "self")))
        elif assign and assign.group(1) in names:
            name, rhs = assign.group(1), assign.group(2).split(";")[0]
            reads = tuple(dict.fromkeys(n for n in _NAME.findall(rhs) if n in names and n != name))
            rows.append(Row(line, names[name], name, reads))
        elif ret:
            reads = tuple(dict.fromkeys(n for n in _NAME.findall(ret.group(1)) if n in names))
            rows.append(Row(line, (), "output", reads))
        else:
            rows.append(Row(line))
    return rows


def loop_ir_rows(c: Collector, steps: list, names: dict[str, tuple[str, ...]]) -> list[Row]:
    """The lowered steps as rows: each buffer's lines keyed by the buffer's locations (and its
    origins' keys), each kernel's header by the kernel's."""
    rows: list[Row] = []
    for step in steps:
        if not isinstance(step, tuple):  # an extern step: one op, run by eager's kernel
            node = getattr(step, "node", None)
            locs = c.node_locs(node, names) if node is not None else ()
            rows.append(Row(str(step), names.get(getattr(node, "name", ""), locs)))
            continue
        segment, program, kernels = step
        if len(steps) > 1:
            rows.append(Row(str(segment)))
        rows += [Row(line) for line in ["inputs:"] + [f"    {b}" for b in program.inputs]]
        for kernel in kernels:
            locs = ()
            for line in str(kernel).splitlines():
                found = _BUFFER.match(line)
                if found and found.group(1).startswith("kernel"):
                    locs = item_locs(c, kernel, names)
                elif found:
                    locs = item_locs(c, _buffer(program, found.group(1)), names)
                rows.append(Row(line, locs, found.group(1) if found else None))
        rows.append(Row(f"outputs: {program.outputs}"))
    return rows


def item_locs(c: Collector, item: Any, names: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """A buffer's or fused kernel's keys: its locations, and its origins' keys."""
    keys = list(c.keys(getattr(item, "locations", ())))
    for origin in getattr(item, "origins", ()):
        keys += names.get(origin, ())
    return tuple(dict.fromkeys(keys))


def _buffer(program: Any, name: str) -> Any:
    try:
        return program.buffer(name)
    except KeyError:
        return None


def kernels_of(
    c: Collector,
    graph: Graph,
    steps: list,
    compiled: Any,
    names: dict,
    language: str,
    part: str,
) -> list[Kernel]:
    """The fused kernels of one of the graph's parts (its "forward", "backward" or
    "inference" graph), each with its compiled code (when the kernels artifact carries the
    CompiledGraph) and the bytes it reads and writes."""
    fused = [
        (program, k) for s in steps if isinstance(s, tuple) for k in s[2] for program in [s[1]]
    ]
    made = list(getattr(compiled, "kernels", []))
    out: list[Kernel] = []
    taken = {k.key for k in graph.kernels}
    for i, (program, kernel) in enumerate(fused):
        key = f"{graph.key}/{part}/{kernel.name}"
        key = key if key not in taken else f"{key}_{i}"  # segments name their kernels alike
        taken.add(key)
        locs = item_locs(c, kernel, names)
        nodes = tuple(getattr(kernel, "origins", ()))
        if not nodes:  # before provenance: the buffers it computes
            nodes = tuple(b.name for loop in kernel.loops for b in loop.nodes)
        source = made[i].source if i < len(made) else ""
        out.append(
            Kernel(
                key,
                kernel.name,
                locs,
                nodes,
                _bytes(program, kernel.reads),
                _bytes(program, kernel.writes),
                code_rows(c, source, locs),
                language,
                "backward" if part == "backward" else "forward",
            )
        )
    return out


def _bytes(program: Any, names: Iterable[str]) -> int | None:
    """The bytes of these buffers, or None when a size is symbolic."""
    total = 0
    for name in names:
        buffer = _buffer(program, name)
        if buffer is None:
            continue
        layout = buffer.layout
        numel = 1
        for size in layout.size:
            if type(size) is not int:
                return None
            numel *= size
        total += numel * layout.dtype.np.itemsize
    return total


def code_rows(c: Collector, source: str, prologue: tuple[str, ...]) -> list[Row]:
    """Generated code split at its `buf3: from ...` comments: each part keyed by its buffer's
    locations; the lines before the first (the function's head) by `prologue`."""
    rows, locs, node = [], prologue, None
    for line in source.rstrip().splitlines():
        found = _SECTION.match(line)
        if found:
            node = found.group(1)
            where = [w.strip() for w in (found.group(3) or "").split(",") if ":" in w]
            locs = tuple(_known(c, w) for w in where)
        rows.append(Row(line, locs, node))
    return rows


def ptx_rows(text: str, kernels: dict[str, tuple[str, ...]]) -> list[Row]:
    """A PTX module split at each kernel's `// .globl kernel0`: LLVM's NVPTX back end drops
    the buffers' comments, so a kernel's part is keyed by the whole kernel's lines."""
    rows, locs, node = [], (), None
    for line in text.rstrip().splitlines():
        found = _GLOBL.match(line)
        if found and found.group(1) in kernels:
            node, locs = found.group(1), kernels[found.group(1)]
        rows.append(Row(line, locs, node))
    return rows


def _known(c: Collector, key: str) -> str:
    """A key from a comment, "sincos.py:13" (its file's path is known from the nodes)."""
    name, _, line = key.rpartition(":")
    return f"{os.path.basename(name)}:{line}"
