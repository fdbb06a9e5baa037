"""Inductor in miniature: the driver from a captured graph to compiled kernels.

The passes, in order: the course's table of contents for tracer/aot, ir and codegen. They are
the four functions under "the core", read top to bottom (`compile_fx` is the list):

    aot_trace       tracer/aot        the forward (and backward) graph, at the example's sizes
    rewrite         ir/segments.py    graph-level rewrites (a transposed product), new nodes
    split_graph     ir/segments.py    compiled segments, and extern steps for ops that do not
                                      lower ([Note: extern kernels])
    lower_graph     ir/lowering.py    each segment -> buffers of loop-level IR
    schedule        ir/scheduler.py   buffers -> fused kernels; decides what is stored (and,
                                      under MINITORCH_CHECK=1, verifies them)
    compile_kernels codegen/          the graph's fused kernels, by the chosen Backend (the LLVM
                                      one compiles them as one module)
    CompiledGraph   wrapper.py        the wrapper: allocate, run kernels and extern ops in order,
                                      as generated Python (output_code.py)
    link            tracer/aot        the backward runs when autograd reaches the outputs; views
                                      among the outputs are remade ([Note: output aliasing])

[Note: the driver's extras]
The core compiles a graph at static sizes. Three extras wrap it, each behind its switch in
minitorch.config ([Note: the core and its extras]):
- `symbolic_sizes` (symbolic_sizes.py): one version for every size of a dynamic dim. Off, or
  where a graph's sizes do not read back, `PerShape` (shapes.py) compiles one static version
  per shape: slower to warm up, the same values.
- `graph_cache` (graph_cache.py): `compile_graph` loaded whole from the disk when an earlier
  process compiled the same graph. Off: nothing is read or written.
- `ptx` (a logging stage, ptx.py): each graph's kernels also compiled for the GPU, to read.
Two things look like variants and are not, because compiled must equal eager (law 1): the
outputs' memory layout (layouts.py: a kernel writes row-major, eager may not, and a later
`flatten` is a view of one and a copy of the other) and the backward without some tangents
(tracer/aot/partition.py, `without_tangents`: zeros for a missing tangent make 0 * inf = NaN
where eager computes nothing). Both are in the core's path, each one line of `compile_fx`.

`InductorCompiler` is the GraphCompiler that capture hands each graph to for
`minitorch.compile(f, backend="inductor")` (or a code generator's own name, "llvm", "cuda",
"interpreter", "numpy"); "aot_eager" stops after the first pass and runs the graphs' Python
code. "inductor" picks the code generator by the inputs' device: LLVM for "cpu", the CUDA
backend for "cuda" (whose wrapper allocates and launches on the GPU); inputs on two devices
run eagerly (`_device`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from codegen.backend import Backend
from codegen.registry import default_backend
from ir.segments import ExternStep, split_graph, transpose_products
from minitorch import _logging, config
from minitorch.compile import graph_cache
from minitorch.compile.layouts import in_eager_layouts
from minitorch.compile.ptx import record_ptx
from minitorch.compile.shapes import PerShape, ShapeSpecific, SizeBinding, Version
from minitorch.compile.wrapper import CompiledGraph, KernelStep
from minitorch.errors import CompileError
from minitorch.tensor import Tensor
from tracer.aot import CompiledFunction, aot_module, aot_trace, fake_inputs
from tracer.aot.aot_autograd import backward_variants
from tracer.dynamo.compiler import GraphCompiler, eager
from tracer.fx import GraphModule
from tracer.fx.passes.fuse_attention import fuse_attention

if TYPE_CHECKING:  # types only: the lowering is imported when a graph is first lowered
    from ir.nodes import LoweredProgram
    from ir.scheduler import FusedKernel
    from ir.segments import Segment

    # One step of a lowered graph: a segment with its loop-IR program and fused kernels, or an
    # extern step.
    LoweredStep = tuple[Segment, LoweredProgram, list[FusedKernel]] | ExternStep


class AOTEagerCompiler(GraphCompiler):
    """AOT autograd, then each graph's own Python code: "aot_eager"."""

    name = "aot_eager"

    def compile(self, gm, example_inputs, dynamic_dims) -> Callable:
        """One version for static sizes; for dynamic dims, versions made as calls need them."""
        if not any(dynamic_dims):
            return self.compile_static(gm, list(example_inputs))
        return PerShape(lambda inputs: self.version(gm, inputs, dynamic_dims), list(example_inputs))

    def version(self, gm: GraphModule, inputs: list, dynamic_dims: Sequence[set[int]]) -> Version:
        """A compiled version for (at least) these inputs' shapes."""
        return ShapeSpecific(self.compile_static(gm, inputs), SizeBinding.static(inputs))

    def compile_static(self, gm: GraphModule, inputs: list) -> Callable:
        """`gm` compiled for these inputs' shapes."""
        return aot_module(gm, inputs, eager, eager)


