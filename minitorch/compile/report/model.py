"""The report's data model: plain dataclasses, filled by collect.py, drawn by render.py.

Every row of every stage carries `locs`, the keys of the user's source lines it came from
("sincos.py:14", the file's base name and the line: [Note: location keys] in collect.py). The
page's cross-highlighting is nothing more than those keys written on each element.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# the stages of a graph, as the page names them (its `data-stage` attribute)
STAGES = ("captured", "joint", "forward", "backward", "loop_ir", "kernel", "code")


@dataclass
class Row:
    """One line of a printed IR, and what it prints."""

    text: str
    locs: tuple[str, ...] = ()  # the source lines it came from
    node: str | None = None  # the fx node or buffer the line defines, if any
    inputs: tuple[str, ...] = ()  # the nodes it reads (fx rows: the graph's edges)


@dataclass
class Stage:
    """One graph at one stage: its printed rows, and a drawing for the fx graphs."""

    stage: str  # one of STAGES
    title: str
    rows: list[Row]
    seconds: float | None = None
    svg: str | None = None  # the fx graph drawn (svg.py); None: not an fx graph, or too big


@dataclass
class Kernel:
    """One fused kernel: what it fused, the memory it moves, its code split by buffer."""

    key: str  # "graph0/forward/kernel0": unique in the report
    name: str  # "kernel0"
    locs: tuple[str, ...]  # the source lines of every node it fused
    nodes: tuple[str, ...]  # the fx nodes it was lowered from
    bytes_read: int | None  # None: sizes are symbolic
    bytes_written: int | None
    code: list[Row] = field(default_factory=list)  # its generated source (LLVM IR, numpy, ...)
    language: str = ""  # "llvm", "numpy", "ptx", ...
    stage: str = "forward"  # the AOT graph it computes part of: "forward" or "backward"


@dataclass
class Graph:
    """Everything one captured graph became: the stages in order, and its kernels."""

    key: str  # "graph0"
    title: str  # "f (sincos.py:13)"
    stages: list[Stage] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    saved: str = ""  # what the forward saves for the backward, and its bytes
    ptx: list[Row] = field(default_factory=list)  # with --device cuda


@dataclass
class GraphBreak:
    reason: str
    loc: str | None  # "prog.py:9", or None when the line is unknown


@dataclass
class Frame:
    """One compiled version of a frame (a cache entry): its guards, breaks and graph."""

    title: str  # "f (sincos.py:13)"
    guards: str  # the guard function's source
    graph: str | None  # the key of its Graph, if it captured one
    breaks: list[GraphBreak] = field(default_factory=list)
    fallback: str | None = None  # why it runs eagerly, if it does
    recompile: str | None = None  # what changed, when it is not the frame's first version


@dataclass
class SourceLine:
    lineno: int
    text: str
    # "graph" (a node of a captured graph came from it), "break" (a graph break), "eager" (its
    # frame runs eagerly), "traced" (run while capturing, no tensor op of its own), or ""
    status: str = ""
    notes: list[str] = field(default_factory=list)  # the break's reason, ...


@dataclass
class SourceFile:
    path: str
    name: str  # its base name: the first half of a location key
    lines: list[SourceLine]


@dataclass
class Report:
    script: str
    heading: str  # the backend and extras it compiled with
    sources: list[SourceFile] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    graphs: list[Graph] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # per pipeline stage
    script_seconds: float | None = None
    events: list[tuple[str, str, str]] = field(default_factory=list)  # (event, title, text)
    caches: dict[str, str] = field(default_factory=dict)  # the caches on disk: hits, misses
