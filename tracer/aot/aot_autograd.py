"""AOT autograd as a backend: compile the forward and backward graphs ahead of time.

    graphs = aot_trace(gm, example_inputs)           # traces and partitions; compiles nothing
    aot = aot_autograd(fw_compiler, bw_compiler)     # a backend(gm, example_inputs)
    compiled = aot(gm, example_inputs)               # aot_trace, then compiles both graphs

    1. trace_joint      forward + backward through the dispatcher, as one graph (joint.py)
    2. partition_joint  forward graph and backward graph, with the values to save (partition.py)
    3. fw_compiler / bw_compiler turn each graph into a callable (eager code, or Inductor)
    4. at run time, the compiled forward's outputs get one autograd node whose backward runs
       the compiled backward graph, so `loss.backward()` works as in eager mode

When no input requires grad (or grad mode is off), only a forward graph is traced (make_fx).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from minitorch import _logging
from minitorch.autograd.grad_mode import _set as set_grad_mode
from minitorch.autograd.grad_mode import is_grad_enabled, no_grad, set_grad_enabled
from minitorch.autograd.graph import Node, backward_name, overwritten_message
from minitorch.factories import zeros
from minitorch.tensor import Tensor
from tracer.aot.aliasing import OutputAliases, find_output_aliases, saved_aliases
from tracer.aot.joint import JointSpec, trace_joint
from tracer.aot.make_fx import make_fx, run_noting_origins
from tracer.aot.partition import describe_saved, partition_joint, tangents_read, without_tangents
from tracer.fx import GraphModule, lint_after
from tracer.fx.passes.registry import graph_passes, run_graph_passes

Compiler = Callable[[GraphModule, list], Callable]


def aot_autograd(fw_compiler: Compiler, bw_compiler: Compiler | None = None) -> Callable:
    """A backend(gm, example_inputs) that runs AOT autograd, then hands each graph to the
    given compilers. The graphs are traced at the example's sizes: the result serves those."""
    bw_compiler = bw_compiler or fw_compiler

    def backend(gm: GraphModule, example_inputs: Sequence[Tensor]) -> Callable:
        return aot_module(gm, example_inputs, fw_compiler, bw_compiler)

    return backend


@dataclass
class AOTGraphs:
    """What AOT autograd traced from one function: its inference graph, or its training
    forward (which also returns what backward saves) and backward graphs."""

    forward: GraphModule
    backward: GraphModule | None = None  # None: an inference graph
    spec: JointSpec | None = None  # how the training graphs' values line up
    joint: GraphModule | None = None  # what was partitioned into the two (for the walkthrough)
    aliases: OutputAliases | None = None  # outputs remade as views after the forward runs

    @property
    def training(self) -> bool:
        return self.backward is not None

    def all(self) -> list[GraphModule]:
        """The graphs, forward first."""
        return [self.forward] if self.backward is None else [self.forward, self.backward]


def aot_trace(fn: Callable, example_inputs: Sequence[Tensor], log: bool = True) -> AOTGraphs:
    """The one entry to AOT autograd: trace `fn` (returning a tensor or a tuple of them) at
    `example_inputs` (real or fake tensors), for training when grad mode is on and an input
    requires grad, else for inference. Outputs that are views of inputs or of each other are
    left to `graphs.aliases` ([Note: output aliasing]). Compiles nothing; `log` reports the
    graphs to the walkthrough (off when tracing at sentinel sizes, [Note: symbolic sizes])."""
    name = getattr(fn, "meta", {}).get("name", "graph")
    if isinstance(fn, GraphModule) and graph_passes("captured"):  # [Note: where graph passes run]
        fn = run_graph_passes("captured", fn)
        if log:
            names = ", ".join(p.name for p in graph_passes("captured"))
            _record("graph", fn, None, f"{name}, after the graph passes: {names}")
    flat = _as_tuple(fn)
    graphs, seconds = _trace(flat, example_inputs, name)
    num_outputs = graphs.spec.num_outputs if graphs.training else None
    aliases = find_output_aliases(graphs.forward, num_outputs, flat.seen)
    if aliases is not None:  # trace again what the graph must compute: no views, their bases
        graphs, seconds = _trace(_as_tuple(aliases.computing(flat)), example_inputs, name)
        graphs.aliases = aliases
    for gm in _logged(graphs):  # joint, forward and backward: lint each (MINITORCH_CHECK=1)
        lint_after("AOT autograd", gm)
    if log:
        for stage, gm, took in zip(
            ("joint", "forward", "backward") if graphs.training else ("forward",),
            _logged(graphs),
            seconds,
        ):
            _record(stage, gm, took)
    return graphs


