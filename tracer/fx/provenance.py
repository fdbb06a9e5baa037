"""Provenance: which line of the user's program each node, buffer and kernel came from.

[Note: provenance]
A learner follows one line of their program through every stage, so every stage records where
its pieces came from, once, when it makes them (nothing is recorded per call):

    capture       node.meta["location"]    the user's line that made the node: a Location
                  node.meta["call_stack"]  the lines of the calls it is inside, outermost
                                           first; the last is the location (an inlined
                                           helper's node: the caller's line, then the helper's)
    AOT autograd  node.meta["origins"]     names of the captured nodes it was traced from
                  node.meta["location"]    the captured node's location (None if none)
                  node.meta["grad_of"]     a backward node: the joint graph's forward node
                                           whose derivative it is part of (tracer/aot/joint.py);
                                           a forward node a partitioner recomputes in the
                                           backward keeps its forward meta, without grad_of
    loop IR       ComputedBuffer.origins   names of the nodes of the lowered graph whose values
                  ComputedBuffer.locations it computes, pointwise nodes inlined into it too
                  FusedKernel.origins/.locations  the union over its buffers
    code          a comment line before each buffer's code in a kernel's source:
                  `; buf3: from sin_1, pow_2 (sincos.py:13)` (`#` in Python source), the
                  text of ComputedBuffer.provenance (ir/nodes.py)

    >>> loc = Location("/home/me/sincos.py", 13, "a = torch.sin(x) ** 2")
    >>> str(loc)
    'sincos.py:13'
"""

from __future__ import annotations

import linecache
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Location:
    """One line of the user's source: where a node was recorded."""

    filename: str  # the code object's co_filename
    lineno: int  # 1-based
    text: str  # the line, stripped (read once, when the location was recorded)

    @classmethod
    def at(cls, filename: str, lineno: int) -> Location:
        """The location of `filename:lineno`, its text read through linecache."""
        return cls(filename, lineno, linecache.getline(filename, lineno).strip())

    def __str__(self) -> str:
        return f"{os.path.basename(self.filename)}:{self.lineno}"


def locations_of(nodes: Iterable[Any]) -> tuple[Location, ...]:
    """The distinct locations of `nodes` (fx nodes), in order; nodes with none are skipped."""
    found: dict[Location, None] = {}
    for node in nodes:
        location = node.meta.get("location")
        if location is not None:
            found.setdefault(location, None)
    return tuple(found)


def unique(names: Iterable[str]) -> tuple[str, ...]:
    """`names` without repeats, in the order first seen."""
    return tuple(dict.fromkeys(names))