class InductorCompiler(AOTEagerCompiler):
    """AOT autograd, then the loop-level IR and a code generator's kernels."""

    def __init__(self, backend: Backend | None = None, name: str = "inductor") -> None:
        self.backend = backend  # None: the default for the inputs' device
        self.name = name

    def version(self, gm: GraphModule, inputs: list, dynamic_dims: Sequence[set[int]]) -> Version:
        backend = self._backend(inputs)
        if backend.device == "cuda" and not config.cuda:  # an extra: off, eager's kernels run
            return AOTEagerCompiler.version(self, gm, inputs, dynamic_dims)
        if config.symbolic_sizes and any(dynamic_dims) and backend.symbolic_sizes:  # an extra
            # NOTE: imported here: it calls the core's passes below, and loads only when used
            from minitorch.compile.symbolic_sizes import compile_symbolic

            binding = SizeBinding.symbolic(inputs, dynamic_dims)
            generic = compile_symbolic(gm, inputs, binding, backend)
            if generic is not None:  # its binding, made from these inputs, fits them
                return generic
        return super().version(gm, inputs, dynamic_dims)

    def compile_static(self, gm: GraphModule, inputs: list) -> Callable:
        backend = self._backend(inputs)
        if backend.device == "cuda" and not config.cuda:
            return AOTEagerCompiler.compile_static(self, gm, inputs)
        return compile_fx(gm, inputs, backend)

    def _backend(self, inputs: list) -> Backend:
        """The code generator: the one named, or the default for the inputs' device."""
        device = _device(inputs, self.backend)  # a CompileError for inputs it cannot run
        return self.backend or default_backend(device)


# ---- the core: the passes, in order -----------------------------------------------------------


def compile_fx(gm: GraphModule, inputs: Sequence[Tensor], backend: Backend) -> Callable:
    """A captured graph through every pass, at the inputs' static sizes: returns what runs it
    (the user's outputs; for training, linked to a backward that autograd runs)."""
    graphs = aot_trace(gm, inputs)  # aot: the forward (and backward) graph (tracer/aot)
    compile = graph_cache.cached(compile_graph) if config.graph_cache else compile_graph
    forward = compile(graphs.forward, backend)  # rewrite ... wrap: compile_graph, below
    run = in_eager_layouts(lambda *args: forward.run(args, {}), graphs, inputs)  # layouts.py
    if graphs.training:  # link: autograd runs the backward (tracer/aot, CompiledFunction)
        backward = compile(graphs.backward, backend)
        pruned = backward_variants(graphs, lambda g, _: compile(g, backend))  # tangents missing
        run = CompiledFunction(run, lambda *args: backward.run(args, {}), graphs.spec, pruned)
    return run if graphs.aliases is None else graphs.aliases.around(run)  # outputs as views


def compile_graph(gm: GraphModule, backend: Backend | None = None) -> CompiledGraph:
    """One graph AOT autograd traced (inference, forward or backward), compiled at its
    placeholders' sizes (its steps and its kernels' IR there to read)."""
    backend = backend or default_backend("cpu")
    start = time.perf_counter()
    gm = rewrite(gm)  # rewrite: (A B)^T as B^T A^T, in new nodes (ir/segments.py)
    steps = lower(gm, backend)  # split, lower, schedule (and verify): below
    _log_loop_ir(gm, steps, start)
    return compile_steps(gm, steps, SizeBinding.static(fake_inputs(gm)), backend)


