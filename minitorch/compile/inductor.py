"""Inductor in miniature: the driver from a captured graph to compiled kernels.

The passes, in order: the course's table of contents for tracer/aot, ir and codegen.

    aot_trace       tracer/aot        the forward (and backward) graph, traced at the example's
                                      sizes, or at sentinel sizes to read size symbols back
    split_graph     ir/segments.py    compiled segments, and extern steps for ops that do not
                                      lower ([Note: extern kernels])
    lower_graph     ir/lowering.py    each segment -> buffers of loop-level IR
    schedule        ir/scheduler.py   buffers -> fused kernels; decides what is stored
    symbolize       ir/symbolic.py    (size symbols only) sizes read back as s0, s1, ...
    compile_kernels codegen/          the graph's fused kernels, by the chosen Backend (the LLVM
                                      one compiles them as one module; with the `ptx` stage
                                      asked for, the CUDA one too: ptx.py)
    CompiledGraph   wrapper.py        the wrapper: allocate, run kernels and extern ops in order,
                                      as generated Python (output_code.py)

Static or symbolic sizes is a parameter of the same passes (a `SizeBinding` with or without
symbols), not a second copy of them. `InductorCompiler` is the GraphCompiler that capture hands
each graph to for `minitorch.compile(f, backend="inductor")` (or a code generator's own name,
"llvm", "cuda", "interpreter", "numpy"); "aot_eager" stops after the first pass and runs the
graphs' Python code. "inductor" picks the code generator by the inputs' device: LLVM for
"cpu", the CUDA backend for "cuda" (whose wrapper allocates and launches on the GPU); inputs
on two devices run eagerly (`_device`).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codegen.backend import Backend
from codegen.registry import default_backend
from ir.segments import ExternStep, split_graph
from minitorch import _logging
from minitorch.compile import graph_cache
from minitorch.compile.layouts import eager_layouts, may_reorder, relayout
from minitorch.compile.ptx import record_ptx
from minitorch.compile.shapes import PerShape, SizeBinding, Version
from minitorch.compile.wrapper import CompiledGraph, KernelStep
from minitorch.errors import CompileError, MinitorchError
from minitorch.fake import make_fake
from minitorch.ops.registry import TensorMeta
from minitorch.tensor import Tensor
from tracer.aot import AOTGraphs, CompiledFunction, aot_module, aot_trace, fake_inputs
from tracer.aot.aliasing import OutputAliases
from tracer.aot.aot_autograd import backward_variants
from tracer.dynamo.compiler import GraphCompiler, eager
from tracer.fx import GraphModule

if TYPE_CHECKING:  # types only: the lowering is imported when a graph is first lowered
    from ir.nodes import LoweredProgram
    from ir.scheduler import FusedKernel
    from ir.segments import Segment
    from ir.symbolic import Symbolizer

    # One step of a lowered graph: a segment with its loop-IR program and fused kernels, or an
    # extern step.
    LoweredStep = tuple[Segment, LoweredProgram, list[FusedKernel]] | ExternStep

# Two disjoint sets of sentinel sizes: a program that reads back the same from both holds no
# size we failed to see ([Note: symbolic sizes] in ir/symbolic.py).
_FIRST, _SECOND = 10_000, 20_000


class AOTEagerCompiler(GraphCompiler):
    """AOT autograd, then each graph's own Python code: "aot_eager"."""

    name = "aot_eager"

    def compile(self, gm, example_inputs, dynamic_dims) -> Callable:
        """One version for static sizes; for dynamic dims, versions made as calls need them."""
        if not any(dynamic_dims):
            return self.version(gm, list(example_inputs), dynamic_dims)
        return PerShape(lambda inputs: self.version(gm, inputs, dynamic_dims), list(example_inputs))

    def version(self, gm: GraphModule, inputs: list, dynamic_dims: Sequence[set[int]]) -> Version:
        """A compiled version for (at least) these inputs' shapes."""
        return ShapeSpecific(aot_module(gm, inputs, eager, eager), SizeBinding.static(inputs))


class InductorCompiler(AOTEagerCompiler):
    """AOT autograd, then the loop-level IR and a code generator's kernels."""

    def __init__(self, backend: Backend | None = None, name: str = "inductor") -> None:
        self.backend = backend  # None: the default for the inputs' device
        self.name = name

    def version(self, gm: GraphModule, inputs: list, dynamic_dims: Sequence[set[int]]) -> Version:
        device = _device(inputs, self.backend)
        backend = self.backend or default_backend(device)
        if any(dynamic_dims) and backend.symbolic_sizes:
            generic = compile_graphs(
                gm, inputs, SizeBinding.symbolic(inputs, dynamic_dims), backend
            )
            if generic is not None:  # its binding, made from these inputs, fits them
                return generic
        return compile_graphs(gm, inputs, SizeBinding.static(inputs), backend)


