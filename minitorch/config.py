"""Every knob in one place (STYLE: core logic does not read the environment itself)."""

from __future__ import annotations

import os

# Bytecode capture (tracer/dynamo)
recompile_limit = 8  # cache entries per code object before the frame runs eagerly

# AOT autograd (tracer/aot): which values the forward saves for the backward. "min_cut" saves
# few bytes and recomputes cheap pointwise ops in the backward ([Note: min-cut partitioning]);
# "default" saves every forward value the backward reads ([Note: partitioning]). "default" is
# the default: min_cut may recompute an output whose backward formula reads it (exp, tanh), so
# a write into that output before backward() goes unnoticed where eager refuses it.
partitioner = "default"

# Code generation (codegen)
num_threads = max(1, min(os.cpu_count() or 1, 8))  # threads that split one big kernel
parallel_threshold = 1 << 17  # elements of work below which a kernel runs on one thread
# Ask Linux for 2 MiB pages for the allocator's large blocks ([Note: huge pages] in
# codegen/allocator.py). Off: in the VM we measured on, a huge page's first touch cost 6x more.
huge_pages = False

# Memory: at import, set glibc's malloc to keep freed memory mapped (minitorch/heap.py)
keep_freed_memory_mapped = True

# The kernel cache on disk ([Note: the kernel cache on disk] in codegen/disk_cache.py): compiled
# machine code, kept between processes. MINITORCH_DISK_CACHE=0 turns it off.
disk_cache = os.environ.get("MINITORCH_DISK_CACHE", "1") != "0"
cache_dir = os.environ.get("MINITORCH_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "minitorch"
)


# What MINITORCH_LOGS prints to stderr as it happens: walkthrough stages (graph, joint, forward,
# backward, loop_ir, kernels), capture events (graph, guards, recompiles, graph_breaks,
# bytecode) and kernel_cache (an entry of the cache on disk rejected, or the cache turned off);
# minitorch._logging lists them. Read once, here; tests set `config.logs` directly.
def parse_logs(text: str) -> set[str]:
    """The names in a MINITORCH_LOGS value: parse_logs("graph, guards") == {"graph", "guards"}."""
    return {part.strip() for part in text.split(",") if part.strip()}


logs = parse_logs(os.environ.get("MINITORCH_LOGS", ""))

# The walkthrough's --backend: when set, every minitorch.compile call uses this backend.
force_backend: str | None = None
