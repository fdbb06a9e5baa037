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

[Note: reusing dead buffers]
A stored buffer that only later kernels read is dead once the last of them has run, and a
buffer a still later kernel stores can take its memory instead of asking for more (a chain of
reductions, each stored for the next kernel, needs two buffers, not one per step). Inductor
does this in its wrapper (`buf3 = buf0  # reuse`), and so does ours (minitorch/compile/
output_code.py), from `plan_reuse` below. Per segment, walking its kernels in order:

- a buffer is freed after the last kernel that reads it (never during it: a kernel's writes
  must not overlap its reads, the promise the LLVM kernel is compiled on);
- a kernel's write takes a freed buffer of the same size, if there is one;
- the segment's outputs are never freed and never take one: the caller holds them, as
  tensors that must not share memory with anything else. Inputs are never freed either
  (the caller's), nor is what an extern step returns (it may be a view of anything): those
  reach a segment as its inputs.

Two buffers share memory only if they have the same dtype (the numpy and interpreter backends
write through the array they are given, so an int64 array would truncate the floats stored in
it), and the same byte size when sizes are numbers, or the same shape when they are
expressions of size symbols.

Inductor goes further (in-place ops, pools shared across steps); we stop here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence

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


def plan_reuse(
    kernel_io: Sequence[tuple[Sequence[str], Sequence[str]]],
    outputs: Iterable[str],
    size_key: Callable[[str], Hashable],
) -> dict[str, str]:
    """For each stored buffer that can reuse a dead one's memory, that dead buffer's name
    ([Note: reusing dead buffers]). `kernel_io` lists each kernel's (reads, writes), in
    order; buffers with equal `size_key` may share memory.

        chain = [((), ("buf0",)), (("buf0",), ("buf1",)), (("buf1",), ("buf2",)),
                 (("buf2",), ("buf3",))]             # kernel k reads what kernel k-1 stored
        plan_reuse(chain, outputs=["buf3"], size_key=lambda name: 64) == {"buf2": "buf0"}
    """
    outputs = set(outputs)
    written = {name for _, writes in kernel_io for name in writes}
    last_read = {}
    for k, (reads, _) in enumerate(kernel_io):
        for name in reads:
            last_read[name] = k
    free: dict[Hashable, list[str]] = {}  # size -> dead buffers of that size
    reuse: dict[str, str] = {}
    for k, (reads, writes) in enumerate(kernel_io):
        for name in writes:
            pool = free.get(size_key(name))
            if name not in outputs and pool:
                reuse[name] = pool.pop()
        for name in dict.fromkeys(reads):
            if last_read[name] == k and name in written and name not in outputs:
                free.setdefault(size_key(name), []).append(name)
    return reuse


def allocate(program: LoweredProgram, writes: Iterable[str]) -> dict[str, np.ndarray]:
    """A fresh contiguous array for every buffer name in `writes` (uninitialised)."""
    arrays = {}
    for name in writes:
        layout = program.buffer(name).layout
        arrays[name] = np.empty(layout.size, dtype=layout.dtype.np)
    return arrays