def compile_graphs(
    gm: GraphModule, inputs: Sequence[Tensor], binding: SizeBinding, backend: Backend
) -> CompiledAOT | None:
    """Every pass, for the sizes `binding` says: AOT autograd, then each graph split, lowered,
    scheduled and compiled. With size symbols it may answer None: a graph with extern steps
    (they run eager code with traced sizes), or one whose sizes do not read back."""
    if binding.count == 0:
        graphs = aot_trace(gm, inputs)
        layouts = _eager_layouts(graphs, gm, inputs, binding)
        compiled = [cached_compile(g, backend, binding) for g in graphs.all()]
    else:
        try:
            graphs, lowered = _trace_symbolic(gm, inputs, binding, backend)
        except _NotSymbolic:
            return None
        layouts = _eager_layouts(graphs, gm, inputs, binding)
        compiled = [
            compile_lowered(graph, steps, binding, backend)
            for graph, steps in zip(graphs.all(), lowered, strict=True)
        ]
    variants = None
    if graphs.training and binding.count == 0:  # (a pruned graph's sizes are the traced ones)
        variants = backward_variants(graphs, lambda pruned, _: cached_compile(pruned, backend))
    return CompiledAOT(
        compiled[0],
        compiled[1] if graphs.training else None,
        graphs.spec,
        binding,
        graphs.aliases,
        layouts,
        variants,
    )


def _eager_layouts(
    graphs: AOTGraphs, gm: GraphModule, inputs: Sequence[Tensor], binding: SizeBinding
) -> tuple | None:
    """The forward's outputs' layouts in eager, where it may lay one out other than row-major
    ([Note: output layouts])."""
    num_outputs = graphs.spec.num_outputs if graphs.training else None
    if not may_reorder(graphs.forward, inputs, num_outputs):
        return None
    static = graphs if binding.count == 0 else aot_trace(gm, inputs, log=False)
    return eager_layouts(static.forward, inputs, num_outputs)  # holds at other sizes


def compile_graph(gm: GraphModule, backend: Backend | None = None) -> CompiledGraph:
    """One graph AOT autograd traced (inference, forward or backward), compiled at its
    placeholders' sizes: the passes after `aot_trace`, for a graph at hand (its steps and its
    kernels' IR there to read)."""
    backend = backend or default_backend("cpu")
    binding = SizeBinding.static(fake_inputs(gm))
    return compile_lowered(gm, lower(gm, backend), binding, backend)


def cached_compile(
    gm: GraphModule, backend: Backend, binding: SizeBinding | None = None
) -> CompiledGraph:
    """`compile_graph` for the driver: loaded from the disk if an earlier process compiled
    this graph ([Note: the compiled-graph cache] in graph_cache.py), else compiled and kept.
    It lowers a copy: lowering rewrites the graph it is given (ir/segments.py,
    transpose_products), and `gm` must stay as traced, so that what is made of it later (a
    backward without some tangents) is the same whether it was loaded or compiled."""
    binding = binding or SizeBinding.static(fake_inputs(gm))
    key = graph_cache.key(gm, backend)
    compiled = None if key is None else graph_cache.load(key, gm, binding, backend)
    if compiled is None:
        work = GraphModule(gm, copy.deepcopy(gm.graph))
        work.meta = dict(gm.meta)
        compiled = compile_lowered(work, lower(work, backend), binding, backend)
        if key is not None:
            graph_cache.store(key, compiled, work, backend)
    return compiled


def lower(
    gm: GraphModule, backend: Backend, symbolizer: Symbolizer | None = None
) -> list[LoweredStep]:
    """Split `gm` into steps and lower and schedule each segment; with a `symbolizer`, read
    the sizes back as symbols ([Note: symbolic sizes])."""
    # NOTE: imported here, at the first graph lowered: a process whose graphs all come from the
    # disk never lowers one ([Note: the compiled-graph cache] in graph_cache.py; ~3 ms)
    from ir.lowering import lower_graph
    from ir.scheduler import schedule

    start = time.perf_counter()
    name = gm.meta.get("name", "graph")
    steps: list[LoweredStep] = []
    for step in split_graph(gm.graph, backend.dtypes):
        if isinstance(step, ExternStep):
            if symbolizer is not None:
                raise _NotSymbolic(step.reason)
            steps.append(step)
            continue
        program = lower_graph(step.graph)  # fx graph -> buffers of define-by-run loop bodies
        kernels = schedule(program)  # buffers -> fused kernels (and which buffers are stored)
        if symbolizer is not None:
            program = symbolizer.program(program)
            kernels = [symbolizer.kernel(k) for k in kernels]
        steps.append((step, program, kernels))
    if _logging.enabled("loop_ir") and symbolizer is None:
        _logging.artifact(
            "loop_ir",
            f"{name}: {_count(steps)} fused kernel(s)",
            _format(steps),
            time.perf_counter() - start,
        )
    return steps


