"""The wrapper: what runs a compiled graph, for static and symbolic sizes alike.

    compiled = CompiledGraph(gm, steps, binding)      # inductor.py builds it (device="cuda":
                                                      # for the GPU, output_code.py)
    compiled(x, y)                  # bind sizes, then run each step: kernels or extern ops
    compiled.run([x, y], {"s0": 7}) # with the sizes already bound
    print(compiled.source)          # the Python that does it

A graph's steps (ir/segments.py) run in order: a KernelStep allocates the buffers its kernels
store, launches them, and wraps its outputs as tensors; an ExternStep calls the op's eager
kernel. `CompiledGraph` writes those steps out as one Python function, with every lookup done
at compile time ([Note: the generated wrapper] in output_code.py), and `run` is that function.
Sizes are a parameter, not a second copy: a kernel compiled for static sizes gets `{}`, one
compiled with size symbols gets their values, bound from the input shapes by `SizeBinding`
(shapes.py).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from codegen.backend import CompiledKernel
from ir.nodes import Layout, LoweredProgram
from ir.segments import ExternStep, Segment
from minitorch.compile.output_code import WrapperCode, run_source
from minitorch.compile.shapes import SizeBinding
from minitorch.tensor import Tensor
from tracer.fx import GraphModule


@dataclass
class KernelStep:
    """A segment, compiled: its loop-IR program and one compiled kernel per fused kernel."""

    segment: Segment
    program: LoweredProgram  # symbolic when the kernels take sizes
    kernels: list[CompiledKernel]
    kernel_io: list[tuple[tuple[str, ...], tuple[str, ...]]]  # each kernel's (reads, writes)

    def __post_init__(self) -> None:
        # (buffer, the node holding its value, its layout), for each input of the segment
        self.inputs = [
            (buffer.name, node, buffer.layout)
            for buffer, node in zip(self.program.inputs, self.segment.inputs, strict=True)
        ]
        self.outputs = list(zip(self.segment.outputs, self.program.outputs, strict=True))

    def layout(self, buffer: str) -> Layout:
        return self.program.buffer(buffer).layout

    def size_key(self, buffer: str) -> Hashable:
        """What two buffers must share to share memory: the dtype (a kernel called with a dict
        of arrays, numpy's or the interpreter's, writes through the array's dtype), and the
        byte size, or the symbolic shape."""
        layout = self.layout(buffer)
        if all(type(n) is int for n in layout.size):
            return layout.numel * layout.dtype.np.itemsize, layout.dtype
        return layout.size, layout.dtype

    def __str__(self) -> str:
        return f"{self.segment}  # {len(self.kernels)} fused kernel(s)"


class CompiledGraph:
    """Runs one compiled graph: binds the sizes, runs the steps, returns the output tuple."""

    def __init__(
        self,
        gm: GraphModule,
        steps: list[KernelStep | ExternStep],
        binding: SizeBinding,
        device: str = "cpu",
    ) -> None:
        graph = gm.graph
        placeholders = [node for node in graph.nodes if node.op == "placeholder"]
        # the graph's constant tensors (get_attr nodes): values every step may read, moved
        # once to the device the graph runs on (tracing made them on the host)
        constants = {
            n: _on(getattr(gm, n.target), device) for n in graph.nodes if n.op == "get_attr"
        }
        results = graph.nodes[-1].args[0]
        results = tuple(results) if isinstance(results, (tuple, list)) else (results,)
        self.steps = steps
        self.binding = binding
        self.kernels = [k for s in steps if isinstance(s, KernelStep) for k in s.kernels]
        code = WrapperCode(placeholders, constants, binding.names, device)
        kernel_steps = sum(isinstance(s, KernelStep) for s in steps)
        for step in steps:
            if isinstance(step, KernelStep):
                code.kernel_step(step, f"{step.segment.name}_" if kernel_steps > 1 else "")
            else:
                code.extern_step(step)
        # the outputs: computed values, and constants (a backward's None for no gradient)
        self.source, self.run = code.finish(results)
        self.namespace = code.namespace  # what the source's names stand for
        self.launches = code.launches  # (kernel, its buffers' names, its name) in the source

    @classmethod
    def loaded(
        cls,
        source: str,
        namespace: dict[str, Any],
        kernels: list[CompiledKernel],
        binding: SizeBinding,
    ) -> CompiledGraph:
        """A graph compiled in another process, from its wrapper's source and what the names
        in it stand for ([Note: the compiled-graph cache] in graph_cache.py): it has no steps,
        only kernels."""
        self = cls.__new__(cls)
        self.steps, self.kernels, self.binding, self.launches = [], kernels, binding, []
        self.source, self.namespace = source, namespace
        self.run = run_source(source, namespace)
        return self

    def __call__(self, *inputs: Tensor) -> tuple:
        return self.run(inputs, self.binding.bind_or_raise(inputs))

    def __str__(self) -> str:
        if not self.steps and self.kernels:
            return f"{len(self.kernels)} kernel(s), loaded with the graph from the disk"
        return "\n".join(str(step) for step in self.steps)


def _on(value: object, device: str) -> object:
    """A constant on `device`: tensors moved there, anything else as it is."""
    return value.to(device) if isinstance(value, Tensor) and device != "cpu" else value