def lower(gm: GraphModule, backend: Backend) -> list[LoweredStep]:
    """Split `gm` into steps, and lower and schedule each segment. `gm` is not changed."""
    # NOTE: imported here, at the first graph lowered: a process whose graphs all come from the
    # disk never lowers one ([Note: the compiled-graph cache] in graph_cache.py; ~3 ms)
    from ir.lowering import lower_graph
    from ir.scheduler import schedule

    steps: list[LoweredStep] = []
    for step in split_graph(gm.graph, backend.dtypes):  # split: segments and extern steps
        if isinstance(step, ExternStep):
            step.kernel = backend.extern_kernel(step.node.target)  # None: the op's own runs
            steps.append(step)  # an op that does not lower: its eager kernel runs
            continue
        program = lower_graph(step.graph)  # lower: fx graph -> buffers of loop-IR bodies
        kernels = schedule(program, capabilities=backend.capabilities())  # schedule: fuse
        # verify: `schedule` checks the kernels it made when config.check is on (ir/verify.py)
        steps.append((step, program, kernels))
    return steps


def compile_steps(
    gm: GraphModule, steps: list[LoweredStep], binding: SizeBinding, backend: Backend
) -> CompiledGraph:
    """Compile every fused kernel with the backend; the wrapper runs them, and the extern
    steps, in order. `binding` names the sizes the kernels take (none for static sizes)."""
    start = time.perf_counter()
    with_dtypes = [
        (kernel, step[1].dtypes())
        for step in steps
        if not isinstance(step, ExternStep)
        for kernel in step[2]
    ]
    # compile: every kernel of the graph at once (a backend may make them one LLVM module)
    made = iter(backend.compile_kernels(with_dtypes, binding.names))
    compiled: list[KernelStep | ExternStep] = [
        step
        if isinstance(step, ExternStep)
        else KernelStep(step[0], step[1], [next(made) for _ in step[2]], _io(step[2]))
        for step in steps
    ]
    result = CompiledGraph(gm, compiled, binding, backend.device)  # wrap: the wrapper's code
    _log_kernels(gm, result, with_dtypes, binding, backend, start)
    return result


def rewrite(gm: GraphModule) -> GraphModule:
    """`gm`, or a new GraphModule where a graph-level rewrite fired ([Note: transposed
    products] in ir/segments.py): the rewrites build new nodes, and `gm` stays as traced, so
    that what is made of it later (a backward without some tangents, a cache key) is the
    same whether it was compiled or loaded."""
    graph = transpose_products(gm.graph)
    if config.fused_attention:  # an extra: attention as one op, one kernel (fuse_attention.py)
        graph = fuse_attention(graph)
    if graph is gm.graph:
        return gm
    rewritten = GraphModule(gm, graph)
    rewritten.meta = dict(gm.meta)
    return rewritten


def _io(kernels: list[FusedKernel]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    return [(kernel.reads, kernel.writes) for kernel in kernels]


# ---- what the walkthrough shows (MINITORCH_LOGS=loop_ir,kernels,ptx) ------------------------


def _log_loop_ir(gm: GraphModule, steps: list[LoweredStep], start: float) -> None:
    if _logging.enabled("loop_ir"):
        title = f"{gm.meta.get('name', 'graph')}: {_count(steps)} fused kernel(s)"
        _logging.artifact(
            "loop_ir", title, format_steps(steps), time.perf_counter() - start, obj=(gm, steps)
        )


def _log_kernels(
    gm: GraphModule,
    result: CompiledGraph,
    with_dtypes: list,
    binding: SizeBinding,
    backend: Backend,
    start: float,
) -> None:
    name, sizes = gm.meta.get("name", "graph"), binding.names
    if _logging.enabled("kernels"):
        taking = f" taking sizes {', '.join(sizes)}" if sizes else ""
        title = f"{name}: {len(result.kernels)} {backend.name} kernel(s){taking}"
        source = "\n\n".join([k.source.rstrip() for k in result.kernels] + [result.source])
        _logging.artifact("kernels", title, source, time.perf_counter() - start, obj=result)
    if _logging.enabled("ptx"):  # the same kernels for the GPU, compiled only
        record_ptx(name, with_dtypes, sizes, backend, result.kernels)


def format_steps(steps: list[LoweredStep]) -> str:
    """The lowered steps as text: each segment's buffers and fused kernels, each extern step."""
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