def compile_lowered(
    gm: GraphModule, steps: list[LoweredStep], binding: SizeBinding, backend: Backend
) -> CompiledGraph:
    """Compile each fused kernel with the backend; the wrapper runs them."""
    start = time.perf_counter()
    sizes = binding.names
    with_dtypes = []
    for step in steps:
        if not isinstance(step, ExternStep):
            _, program, kernels = step
            dtypes = program.dtypes()
            with_dtypes += [(kernel, dtypes) for kernel in kernels]
    # Every kernel of the graph at once: a backend may compile them together (one LLVM module).
    made = iter(backend.compile_kernels(with_dtypes, sizes))
    compiled: list[KernelStep | ExternStep] = []
    for step in steps:
        if isinstance(step, ExternStep):
            compiled.append(step)
            continue
        segment, program, kernels = step
        compiled.append(
            KernelStep(
                segment,
                program,
                [next(made) for _ in kernels],
                [(k.reads, k.writes) for k in kernels],
            )
        )
    result = CompiledGraph(gm, compiled, binding, backend.device)
    if _logging.enabled("kernels"):
        taking = f" taking sizes {', '.join(sizes)}" if sizes else ""
        title = (
            f"{gm.meta.get('name', 'graph')}: {len(result.kernels)} {backend.name} "
            f"kernel(s){taking}"
        )
        source = "\n\n".join([k.source.rstrip() for k in result.kernels] + [result.source])
        _logging.artifact("kernels", title, source, time.perf_counter() - start)
    if _logging.enabled("ptx"):  # the same kernels for the GPU, compiled only
        record_ptx(gm.meta.get("name", "graph"), with_dtypes, sizes, backend, result.kernels)
    return result


class _NotSymbolic(Exception):
    """This graph cannot take its sizes as arguments; the caller compiles per shape."""


def _trace_symbolic(
    gm: GraphModule, inputs: Sequence[Tensor], binding: SizeBinding, backend: Backend
) -> tuple[AOTGraphs, list[list[LoweredStep]]]:
    """AOT graphs and their lowered steps with sizes as symbols: traced and lowered twice,
    at two sets of sentinel sizes, and kept only if both read back the same."""
    from ir.symbolic import Symbolizer, sentinel_primes  # (as lower's imports)

    start = time.perf_counter()
    results = []
    for first_prime in (_FIRST, _SECOND):
        primes = sentinel_primes(binding.count, first_prime)
        fakes = [
            make_fake(
                TensorMeta(
                    tuple(
                        n if s is None else primes[s] for n, s in zip(x.shape, dims, strict=True)
                    ),
                    x.dtype,
                ),
                requires_grad=x.requires_grad,
            )
            for x, dims in zip(inputs, binding.symbols, strict=True)
        ]
        symbolizer = Symbolizer(primes)
        try:
            graphs = aot_trace(gm, fakes, log=False)
            lowered = [lower(g, backend, symbolizer) for g in graphs.all()]
        except MinitorchError as e:  # does not trace or lower at other sizes
            raise _NotSymbolic(str(e)) from e
        if graphs.aliases is not None:  # its views were recorded at the sentinel sizes
            raise _NotSymbolic("an output is a view, remade at the traced sizes")
        results.append((graphs, lowered, _text(graphs, lowered)))
    (graphs, lowered, text), (_, _, other) = results
    if text != other:
        raise _NotSymbolic("a size does not read back as a symbol")
    if _logging.enabled("loop_ir"):
        title = f"{gm.meta.get('name', 'graph')}: sizes as arguments"
        _logging.artifact("loop_ir", title, text, time.perf_counter() - start)
    return graphs, lowered


