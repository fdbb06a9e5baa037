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

# ir/scheduler.py: of the fusions its rules allow, which the scheduler makes. "greedy" takes
# every one, up to the backend's max_fusion_size buffers a kernel ([Note: fusion policies] in
# ir/policy.py); register_fusion_policy adds others.
fusion_policy = "greedy"

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

# [Note: the core and its extras]
# The core is what a learner reads to understand each stage: capture with guards and breaks,
# the fx graph, AOT's joint graph and the default partitioner, lowering and scheduling with
# fusion, one code generator (LLVM), a plain runtime. Each knob below is an *extra*: it wraps
# or replaces a core function at a documented seam, on by default where it makes things
# faster or more exact. `core_only()` (or MINITORCH_CORE=1) turns every one off; the compiler
# still works, the same values (law 1), only slower. scripts/size.py counts the two apart.
graph_cache = True  # compiled graphs kept on disk too (minitorch/compile/graph_cache.py)
object_loader = True  # our own ELF loader (codegen/llvm/object_loader.py); off: LLVM's MCJIT
thread_pool = True  # a big kernel split across threads (codegen/llvm/parallel.py)
pooled_allocator = True  # kernel buffers from a pool (codegen/allocator.py); off: numpy's
exact_trig = True  # sin/cos of huge arguments exactly, vectorized (codegen/llvm/trig*.py)
symbolic_sizes = True  # one compiled version for every size of a dynamic dim (ir/symbolic.py)
cuda = True  # the CUDA target (codegen/cuda): off, graphs of "cuda" tensors run eager's kernels
# An extern step on the CPU calls its op's eager kernel, not the dispatcher ([Note: extern
# steps without the dispatcher] in minitorch/compile/direct_externs.py); off: through the op
direct_externs = True
# nanoGPT's attention (bmm, scale, mask, softmax, bmm) as one op in inference graphs, one
# kernel in the LLVM backend (tracer/fx/passes/fuse_attention.py, codegen/llvm/attention.py)
fused_attention = True
# A guard skips its checks of the module trees while no module changed, read when it is compiled
# ([Note: a module tree is one number] in tracer/dynamo/epoch_guard.py); off: the full walk
epoch_guards = True

EXTRAS = (
    "disk_cache",
    "graph_cache",
    "object_loader",
    "thread_pool",
    "pooled_allocator",
    "exact_trig",
    "symbolic_sizes",
    "cuda",
    "direct_externs",
    "fused_attention",
    "epoch_guards",
)


def core_only() -> None:
    """Turn every extra off (and the min-cut partitioner): the core alone."""
    global partitioner
    for name in EXTRAS:
        globals()[name] = False
    partitioner = "default"


def extras_on() -> list[str]:
    """The extras switched on now, by name (the walkthrough says which)."""
    return [name for name in EXTRAS if globals()[name]]


# MINITORCH_CHECK=1: the checkers run after each stage (fx's lint after capture and AOT, the
# loop IR's verify after scheduling), as CI runs the fuzzer, the models and the conformance
# suite. Off by default: they cost compile time.
check = os.environ.get("MINITORCH_CHECK", "0") == "1"

if os.environ.get("MINITORCH_CORE", "0") == "1":
    core_only()
