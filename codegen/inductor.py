"""Inductor in miniature: an fx graph of op-table calls -> fused kernels -> machine code.

`compile_fx` is the back half of the compiler as one flat list of passes (the course's table
of contents for ir/ and codegen/):

    (partition)      ops with no lowering become eager fallback steps between compiled segments
    lower_graph      fx nodes -> loop-level buffers; pointwise producers inlined into consumers
    schedule         buffers -> fused kernels, one loop nest each; decides what is stored
    compile_kernel   each fused kernel -> one LLVM function -> machine code (codegen/llvm)
    CompiledGraph    the "wrapper": allocate the stored buffers, run the kernels in order

It is the `fw_compiler`/`bw_compiler` that AOT autograd calls for the "inductor" backend.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from codegen import allocator
from codegen.backend import Backend, CompiledKernel
from codegen.fallback import compile_with_fallbacks, has_fallbacks
from ir.lowering import lower_graph
from ir.nodes import Layout, LoweredProgram
from ir.scheduler import FusedKernel, schedule
from minitorch import _logging
from minitorch.errors import CompileError
from minitorch.tensor import Tensor
from tracer.fx import Graph, GraphModule


def default_backend() -> Backend:
    from codegen.llvm.backend import LLVMBackend

    return LLVMBackend()


def compile_fx(
    gm: GraphModule, example_inputs: Sequence, backend: Backend | None = None
) -> Callable:
    """Compile a graph of `minitorch.ops` calls into kernels; returns a callable over tensors.

    Ops with no lowering (mm, gather, ...) run as fallback kernels between compiled segments
    (codegen/fallback.py, [Note: fallback kernels]); a graph of lowerable ops is one segment.
    """
    backend = backend or default_backend()
    name = getattr(gm, "meta", {}).get("name", "graph")
    if has_fallbacks(gm.graph):
        return compile_with_fallbacks(
            gm.graph, lambda graph, part: compile_graph(graph, f"{name}.{part}", backend)
        )
    return compile_graph(gm.graph, name, backend)


def compile_graph(graph: Graph, name: str, backend: Backend) -> CompiledGraph:
    """The passes over a graph whose every op has a lowering."""
    graph, constant_outputs = _tensor_outputs_only(graph)

    start = time.perf_counter()
    program = lower_graph(graph)  # fx graph -> buffers of define-by-run loop bodies
    kernels = schedule(program)  # buffers -> fused kernels (and which buffers are stored)
    _record("loop_ir", f"{name}: {len(kernels)} fused kernel(s)", program.format(kernels), start)

    start = time.perf_counter()
    dtypes = program.dtypes()
    compiled = [backend.compile_kernel(k, dtypes) for k in kernels]  # LLVM IR -> machine code
    if _logging.enabled("llvm_ir"):
        source = "\n\n".join(k.source.rstrip() for k in compiled)
        _logging.artifact(
            "llvm_ir",
            f"{name}: {len(compiled)} {backend.name} kernel(s)",
            source,
            time.perf_counter() - start,
        )
    return CompiledGraph(program, kernels, compiled, constant_outputs)


def _record(stage: str, title: str, text: str, start: float) -> None:
    if _logging.enabled(stage):
        _logging.artifact(stage, title, text, time.perf_counter() - start)


def _tensor_outputs_only(graph: Graph) -> tuple[Graph, dict[int, object]]:
    """The graph with only tensor-valued outputs, and the other outputs by position.

    A backward graph returns None for an input that gets no gradient; the loop-level IR only
    knows buffers, so such values bypass it.
    """
    output = graph.nodes[-1]
    values = output.args[0] if isinstance(output.args[0], (tuple, list)) else (output.args[0],)
    constants = {i: v for i, v in enumerate(values) if not hasattr(v, "op")}
    if not constants:
        return graph, {}
    copy = Graph()
    env: dict = {}
    for node in graph.nodes[:-1]:
        env[node] = copy.node_copy(node, lambda n: env[n])
    copy.output(tuple(env[v] for i, v in enumerate(values) if i not in constants))
    return copy, constants


class CompiledGraph:
    """Runs a compiled program: checks input layouts, allocates, launches, wraps outputs."""

    def __init__(
        self,
        program: LoweredProgram,
        kernels: list[FusedKernel],
        compiled: list[CompiledKernel],
        constant_outputs: dict[int, object],
    ) -> None:
        self.program = program
        self.kernels = compiled
        self.writes = [name for k in kernels for name in k.writes]
        self.constant_outputs = constant_outputs
        self.num_outputs = len(program.outputs) + len(constant_outputs)

    def __call__(self, *inputs: Tensor) -> tuple:
        memory: dict[str, np.ndarray] = {}
        for buffer, t in zip(self.program.inputs, inputs, strict=True):
            memory[buffer.name] = _as_layout(buffer.name, t._data, buffer.layout)
        for name in self.writes:  # fresh memory for what the kernels store (outputs too)
            layout = self.program.buffer(name).layout
            memory[name] = allocator.empty(tuple(layout.size), layout.dtype.np)
        for kernel in self.kernels:
            kernel(memory)
        tensors = iter(Tensor._from_array(memory[name]) for name in self.program.outputs)
        return tuple(
            self.constant_outputs[i] if i in self.constant_outputs else next(tensors)
            for i in range(self.num_outputs)
        )


def _as_layout(name: str, array: np.ndarray, layout: Layout) -> np.ndarray:
    """`array` if it has the layout the kernels were compiled for; a contiguous copy if that
    layout was contiguous; otherwise a CompileError (the caller's guards should prevent it)."""
    if array.shape != tuple(layout.size) or array.dtype != layout.dtype.np:
        raise CompileError(
            f"compiled kernel input {name}: expected {layout.dtype.name}"
            f"{list(layout.size)}, got {array.dtype}{list(array.shape)}"
        )
    strides = tuple(s // array.itemsize for s in array.strides)
    if _same_strides(strides, layout.stride, layout.size):
        return array
    if layout == Layout.contiguous(tuple(layout.size), layout.dtype):
        return np.ascontiguousarray(array)
    raise CompileError(
        f"compiled kernel input {name}: compiled for strides {layout.stride}, got {strides}"
    )


def _same_strides(a: tuple, b: tuple, size: tuple) -> bool:
    """Strides agree on every dimension that has more than one element."""
    return all(x == y for x, y, n in zip(a, b, size) if n > 1)
