"""The `symbolic_sizes` extra: one compiled version for every size of a dynamic dim.

    binding = SizeBinding.symbolic(inputs, dynamic_dims=[{0}])   # x: (3, 4) -> s0 for dim 0
    generic = compile_symbolic(gm, inputs, binding, backend)     # or None: compile per shape
    generic(x7)          # a (7, 4) x7 runs the same kernels, with s0 = 7

The core (inductor.py) compiles a graph at static sizes, and `PerShape` (shapes.py) compiles
again for each new shape of a dynamic dim. With `config.symbolic_sizes` on, and a backend
whose kernels can take sizes as arguments, `InductorCompiler.version` asks this first: the
same passes, AOT autograd traced at sentinel sizes and the loop IR read back as size symbols
([Note: symbolic sizes] in ir/symbolic.py), between `schedule` and `compile_kernels`. The
answer is None, and the core compiles per shape, where the sizes do not read back: a graph
with extern steps (they run eager code with traced sizes), an output that is a view (its view
was recorded at the sentinel sizes), a size baked into a constant.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codegen.backend import Backend
from ir.segments import ExternStep
from ir.symbolic import Symbolizer, sentinel_primes
from minitorch import _logging
from minitorch.compile.inductor import compile_steps, format_steps, lower, rewrite
from minitorch.compile.layouts import output_orders, relayout
from minitorch.compile.shapes import Bound, SizeBinding
from minitorch.compile.wrapper import CompiledGraph
from minitorch.errors import MinitorchError
from minitorch.fake import make_fake
from minitorch.ops.registry import TensorMeta
from minitorch.tensor import Tensor
from tracer.aot import AOTGraphs, CompiledFunction, aot_trace, fake_inputs
from tracer.aot.joint import JointSpec
from tracer.aot.partition import without_tangents
from tracer.fx import GraphModule

if TYPE_CHECKING:
    from minitorch.compile.inductor import LoweredStep

# Two disjoint sets of sentinel sizes: a program that reads back the same from both holds no
# size we failed to see ([Note: symbolic sizes] in ir/symbolic.py).
_FIRST, _SECOND = 10_000, 20_000


def compile_symbolic(
    gm: GraphModule, inputs: Sequence[Tensor], binding: SizeBinding, backend: Backend
) -> SizeGeneric | None:
    """`gm` compiled once for every call `binding` accepts, or None where its sizes cannot
    be arguments (then the caller compiles per shape)."""
    try:
        traced, lowered = _trace_symbolic(gm, inputs, binding, backend)
    except _NotSymbolic:
        return None
    graphs = traced[0][0]
    orders = output_orders(graphs, inputs, static=lambda: aot_trace(gm, inputs, log=False))
    compiled = [
        compile_steps(graph, steps, binding, backend)
        for graph, steps in zip(graphs.all(), lowered, strict=True)
    ]
    if not graphs.training:
        return SizeGeneric(compiled[0], None, None, binding, orders)
    without = _backward_variants(traced, binding, backend)
    return SizeGeneric(compiled[0], compiled[1], graphs.spec, binding, orders, without)


@dataclass
class SizeGeneric(Bound):
    """The compiled forward (and backward) of one graph, at every size its binding serves."""

    forward: CompiledGraph
    backward: CompiledGraph | None  # None: compiled for inference
    spec: JointSpec | None  # how the training graphs' values line up
    binding: SizeBinding
    orders: tuple | None = None  # the forward's outputs in eager's layout (layouts.py)
    # missing tangents -> the backward without them, or None (tracer/aot, without_tangents)
    backward_without: Callable[[frozenset[int]], CompiledGraph | None] | None = None

    def __call__(self, *inputs: Tensor) -> tuple:
        return self.run(inputs, self.binding.bind_or_raise(inputs))

    def run(self, inputs: Sequence[Tensor], sizes: dict[str, int]) -> tuple:
        """The forward now, and for training the backward later, with these sizes."""
        if self.backward is None:
            return self._forward(inputs, sizes)

        def without(missing: frozenset[int]) -> Callable | None:
            pruned = self.backward_without(missing)
            return None if pruned is None else lambda *a: pruned.run(a, sizes)

        return CompiledFunction(
            lambda *a: self._forward(a, sizes),
            lambda *a: self.backward.run(a, sizes),
            self.spec,
            without,
        )(*inputs)

    def _forward(self, inputs: Sequence[Tensor], sizes: dict[str, int]) -> tuple:
        outputs = self.forward.run(inputs, sizes)
        return outputs if self.orders is None else relayout(outputs, self.orders)

    @property
    def kernels(self) -> list:
        return self.forward.kernels + (self.backward.kernels if self.backward else [])


def _backward_variants(
    traced: list[tuple[AOTGraphs, tuple[int, ...]]], binding: SizeBinding, backend: Backend
) -> Callable[[frozenset[int]], CompiledGraph | None]:
    """missing tangents -> the backward without them, with sizes as symbols too: pruned
    (tracer/aot, without_tangents: zeros instead would make 0 * inf = NaN where eager computes
    nothing) at both sentinel sizes, and compiled the first time each set is missing. None
    where it cannot be pruned, as at static sizes (then the tangents are zeros)."""
    made: dict[frozenset[int], CompiledGraph | None] = {}

    def without(missing: frozenset[int]) -> CompiledGraph | None:
        if missing not in made:
            made[missing] = _pruned(traced, missing, binding, backend)
        return made[missing]

    return without


def _pruned(
    traced: list[tuple[AOTGraphs, tuple[int, ...]]],
    missing: frozenset[int],
    binding: SizeBinding,
    backend: Backend,
) -> CompiledGraph | None:
    lowered = []
    for graphs, primes in traced:
        num_saved = len(fake_inputs(graphs.backward)) - len(graphs.spec.differentiable_outputs)
        pruned = without_tangents(graphs.backward, missing, num_saved)
        if pruned is None:
            return None
        pruned = rewrite(pruned)
        try:
            lowered.append((pruned, _symbolic(lower(pruned, backend), Symbolizer(primes))))
        except (MinitorchError, _NotSymbolic):
            return None
    (gm, steps), (_, other) = lowered
    if format_steps(steps) != format_steps(other):
        return None
    return compile_steps(gm, steps, binding, backend)


class _NotSymbolic(Exception):
    """This graph cannot take its sizes as arguments; the caller compiles per shape."""


def _trace_symbolic(
    gm: GraphModule, inputs: Sequence[Tensor], binding: SizeBinding, backend: Backend
) -> tuple[list[tuple[AOTGraphs, tuple[int, ...]]], list[list[LoweredStep]]]:
    """AOT graphs and their lowered steps with sizes as symbols: traced and lowered twice,
    at two sets of sentinel sizes, and kept only if both read back the same. Returns both
    traces (their graphs and sentinel sizes, the first one's compiled) and the first's steps."""
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
        try:
            graphs = aot_trace(gm, fakes, log=False)
            if graphs.aliases is not None:  # its views were recorded at the sentinel sizes
                raise _NotSymbolic("an output is a view, remade at the traced sizes")
            graphs = _rewritten(graphs)
            lowered = [_symbolic(lower(g, backend), Symbolizer(primes)) for g in graphs.all()]
        except MinitorchError as e:  # does not trace or lower at other sizes
            raise _NotSymbolic(str(e)) from e
        results.append((graphs, primes, lowered, _text(graphs, lowered)))
    (graphs, primes, lowered, text), (other_graphs, other_primes, _, other) = results
    if text != other:
        raise _NotSymbolic("a size does not read back as a symbol")
    if _logging.enabled("loop_ir"):
        title = f"{gm.meta.get('name', 'graph')}: sizes as arguments"
        _logging.artifact("loop_ir", title, text, time.perf_counter() - start)
    return [(graphs, primes), (other_graphs, other_primes)], lowered


def _rewritten(graphs: AOTGraphs) -> AOTGraphs:
    """`graphs` with each graph as the core's `rewrite` leaves it (the steps read its nodes)."""
    backward = None if graphs.backward is None else rewrite(graphs.backward)
    return AOTGraphs(rewrite(graphs.forward), backward, graphs.spec, graphs.joint, graphs.aliases)


def _symbolic(steps: list[LoweredStep], symbolizer: Symbolizer) -> list[LoweredStep]:
    """The lowered steps with their sizes read back as symbols."""
    if any(isinstance(step, ExternStep) for step in steps):
        raise _NotSymbolic("an extern step runs eager code at the traced sizes")
    return [
        (segment, symbolizer.program(program), [symbolizer.kernel(k) for k in kernels])
        for segment, program, kernels in steps
    ]


def _text(graphs: AOTGraphs, lowered: list[list[LoweredStep]]) -> str:
    """What must read back the same at both sentinel sizes: the steps, and the shapes of the
    constants the trace made (tril's mask is made at the traced sizes: a size baked in)."""
    constants = [
        f"{node.target}: {tuple(getattr(g, node.target).shape)}"
        for g in graphs.all()
        for node in g.graph.nodes
        if node.op == "get_attr"
    ]
    return "\n\n".join([repr(graphs.spec), *constants] + [format_steps(s) for s in lowered])