def _trace(
    flat: Callable, example_inputs: Sequence[Tensor], name: str
) -> tuple[AOTGraphs, list[float | None]]:
    """The graphs of `flat` and the seconds each took (see aot_trace), in the grad mode it is
    called in (a graph that ends inside a `no_grad` block, at a graph break, leaves the
    mode it set: not the tracing's to change)."""
    with set_grad_enabled(is_grad_enabled()):
        return _trace_graphs(flat, example_inputs, name)


def _trace_graphs(
    flat: Callable, example_inputs: Sequence[Tensor], name: str
) -> tuple[AOTGraphs, list[float | None]]:
    start = time.perf_counter()
    grad_on = is_grad_enabled() or turns_grad_on(flat)
    if not (grad_on and any(x.requires_grad for x in example_inputs)):
        inference = make_fx(flat, [f"arg{i}_1" for i in range(len(example_inputs))])(
            *example_inputs
        )
        inference.meta["name"] = f"{name}, inference"
        inference = run_graph_passes("forward", inference)
        return AOTGraphs(inference), [time.perf_counter() - start]
    joint, spec = trace_joint(flat, example_inputs)
    joint.meta["name"] = f"{name}, joint forward+backward"
    joint = run_graph_passes("joint", joint)
    traced = time.perf_counter()
    parts = partition_joint(joint, spec)
    parts.forward = run_graph_passes("forward", parts.forward)
    parts.backward = run_graph_passes("backward", parts.backward)
    grads_read, saved_read = tangents_read(parts.backward, parts.num_saved)
    spec = replace(
        spec,
        tangents_read=grads_read,
        saved_read_by=saved_read,
        saved_aliases=saved_aliases(parts.forward, spec.num_outputs),
        turns_grad_on=turns_grad_on(flat),
    )
    parts.forward.meta["name"] = f"{name}, forward ({describe_saved(joint, spec, parts)})"
    parts.backward.meta["name"] = f"{name}, backward"
    return (
        AOTGraphs(parts.forward, parts.backward, spec, joint),
        [traced - start, time.perf_counter() - traced, None],
    )


def turns_grad_on(fn: Callable) -> bool:
    """Does the graph enable grad somewhere (a `with enable_grad():` block that capture traced
    as a `_set(True)` node)? Then what it computes inside needs autograd even when it is
    called under no_grad, as in eager (the mode it is called in is one of its guards)."""
    while getattr(fn, "graph", None) is None and hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__  # _as_tuple's, and the aliases' wrapper
    graph = getattr(fn, "graph", None)
    return graph is not None and any(
        n.op == "call_function" and n.target is set_grad_mode and n.args[0] for n in graph.nodes
    )


def _logged(graphs: AOTGraphs) -> list[GraphModule]:
    return [graphs.forward] if not graphs.training else [graphs.joint, *graphs.all()]


def aot_module(
    gm: Callable, example_inputs: Sequence[Tensor], fw_compiler: Compiler, bw_compiler: Compiler
) -> Callable:
    """Trace `gm` with `aot_trace`, compile each graph, link them for autograd, and remake the
    outputs that are views ([Note: output aliasing])."""
    graphs = aot_trace(gm, example_inputs)
    compiled_fw = fw_compiler(graphs.forward, fake_inputs(graphs.forward))
    if not graphs.training:
        run = lambda *args: tuple(compiled_fw(*args))  # noqa: E731
    else:
        compiled_bw = bw_compiler(graphs.backward, fake_inputs(graphs.backward))
        run = CompiledFunction(
            compiled_fw, compiled_bw, graphs.spec, backward_variants(graphs, bw_compiler)
        )
    return run if graphs.aliases is None else graphs.aliases.around(run)


def backward_variants(
    graphs: AOTGraphs, bw_compiler: Compiler
) -> Callable[[frozenset[int]], Callable | None]:
    """missing tangents -> graphs.backward without them (see without_tangents), compiled by
    `bw_compiler` the first time each set is missing."""
    made: dict[frozenset[int], Callable | None] = {}
    num_saved = len(fake_inputs(graphs.backward)) - len(graphs.spec.differentiable_outputs)

    def without(missing: frozenset[int]) -> Callable | None:
        if missing not in made:
            pruned = without_tangents(graphs.backward, missing, num_saved)
            if pruned is not None:
                lint_after("AOT autograd (a backward without some tangents)", pruned)
            made[missing] = None if pruned is None else bw_compiler(pruned, fake_inputs(pruned))
        return made[missing]

    return without


def _as_tuple(fn: Callable) -> Callable:
    """`fn` returning a tuple; after a trace, `.seen` says of each output whether it was an
    input itself, and whether it required grad (see find_output_aliases)."""

    def flat(*args):
        out = run_noting_origins(fn, args)  # as fn(*args): [Note: origins of traced nodes]
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        flat.seen = [(any(o is a for a in args), o.requires_grad) for o in out]
        return out

    flat.seen = []
    flat.__wrapped__ = fn
    return flat


