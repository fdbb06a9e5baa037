"""The wrapper: what runs a compiled graph, for static and symbolic sizes alike.

    compiled = CompiledGraph(gm, steps, binding)      # inductor.py builds it
    compiled(x, y)                  # bind sizes, then run each step: kernels or extern ops
    compiled.run([x, y], {"s0": 7}) # with the sizes already bound

A graph's steps (ir/segments.py) run in order over one environment of values: a KernelStep
allocates the buffers its kernels store, launches them, and wraps its outputs as tensors; an
ExternStep calls the op's eager kernel. Sizes are a parameter, not a second copy: a kernel
compiled for static sizes gets `{}`, one compiled with size symbols gets their values, bound
from the input shapes by `SizeBinding` (shapes.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from codegen import allocator
from codegen.backend import CompiledKernel
from ir.indexing import Expr
from ir.nodes import Layout, LoweredProgram
from ir.segments import ExternStep, Segment
from minitorch.compile.shapes import SizeBinding
from minitorch.errors import CompileError
from minitorch.tensor import Tensor
from tracer.fx import GraphModule
from tracer.fx.node import Node


@dataclass
class KernelStep:
    """A segment, compiled: its loop-IR program and one compiled kernel per fused kernel."""

    segment: Segment
    program: LoweredProgram  # symbolic when the kernels take sizes
    kernels: list[CompiledKernel]
    writes: list[str]  # the buffers the kernels store, in order

    def __post_init__(self) -> None:
        # looked up once, not on every call: (buffer, the node holding its value, its layout)
        self.inputs = [(buffer.name, node, buffer.layout) for buffer, node
                       in zip(self.program.inputs, self.segment.inputs, strict=True)]
        self.allocations = [(name, self.program.buffer(name).layout) for name in self.writes]
        self.outputs = list(zip(self.segment.outputs, self.program.outputs, strict=True))

    def run(self, env: dict[Node, Any], sizes: dict[str, int]) -> None:
        memory = {name: _as_layout(name, env[node]._data, layout, sizes)
                  for name, node, layout in self.inputs}
        for name, layout in self.allocations:  # fresh memory for what the kernels store
            memory[name] = allocator.empty(_evaluate(layout.size, sizes), layout.dtype.np)
        for kernel in self.kernels:
            kernel(memory, sizes)
        for node, name in self.outputs:
            env[node] = Tensor._from_array(memory[name])

    def __str__(self) -> str:
        return f"{self.segment}  # {len(self.kernels)} fused kernel(s)"


class CompiledGraph:
    """Runs one compiled graph: binds the sizes, runs the steps, returns the output tuple."""

    def __init__(
        self, gm: GraphModule, steps: list[KernelStep | ExternStep], binding: SizeBinding
    ) -> None:
        graph = gm.graph
        self.placeholders = [node for node in graph.nodes if node.op == "placeholder"]
        # the graph's constant tensors (get_attr nodes): values every step may read
        self.constants = {n: getattr(gm, n.target) for n in graph.nodes if n.op == "get_attr"}
        results = graph.nodes[-1].args[0]
        self.results = tuple(results) if isinstance(results, (tuple, list)) else (results,)
        self.steps = steps
        self.binding = binding
        self.kernels = [k for s in steps if isinstance(s, KernelStep) for k in s.kernels]

    def __call__(self, *inputs: Tensor) -> tuple:
        return self.run(inputs, self.binding.bind_or_raise(inputs))

    def run(self, inputs: Sequence[Tensor], sizes: dict[str, int]) -> tuple:
        env: dict[Node, Any] = dict(zip(self.placeholders, inputs, strict=True))
        if self.constants:
            env.update(self.constants)
        for step in self.steps:
            if isinstance(step, KernelStep):
                step.run(env, sizes)
            else:
                step.run(env)
        # the outputs: computed values, and constants (a backward's None for no gradient)
        return tuple(env[r] if isinstance(r, Node) else r for r in self.results)

    def __str__(self) -> str:
        return "\n".join(str(step) for step in self.steps)


def _evaluate(values: Sequence[int | Expr], sizes: dict[str, int]) -> tuple[int, ...]:
    if not sizes:  # static: already ints
        return values
    return tuple(n.evaluate(sizes) if isinstance(n, Expr) else n for n in values)


def _as_layout(name: str, array: np.ndarray, layout: Layout, sizes: dict[str, int]) -> np.ndarray:
    """`array` if it has the layout the kernels were compiled for (at these sizes); a
    contiguous copy if that layout was contiguous; otherwise a CompileError (the caller's
    guards should prevent it)."""
    shape = _evaluate(layout.size, sizes) if sizes else layout.size
    if array.shape != shape or array.dtype != layout.dtype.np:
        raise CompileError(
            f"compiled kernel input {name}: expected {layout.dtype.name}"
            f"{list(shape)}, got {array.dtype}{list(array.shape)}"
        )
    strides = tuple(s // array.itemsize for s in array.strides)
    expected = _evaluate(layout.stride, sizes) if sizes else layout.stride
    if all(x == y for x, y, n in zip(strides, expected, shape) if n > 1):
        return array
    if expected == Layout.contiguous(shape, layout.dtype).stride:
        return np.ascontiguousarray(array)
    raise CompileError(
        f"compiled kernel input {name}: compiled for strides {expected}, got {strides}"
    )
