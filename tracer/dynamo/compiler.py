"""What bytecode capture hands each captured graph to: the `GraphCompiler` protocol.

    compiled = compiler.compile(gm, example_inputs, dynamic_dims)
    outputs = compiled(*graph_inputs)        # the graph's output tuple

Capture knows nothing of AOT autograd, the loop IR or code generators: it builds a graph and
its guards, and asks a compiler for something to run. Which compilers exist by name
("eager", "aot_eager", "inductor", "llvm", ...) is the driver's business (minitorch/compile/),
which passes one of these to `optimize`.

`dynamic_dims[i]` is the set of dims of input i whose sizes the guards leave free ([Note:
dynamic shapes] in output_graph.py): a later call may bring other sizes there, and the result
must handle them, by being size-generic or by compiling again per shape. A plain function
`backend(gm, example_inputs) -> callable`, the form PyTorch users write, is adapted by
`CallableCompiler` and must handle every size itself (as running the graph's Python code does).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from minitorch.errors import CompileError
from tracer.fx import GraphModule


class GraphCompiler(ABC):
    """Turns one captured graph into a callable over the graph's inputs."""

    name: str  # for messages: "backend 'inductor' failed: ..."

    @abstractmethod
    def compile(
        self, gm: GraphModule, example_inputs: Sequence, dynamic_dims: Sequence[set[int]]
    ) -> Callable:
        """Something that runs `gm` on its inputs, at these sizes and at any others the free
        dims (`dynamic_dims[i]` for input i) may take; returns the graph's output tuple."""


@dataclass(frozen=True)
class CallableCompiler(GraphCompiler):
    """A user's `backend(gm, example_inputs) -> callable` as a GraphCompiler.

    Compared by the function it wraps, so two `optimize(f, backend=fn)` share cache entries.
    """

    fn: Callable

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", type(self.fn).__name__)

    def compile(self, gm, example_inputs, dynamic_dims) -> Callable:
        return self.fn(gm, list(example_inputs))


def eager(gm: GraphModule, example_inputs: Sequence) -> Callable:
    """The "eager" backend: the captured graph's own Python code, at any size."""
    return gm.forward


EAGER = CallableCompiler(eager)


def as_compiler(backend: GraphCompiler | Callable) -> GraphCompiler:
    """`backend` as a GraphCompiler; a CompileError for anything else (a name is resolved by
    minitorch.compile, which knows the registered backends)."""
    if isinstance(backend, GraphCompiler):
        return backend
    if callable(backend):
        return CallableCompiler(backend)
    raise CompileError(
        f"backend {backend!r}: capture takes a GraphCompiler or a function "
        "backend(gm, example_inputs); names are looked up by minitorch.compile(f, backend=...)"
    )