def fake_inputs(gm: GraphModule) -> list:
    """The graph's placeholders' fake values: what a graph compiler specialises on."""
    return [n.meta["val"] for n in gm.graph.nodes if n.op == "placeholder"]


def _record(stage: str, gm: GraphModule, seconds: float | None, title: str = "") -> None:
    if _logging.enabled(stage):
        text = gm.print_readable(print_output=False)
        _logging.artifact(stage, title or gm.meta["name"], text, seconds)


class CompiledFunction:
    """Runs the compiled forward and links its outputs to the compiled backward."""

    def __init__(
        self,
        compiled_fw: Callable,
        compiled_bw: Callable,
        spec: JointSpec,
        backward_without: Callable[[frozenset[int]], Callable | None] | None = None,
    ) -> None:
        self.compiled_fw = compiled_fw
        self.compiled_bw = compiled_bw
        self.spec = spec
        # (saved value, output sharing its memory), flattened once: most calls have none
        self._saved_aliases = [
            (j, i) for j, outputs in enumerate(spec.saved_aliases) for i in outputs
        ]
        # missing tangents -> a backward that skips what they would contribute (or None)
        self.backward_without = backward_without or (lambda missing: None)

    def __call__(self, *args: Tensor) -> tuple:
        with no_grad():
            results = tuple(self.compiled_fw(*args))
        outs, saved = results[: self.spec.num_outputs], results[self.spec.num_outputs :]
        for j, i in self._saved_aliases:  # a write into output i is one into saved value j
            saved[j]._version_counter = outs[i]._shared_version_counter()
        if is_grad_enabled() or self.spec.turns_grad_on:
            node = CompiledFunctionBackward(args, saved, self)
            node.attach(tuple(outs[i] for i in self.spec.differentiable_outputs))
            node.kept_outputs = [
                (outs[i], outs[i]._version, composite, tangents)
                for i, composite, tangents in self.spec.kept_outputs
            ]
        return outs


class CompiledFunctionBackward(Node):
    """The autograd node of a compiled forward: its apply runs the compiled backward graph."""

    def __init__(self, inputs: tuple, saved: tuple, fn: CompiledFunction) -> None:
        super().__init__(inputs, num_outputs=len(fn.spec.differentiable_outputs))
        self.saved = saved
        # A saved tensor the caller can reach (an input, an output, a view of one) may be
        # written in place before backward(): eager autograd raises then, and so do we.
        self.saved_versions = [x._version for x in saved]
        self.fn = fn
        self.output_dtypes: list = []
        # (output, its version, composite, tangents): outputs PyTorch's derivative would read
        self.kept_outputs: list = []

    def attach(self, outputs: tuple) -> None:
        super().attach(outputs)
        self.output_dtypes = [o.dtype for o in outputs]  # a missing tangent is zeros of these

    def apply(self, grads: tuple) -> tuple:
        from minitorch.errors import AutogradError

        if self.saved is None:
            raise AutogradError(
                "CompiledFunctionBackward: trying to backward through the graph "
                "a second time; pass retain_graph=True to the first backward()"
            )
        # [Note: outputs PyTorch saves]: checked when a gradient flows through their maker
        for out, version, composite, tangents in self.kept_outputs:
            if out._version != version and any(grads[t] is not None for t in tangents):
                raise AutogradError(
                    overwritten_message(out, f"output 0 of {backward_name(composite)}", version)
                )
        read_by = self.fn.spec.saved_read_by
        for i, (x, version) in enumerate(zip(self.saved, self.saved_versions)):
            if x._version != version and any(grads[t] is not None for t in read_by[i]):
                raise AutogradError(
                    overwritten_message(x, f"saved tensor {i} of {self.name()}", version)
                )
        tangents = [
            g if g is not None else zeros(shape, dtype=dtype)
            for g, shape, dtype in zip(grads, self.output_shapes, self.output_dtypes)
        ]
        missing = frozenset(k for k, g in enumerate(grads) if g is None)
        backward = (missing and self.fn.backward_without(missing)) or self.fn.compiled_bw
        grad_values = backward(*self.saved, *tangents)
        result: list = [None] * len(self.inputs)
        for i, g, read in zip(self.fn.spec.grad_inputs, grad_values, self.fn.spec.tangents_read):
            if any(grads[t] is not None for t in read):
                result[i] = g
        return tuple(result)

    def release(self) -> None:
        self.saved = None
        self.kept_outputs = ()


__all__ = [
    "AOTGraphs",
    "CompiledFunction",
    "aot_autograd",
    "aot_module",
    "aot_trace",
    "fake_inputs",
]
