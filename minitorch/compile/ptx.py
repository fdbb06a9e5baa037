"""The `ptx` stage: a graph's kernels as the CUDA backend's PTX, compiled and never launched.

[Note: compile-only PTX]
This machine, and CI, have no GPU; the course should still show what the CUDA backend makes of
a program, and the tests should hold that code to ptxas. Making PTX needs no device: LLVM's
NVPTX target ships with llvmlite, and the CUDA backend imports cupy only to launch. So when the
`ptx` stage is asked for (MINITORCH_LOGS=ptx, or the walkthrough's --device cuda), each graph
compiled for the CPU is also handed, lowered and scheduled as it is, to the CUDA backend's
`compile_kernels`, and the PTX module that comes back is recorded; its kernels never run. The
script runs on the CPU as before, so its results, and the walkthrough's checks against eager,
do not change.

    python -m minitorch.compile examples/sincos.py --device cuda --stage ptx

A kernel the CUDA backend cannot make (a dtype it does not list, an op its generator does not
emit) is not the program's error: the stage lists it with the reason, as a PTX comment
(`// kernel2: not generated: ...`), the module is made of the others, and the run goes on. A
graph compiled for "cuda" itself records the PTX it runs, compiled once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from codegen.backend import Backend, CompiledKernel
from codegen.registry import get_backend
from minitorch import _logging
from minitorch.dtype import DType

if TYPE_CHECKING:  # types only: ([Note: the compiled-graph cache] in graph_cache.py)
    from ir.scheduler import FusedKernel

Kernels = Sequence[tuple["FusedKernel", dict[str, DType]]]


def record_ptx(
    title: str,
    kernels: Kernels,
    sizes: tuple[str, ...],
    backend: Backend,
    compiled: Sequence[CompiledKernel],
) -> None:
    """The `ptx` artifact of one graph: `compiled` itself if `backend` is the GPU's, else the
    same kernels compiled (only) by the CUDA backend."""
    start = time.perf_counter()
    if backend.device == "cuda":
        made, missing = list(compiled), []
    else:
        made, missing = compile_only(get_backend("cuda"), kernels, sizes)
    lines = [f"// {name}: not generated: {reason}" for name, reason in missing]
    # the CUDA backend's kernels share one module: shown once (another GPU backend's, each)
    lines += dict.fromkeys(getattr(k, "module_source", k.source) for k in made)
    count = f"{len(made)} of {len(kernels)}" if missing else f"{len(made)}"
    _logging.artifact(
        "ptx", f"{title}: {count} PTX kernel(s)", "\n".join(lines), time.perf_counter() - start
    )


def compile_only(
    backend: Backend, kernels: Kernels, sizes: tuple[str, ...]
) -> tuple[list[CompiledKernel], list[tuple[str, str]]]:
    """The kernels `backend` compiles, as one module, and (name, why not) for the others."""
    if sizes and not backend.symbolic_sizes:
        reason = f"compiled with size symbols {', '.join(sizes)}, which {backend.name} lacks"
        return [], [(kernel.name, reason) for kernel, _ in kernels]
    fit, missing = [], []
    for kernel, dtypes in kernels:
        lacking = sorted({dtypes[b].name for b in kernel.reads + kernel.writes} - backend.dtypes)
        if lacking:
            missing.append((kernel.name, f"{backend.name} has no {', '.join(lacking)} kernels"))
        else:
            fit.append((kernel, dtypes))
    try:
        return backend.compile_kernels(fit, sizes), missing
    except Exception:  # noqa: BLE001 - one kernel's failure: find which, below
        pass
    good = []
    for kernel, dtypes in fit:  # one at a time, to name the kernel that fails and why
        try:
            backend.compile_kernel(kernel, dtypes, sizes)
        except Exception as e:  # noqa: BLE001 - reported, never fatal ([Note: compile-only PTX])
            missing.append((kernel.name, f"{type(e).__name__}: {e}"))
        else:
            good.append((kernel, dtypes))
    return (backend.compile_kernels(good, sizes) if good else []), missing
