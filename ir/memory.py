"""Memory planning: which computed buffers a kernel stores, and memory for the ones it does.

[Note: memory planning]
Fusion makes most intermediate buffers unnecessary. In sin(x)**2 + cos(x)**2, once sin, cos
and the sum run in one loop, sin(x) is a value in a register, used by the next line of the
loop body and then dropped; writing it to memory would cost a store per element and an
allocation, and nobody would read it back.

So a kernel stores a buffer only when something outside the kernel needs it:

- it is a graph output (the caller reads it), or
- another kernel loads it (it has to survive until that kernel runs).

Everything else is a *register buffer*: computed, used, never written. The scheduler promises
that a load of a buffer computed earlier in the same kernel uses exactly that buffer's own
store index, so a backend can always answer such a load from the register.

Inductor goes further (reusing the memory of dead buffers for later ones, in-place ops); we
stop at the decision above, which is the one that pays most.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ir.nodes import ComputedBuffer, LoweredProgram


def plan_writes(
    kernel_nodes: Sequence[Sequence[ComputedBuffer]],
    kernel_reads: Sequence[Iterable[str]],
    outputs: Iterable[str],
) -> list[tuple[str, ...]]:
    """For each kernel, the names of its nodes that must be stored: outputs and cross-kernel reads.

    kernel_reads[k] lists what kernel k loads from memory (never its own nodes), so a name in
    some kernel's reads is needed by a kernel other than the one computing it.
    """
    needed = set(outputs).union(*kernel_reads)
    return [tuple(node.name for node in nodes if node.name in needed) for nodes in kernel_nodes]


def allocate(program: LoweredProgram, writes: Iterable[str]) -> dict[str, np.ndarray]:
    """A fresh contiguous array for every buffer name in `writes` (uninitialised)."""
    arrays = {}
    for name in writes:
        layout = program.buffer(name).layout
        arrays[name] = np.empty(layout.size, dtype=layout.dtype.np)
    return arrays
