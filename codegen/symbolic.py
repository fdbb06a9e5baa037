"""Compile a graph once for every size of its dynamic dims: kernels take the sizes as arguments.

    generic = compile_dynamic(gm, [x], dynamic_dims=[{0}])   # x: (3, 4); dim 0 is dynamic
    generic.bind([x7])            # {'s0': 7} for a (7, 4) x7; None for a (7, 5) one
    generic(x7)                   # the same machine code, run with s0 = 7

The graph is traced (make_fx), lowered and scheduled at sentinel sizes, twice, and the
symbolic programs read back from both must agree ([Note: symbolic sizes] in ir/symbolic.py);
then each kernel is compiled once, taking s0, s1, ... as i64 arguments, and this wrapper binds
them from the actual input shapes, checks the static dims, and allocates outputs at the sizes
their layouts compute. `compile_dynamic` returns None where that does not apply, and the caller
compiles once per shape instead (tracer/backends.py, `per_shape`): graphs with fallback ops
(they run eager code with the traced sizes as arguments), and graphs whose sizes do not read
back. Inputs that require grad get AOT autograd's forward and backward graphs, both traced at
the sentinel sizes (the backward's `expand` and `sum_to` sizes read back like any other) and
both compiled with size arguments (`SymbolicTraining`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from codegen import allocator
from codegen.backend import Backend
from codegen.fallback import has_fallbacks
from codegen.inductor import _record, _tensor_outputs_only, default_backend
from ir.indexing import Expr
from ir.lowering import lower_graph
from ir.nodes import LoweredProgram
from ir.scheduler import FusedKernel, schedule
from ir.symbolic import Symbolizer, sentinel_primes
from minitorch import _logging
from minitorch.autograd.grad_mode import is_grad_enabled
from minitorch.errors import CompileError, MinitorchError
from minitorch.fake import make_fake
from minitorch.ops.registry import TensorMeta
from minitorch.tensor import Tensor
from tracer.aot.aot_autograd import CompiledFunction, _as_tuple
from tracer.aot.joint import JointSpec, trace_joint
from tracer.aot.make_fx import make_fx
from tracer.aot.partition import partition_joint

# Two disjoint sets of sentinel sizes: a result that reads back the same from both holds no
# size we failed to see ([Note: symbolic sizes]).
_FIRST, _SECOND = 10_000, 20_000

# For each input, for each dim: the index of its size symbol, or None for a static dim.
Binding = list[tuple[int | None, ...]]


def compile_dynamic(
    gm, example_inputs: Sequence[Tensor], dynamic_dims: Sequence[set[int]] | None = None,
    backend: Backend | None = None,
) -> SymbolicGraph | None:
    """`gm` compiled once for any sizes of its dynamic dims (each input's dims in
    `dynamic_dims`; every dim of size >= 2 when None), or None where that is not possible."""
    training = is_grad_enabled() and any(x.requires_grad for x in example_inputs)
    binding, count = _bind_symbols(example_inputs, dynamic_dims)
    if count == 0:
        return None
    start = time.perf_counter()
    try:
        first = _symbolic_graphs(gm, example_inputs, binding, training,
                                 sentinel_primes(count, _FIRST))
        second = _symbolic_graphs(gm, example_inputs, binding, training,
                                  sentinel_primes(count, _SECOND))
    except MinitorchError:
        return None  # does not trace or lower at other sizes: the caller compiles per shape
    if first is None or second is None or _text(first) != _text(second):
        return None
    name = getattr(gm, "meta", {}).get("name", "graph")
    kernels = sum(len(part[1]) for part in first[1:])
    _record("loop_ir", f"{name}: {kernels} fused kernel(s), sizes as arguments", _text(first),
            start)

    backend = backend or default_backend()
    symbols = tuple(f"s{k}" for k in range(count))
    shapes = [tuple(x.shape) for x in example_inputs]
    spec, *parts = first
    graphs = [_compile(part, symbols, binding, shapes, backend) for part in parts]
    return graphs[0] if spec is None else SymbolicTraining(*graphs, spec)


def _compile(part, symbols, binding, shapes, backend) -> SymbolicGraph:
    program, kernels, constant_outputs, _ = part
    start = time.perf_counter()
    compiled = [backend.compile_kernel(k, program.dtypes(), symbols) for k in kernels]
    if _logging.enabled("llvm_ir"):
        source = "\n\n".join(k.source.rstrip() for k in compiled)
        title = f"{len(compiled)} {backend.name} kernel(s) taking sizes {', '.join(symbols)}"
        _logging.artifact("llvm_ir", title, source, time.perf_counter() - start)
    return SymbolicGraph(program, kernels, compiled, constant_outputs, binding, shapes)


def _bind_symbols(
    inputs: Sequence[Tensor], dynamic_dims: Sequence[set[int]] | None
) -> tuple[Binding, int]:
    """A symbol per distinct size among the dynamic dims (equal sizes share one, so that the
    trace still broadcasts them together); sizes 0 and 1 stay static."""
    symbol_of: dict[int, int] = {}
    binding: Binding = []
    for k, x in enumerate(inputs):
        dynamic = set(range(x.ndim)) if dynamic_dims is None else set(dynamic_dims[k])
        binding.append(tuple(
            symbol_of.setdefault(n, len(symbol_of)) if d in dynamic and n >= 2 else None
            for d, n in enumerate(x.shape)
        ))
    return binding, len(symbol_of)


def _symbolic_graphs(gm, inputs: Sequence[Tensor], binding: Binding, training: bool,
                     primes: Sequence[int]) -> tuple | None:
    """(None, inference part) or (joint spec, forward part, backward part) of `gm` traced at
    `primes` (see _symbolic_part); None when some graph has fallback ops."""
    fakes = [
        make_fake(TensorMeta(tuple(n if s is None else primes[s]
                                   for n, s in zip(x.shape, dims, strict=True)), x.dtype),
                  requires_grad=x.requires_grad)
        for x, dims in zip(inputs, binding, strict=True)
    ]
    symbolizer = Symbolizer(primes)
    if not training:
        traced = make_fx(_as_tuple(gm), [f"arg{i}_1" for i in range(len(fakes))])(*fakes)
        part = _symbolic_part(traced, symbolizer)
        return None if part is None else (None, part)
    joint, spec = trace_joint(_as_tuple(gm), fakes)
    parts = partition_joint(joint, spec)
    forward = _symbolic_part(parts.forward, symbolizer)
    backward = _symbolic_part(parts.backward, symbolizer)
    return None if forward is None or backward is None else (spec, forward, backward)


def _symbolic_part(traced, symbolizer: Symbolizer) -> tuple | None:
    """(program, kernels, constant outputs, text) of one traced graph, lowered and scheduled
    at sentinel sizes and read back as symbols; None for a graph with fallback ops."""
    if has_fallbacks(traced.graph):
        return None
    graph, constant_outputs = _tensor_outputs_only(traced.graph)
    program = lower_graph(graph)
    kernels = schedule(program)
    program = symbolizer.program(program)
    kernels = [symbolizer.kernel(k) for k in kernels]
    text = program.format(kernels) + f"\nconstant outputs: {constant_outputs}"
    return program, kernels, constant_outputs, text


def _text(graphs: tuple) -> str:
    spec, *parts = graphs
    return "\n\n".join([repr(spec)] + [part[3] for part in parts])


class SymbolicGraph:
    """Runs kernels compiled with size arguments: binds the sizes, allocates, launches."""

    def __init__(
        self,
        program: LoweredProgram,
        kernels: list[FusedKernel],
        compiled: list,
        constant_outputs: dict[int, object],
        binding: Binding,
        shapes: list[tuple[int, ...]],
    ) -> None:
        self.program = program  # symbolic: layouts and ranges mention s0, s1, ...
        self.kernels = compiled
        self.writes = [name for k in kernels for name in k.writes]
        self.constant_outputs = constant_outputs
        self.num_outputs = len(program.outputs) + len(constant_outputs)
        self.binding = binding
        self.shapes = shapes  # the example's shapes: what a static dim must equal

    def bind(self, inputs: Sequence[Tensor]) -> dict[str, int] | None:
        """The value of each size symbol for these inputs; None if they do not fit (a static
        dim changed, two dims sharing a symbol differ, or a dynamic size is 0 or 1)."""
        if len(inputs) != len(self.binding):
            return None
        sizes: dict[str, int] = {}
        for x, dims, example in zip(inputs, self.binding, self.shapes, strict=True):
            if len(x.shape) != len(dims):
                return None
            for n, symbol, m in zip(x.shape, dims, example, strict=True):
                if symbol is None:
                    if n != m:
                        return None
                elif n < 2 or sizes.setdefault(f"s{symbol}", n) != n:
                    return None
        return sizes

    def __call__(self, *inputs: Tensor) -> tuple:
        return self.run(inputs, _bound(self, inputs))

    def run(self, inputs: Sequence[Tensor], sizes: dict[str, int]) -> tuple:
        """Run with the size symbols bound to `sizes`; each input must have the shape and dtype
        its layout gives at those sizes."""
        memory: dict[str, np.ndarray] = {}
        for buffer, x in zip(self.program.inputs, inputs, strict=True):
            layout = buffer.layout
            if x._data.dtype != layout.dtype.np or tuple(x.shape) != _shape(layout.size, sizes):
                raise CompileError(
                    f"compiled kernel input {buffer.name}: expected {layout.dtype.name}"
                    f"{list(_shape(layout.size, sizes))}, got {x._data.dtype}{list(x.shape)}"
                )
            memory[buffer.name] = np.ascontiguousarray(x._data)  # compiled for row-major
        for name in self.writes:
            layout = self.program.buffer(name).layout
            memory[name] = allocator.empty(_shape(layout.size, sizes), layout.dtype.np)
        for kernel in self.kernels:
            kernel(memory, sizes)
        tensors = iter(Tensor._from_array(memory[name]) for name in self.program.outputs)
        return tuple(
            self.constant_outputs[i] if i in self.constant_outputs else next(tensors)
            for i in range(self.num_outputs)
        )


class SymbolicTraining:
    """AOT autograd's forward and backward, both compiled with size arguments: the forward
    binds the sizes from the inputs, and its backward runs with the same sizes."""

    def __init__(self, forward: SymbolicGraph, backward: SymbolicGraph, spec: JointSpec) -> None:
        self.forward = forward
        self.backward = backward
        self.spec = spec

    def bind(self, inputs: Sequence[Tensor]) -> dict[str, int] | None:
        return self.forward.bind(inputs)

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        return self.forward.shapes

    def __call__(self, *inputs: Tensor) -> tuple:
        return self.run(inputs, _bound(self, inputs))

    def run(self, inputs: Sequence[Tensor], sizes: dict[str, int]) -> tuple:
        """Forward now, and the backward later, both with the size symbols bound to `sizes`."""
        function = CompiledFunction(lambda *a: self.forward.run(a, sizes),
                                    lambda *a: self.backward.run(a, sizes), self.spec)
        return function(*inputs)


def _bound(generic: SymbolicGraph | SymbolicTraining, inputs: Sequence[Tensor]) -> dict:
    """generic.bind(inputs), or a CompileError naming the shapes that do not fit."""
    sizes = generic.bind(inputs)
    if sizes is None:
        shapes = [tuple(x.shape) for x in inputs]
        raise CompileError(f"compiled graph for shapes like {generic.shapes} got {shapes}")
    return sizes


def _shape(size: Sequence[int | Expr], sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(n.evaluate(sizes) if isinstance(n, Expr) else n for n in size)