def _text(graphs: AOTGraphs, lowered: list[list[LoweredStep]]) -> str:
    """What must read back the same at both sentinel sizes: the steps, and the shapes of the
    constants the trace made (tril's mask is made at the traced sizes: a size baked in)."""
    constants = [
        f"{node.target}: {tuple(getattr(g, node.target).shape)}"
        for g in graphs.all()
        for node in g.graph.nodes
        if node.op == "get_attr"
    ]
    return "\n\n".join([repr(graphs.spec), *constants] + [_format(steps) for steps in lowered])


def _format(steps: list[LoweredStep]) -> str:
    if len(steps) == 1 and not isinstance(steps[0], ExternStep):
        _, program, kernels = steps[0]
        return program.format(kernels)
    parts = []
    for step in steps:
        if isinstance(step, ExternStep):
            parts.append(str(step))
        else:
            segment, program, kernels = step
            parts.append(f"{segment}\n{program.format(kernels)}")
    return "\n\n".join(parts)


def _count(steps: list[LoweredStep]) -> int:
    return sum(len(step[2]) for step in steps if not isinstance(step, ExternStep))


def _device(inputs: Sequence, backend: Backend | None = None) -> str:
    """The device the inputs are on, which compiled code runs on: one, and the backend's if
    one was named; else a CompileError, so that the graph runs eagerly, where eager's own
    rules decide (convert_frame records the reason)."""
    devices = sorted({x.device.type for x in inputs if isinstance(x, Tensor)})
    if len(devices) > 1:
        raise CompileError(
            f"inputs on more than one device ({', '.join(devices)}): a compiled graph runs on one"
        )
    device = devices[0] if devices else (backend.device if backend else "cpu")
    if backend is not None and backend.device != device:
        raise CompileError(
            f"the {backend.name!r} code generator compiles for tensors on "
            f"{backend.device!r}; these are on {device!r}"
        )
    return device


class _Bound:
    """A version's `bind`: which calls its `binding` serves (shapes.py, `Version`)."""

    binding: SizeBinding

    def bind(self, inputs: Sequence[Tensor]) -> dict[str, int] | None:
        return self.binding.bind(inputs)

    def bind_or_raise(self, inputs: Sequence[Tensor]) -> dict[str, int]:
        return self.binding.bind_or_raise(inputs)


@dataclass
class CompiledAOT(_Bound):
    """The compiled forward (and backward) of one graph, at the sizes its binding serves."""

    forward: CompiledGraph
    backward: CompiledGraph | None  # None: compiled for inference
    spec: object  # the JointSpec linking them (None for inference)
    binding: SizeBinding
    aliases: OutputAliases | None = None  # outputs remade as views ([Note: output aliasing])
    layouts: tuple | None = None  # the forward's outputs in eager's layout ([Note: output
    # layouts]); None: all row-major
    # missing tangents -> a backward without them (tracer/aot/partition.py, without_tangents)
    backward_without: Callable | None = None

    def __post_init__(self) -> None:
        # The common case, one call: inference at static sizes, outputs as the graph makes them.
        self._direct = (
            self.backward is None
            and self.binding.count == 0
            and self.aliases is None
            and self.layouts is None
        )

    def __call__(self, *inputs: Tensor) -> tuple:
        if self._direct:
            return self.forward.run(inputs, {})
        sizes = {} if self.binding.count == 0 else self.binding.bind_or_raise(inputs)
        return self.run(inputs, sizes)

    def run(self, inputs: Sequence[Tensor], sizes: dict[str, int]) -> tuple:
        """The forward now, and for training the backward later, with these sizes."""
        if self.backward is None:
            outputs = self._forward(inputs, sizes)
        else:
            outputs = CompiledFunction(
                lambda *a: self._forward(a, sizes),
                lambda *a: self.backward.run(a, sizes),
                self.spec,
                self.backward_without,
            )(*inputs)
        return outputs if self.aliases is None else self.aliases.remake(inputs, outputs)

    def _forward(self, inputs: Sequence[Tensor], sizes: dict[str, int]) -> tuple:
        outputs = self.forward.run(inputs, sizes)
        return outputs if self.layouts is None else relayout(outputs, self.layouts)

    @property
    def kernels(self) -> list:
        return self.forward.kernels + (self.backward.kernels if self.backward else [])


@dataclass
class ShapeSpecific(_Bound):
    """A callable compiled for the inputs' exact shapes (AOT autograd traced at them)."""

    fn: Callable
    binding: SizeBinding

    def __call__(self, *inputs: Tensor) -> tuple:
        return self.fn(*inputs)

    def run(self, inputs: Sequence[Tensor], sizes: dict[str, int]) -> tuple:
        return self.fn(*inputs)
