"""`export`: a module's graph, weights and signature, captured once, ready to save and run.

    >>> program = export(nn.Linear(10, 5).eval(), (minitorch.randn(1, 10),))
    >>> print(program)
    ExportedProgram:
        class GraphModule(minitorch.nn.Module):
            def forward(self, input_1: "f32[1, 10]"):
                weight = self.weight
                permute = minitorch.ops.permute(weight, (1, 0));  weight = None
                mm = minitorch.ops.mm(input_1, permute);  input_1 = permute = None
                bias = self.bias
                add = minitorch.ops.add(mm, bias);  mm = bias = None
                return add
    Graph signature:
        input_1: user_input f32[1, 10]
        weight: parameter f32[5, 10]
        bias: parameter f32[5]
        -> add: user_output f32[1, 5]
    Output structure: *
    >>> program.module()(x)     # an nn.Module that runs the graph, checking x's shape and dtype

[Note: export is a strict trace]
Capture is minitorch.jit.trace (tracer/jit_trace.py, [Note: concrete tracing]) run under
no_grad, with one difference: where jit.trace warns that it froze a value read from a tensor
(`if x.sum() > 0`, `x.item()`), export refuses with a DataDependentError at that line, because
a program saved to run elsewhere must compute the same thing for every input it accepts. Shapes
are frozen too (`x.reshape(x.shape[0], -1)` becomes `reshape(x, (5, -1))`), so `module()`
checks every input's shape and dtype against the example's and refuses the others, instead of
computing something wrong. Parameters and buffers stay `get_attr` reads (PyTorch's export
lifts them into inputs; here the signature lists them instead, in the order the graph reads
them). The module is captured as it is: in training mode, BatchNorm's running-statistics update
is an in-place write that no graph records, and export says to call `.eval()` first.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minitorch.autograd import no_grad
from minitorch.dtype import DType
from minitorch.errors import (
    CompileError,
    DataDependentError,
    DTypeError,
    InvalidArgumentError,
    ShapeError,
    at_user_line,
)
from minitorch.jit import TracerWarning
from minitorch.nn.module import Module
from minitorch.ops.registry import TensorMeta
from minitorch.tensor import Tensor
from tracer.fx import Graph, GraphModule, Node

_SHORT = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64", "bool": "b8"}


@dataclass(frozen=True)
class InputSpec:
    """One value the graph reads: an argument, or a tensor the program holds."""

    kind: str  # 'user_input', 'parameter', 'buffer' or 'constant'
    name: str  # the node that reads it: a placeholder, or a get_attr
    target: str | None  # the tensor's dotted name (None for user inputs)
    shape: tuple[int, ...]
    dtype: DType

    def __str__(self) -> str:
        return f"{self.target or self.name}: {self.kind} {_describe(self.shape, self.dtype)}"


@dataclass(frozen=True)
class OutputSpec:
    """One leaf of what the program returns, in the order the output structure lists them."""

    kind: str  # 'user_output' (a tensor) or 'constant' (a Python value frozen at capture)
    name: str | None  # the node whose value is returned (None for a constant)
    shape: tuple[int, ...] | None
    dtype: DType | None

    def __str__(self) -> str:
        if self.kind == "constant":
            return "constant"
        return f"{self.name}: {self.kind} {_describe(self.shape, self.dtype)}"


@dataclass(frozen=True)
class GraphSignature:
    """What goes into and comes out of an exported graph."""

    input_specs: tuple[InputSpec, ...]
    output_specs: tuple[OutputSpec, ...]
    out_spec: str  # the result's structure, each leaf a '*': '*', '(*, *)', '{a: *, b: [*]}'


class ExportedProgram:
    """A captured graph with its tensors and signature; `module()` runs it, export.save keeps it."""

    def __init__(self, graph_module: GraphModule, graph_signature: GraphSignature) -> None:
        self.graph_module = graph_module
        self.graph_signature = graph_signature

    @property
    def graph(self) -> Graph:
        return self.graph_module.graph

    @property
    def state_dict(self) -> dict[str, Tensor]:
        """The parameters and buffers, by dotted name."""
        return {
            s.target: self._tensor(s.target)
            for s in self.graph_signature.input_specs
            if s.kind in ("parameter", "buffer")
        }

    @property
    def constants(self) -> dict[str, Tensor]:
        """Tensors made during capture without an op (frozen into the program)."""
        return {
            s.target: self._tensor(s.target)
            for s in self.graph_signature.input_specs
            if s.kind == "constant"
        }

    def module(self) -> ExportedModule:
        """A new nn.Module running a copy of the graph, on this program's own tensors."""
        tensors = {
            s.target: (s.kind, self._tensor(s.target))
            for s in self.graph_signature.input_specs
            if s.target is not None
        }
        user_inputs = [s for s in self.graph_signature.input_specs if s.kind == "user_input"]
        make = lambda root, graph: ExportedModule(root, graph, user_inputs)  # noqa: E731
        return assemble(copy_graph(self.graph), tensors, self.graph_module.training, make)

    def __call__(self, *args, **kwargs):
        raise InvalidArgumentError(
            at_user_line("an ExportedProgram is not called directly: run program.module()(*args)")
        )

    def __str__(self) -> str:
        readable = self.graph_module.print_readable(print_output=False)
        sig = self.graph_signature
        lines = [
            "ExportedProgram:",
            *("    " + line for line in readable.splitlines()),
            "Graph signature:",
            *(f"    {spec}" for spec in sig.input_specs),
            *(f"    -> {spec}" for spec in sig.output_specs),
            f"Output structure: {sig.out_spec}",
        ]
        return "\n".join(lines)

    def _tensor(self, target: str) -> Tensor:
        *path, leaf = target.split(".")
        owner = self.graph_module.get_submodule(".".join(path)) if path else self.graph_module
        return getattr(owner, leaf)


class ExportedModule(GraphModule):
    """The graph module `ExportedProgram.module()` returns: refuses inputs unlike the example's."""

    def __init__(self, root: dict[str, Tensor], graph: Graph, input_specs: list[InputSpec]) -> None:
        super().__init__(root, graph)
        object.__setattr__(self, "_input_specs", list(input_specs))

    def __call__(self, *args, **kwargs):
        check_inputs(self._input_specs, args, kwargs)
        return super().__call__(*args)


def export(
    mod: Module, args: tuple | Tensor, kwargs: dict | None = None, *, dynamic_shapes: Any = None
) -> ExportedProgram:
    """Capture `mod(*args)` as an ExportedProgram (see [Note: export is a strict trace])."""
    from tracer.jit_trace import trace

    if not isinstance(mod, Module):
        raise InvalidArgumentError(
            at_user_line(
                f"export: expected an nn.Module, got {type(mod).__name__} (wrap a function in a "
                "Module whose forward calls it)"
            )
        )
    if kwargs or dynamic_shapes is not None:
        raise InvalidArgumentError(
            at_user_line(
                "export: keyword inputs and dynamic_shapes are not supported; shapes are static "
                "and inputs are positional tensors"
            )
        )
    inputs = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    for i, value in enumerate(inputs):
        if not isinstance(value, Tensor):
            raise InvalidArgumentError(
                at_user_line(
                    f"export: example input {i} is a {type(value).__name__}; every input must be "
                    "a tensor (bind other arguments inside the module)"
                )
            )
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)  # a frozen value is an error here
        try:
            with no_grad():
                gm = trace(mod, inputs)
        except TracerWarning as w:
            raise DataDependentError(_data_dependent(str(w))) from None
        except CompileError as e:
            hint = (
                " (export captures the module as it is: call .eval() before export)"
                if mod.training and "in place" in str(e)
                else ""
            )
            raise CompileError(f"export: {str(e).removeprefix('jit.trace: ')}{hint}") from None
    with no_grad():
        outputs = gm(*inputs)
    return ExportedProgram(gm, _signature(gm, inputs, outputs))


# ---- pieces shared with loading -------------------------------------------------------------


def tensor_kinds(gm: GraphModule) -> dict[str, tuple[str, Any]]:
    """target -> ('parameter' | 'buffer' | 'constant', value) for each get_attr of the graph."""
    kinds: dict[str, tuple[str, Any]] = {}
    for node in gm.graph.find_nodes(op="get_attr"):
        *path, leaf = node.target.split(".")
        owner = gm.get_submodule(".".join(path)) if path else gm
        kind = (
            "parameter"
            if leaf in owner._parameters
            else "buffer"
            if leaf in owner._buffers
            else "constant"
        )
        kinds[node.target] = (kind, getattr(owner, leaf))
    return kinds


def assemble(
    graph: Graph,
    tensors: dict[str, tuple[str, Tensor]],
    training: bool,
    make: Callable[[dict, Graph], GraphModule] = GraphModule,
) -> GraphModule:
    """`make(root, graph)` (a GraphModule), holding each tensor as its kind says."""
    gm = make({name: t for name, (_, t) in tensors.items()}, graph)
    gm.train(training)
    # A dict root makes plain tensors plain attributes; give buffers their kind back.
    for name, (kind, tensor) in tensors.items():
        if kind == "buffer":
            *path, leaf = name.split(".")
            owner = gm.get_submodule(".".join(path)) if path else gm
            del owner.__dict__[leaf]
            owner.register_buffer(leaf, tensor)
    return gm


def copy_graph(graph: Graph) -> Graph:
    copy = Graph()
    made: dict[Node, Node] = {}
    for node in graph.nodes:
        made[node] = copy.node_copy(node, lambda n: made[n])
    return copy


def check_inputs(specs: list[InputSpec], args: tuple, kwargs: dict) -> None:
    """Refuse inputs that the program was not captured for, naming the first difference."""
    if kwargs or len(args) != len(specs):
        raise InvalidArgumentError(
            at_user_line(
                f"exported module: expected {len(specs)} positional tensor inputs "
                f"({', '.join(s.name for s in specs)}), got {len(args)}"
                + (f" and keywords {sorted(kwargs)}" if kwargs else "")
            )
        )
    for spec, value in zip(specs, args):
        if not isinstance(value, Tensor):
            raise InvalidArgumentError(
                at_user_line(
                    f"exported module: input '{spec.name}' must be a tensor, got "
                    f"{type(value).__name__}"
                )
            )
        if value.dtype is not spec.dtype:
            raise DTypeError(
                at_user_line(
                    f"exported module: input '{spec.name}' has dtype {value.dtype.name}, but the "
                    f"program was exported for {spec.dtype.name}"
                )
            )
        if tuple(value.shape) != spec.shape:
            raise ShapeError(
                at_user_line(
                    f"exported module: input '{spec.name}' has shape {tuple(value.shape)}, but the "
                    f"program was exported for {spec.shape}; shapes are frozen at export, so "
                    "export again with an example of this shape"
                )
            )


def set_input_meta(graph: Graph, specs: list[InputSpec]) -> None:
    """Placeholders carry their spec's shape and dtype (print_readable shows them)."""
    for node, spec in zip(graph.find_nodes(op="placeholder"), specs):
        node.meta["val"] = TensorMeta(spec.shape, spec.dtype)


def out_structure(value: Any) -> str:
    """'(*, [*])': a container's shape, each leaf a '*'."""
    if isinstance(value, tuple):
        inner = ", ".join(out_structure(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(out_structure(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {out_structure(v)}" for k, v in value.items()) + "}"
    return "*"


def leaves(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in leaves(v)]
    return [value]


def _signature(gm: GraphModule, inputs: tuple, outputs: Any) -> GraphSignature:
    specs = [
        InputSpec("user_input", node.name, None, tuple(x.shape), x.dtype)
        for node, x in zip(gm.graph.find_nodes(op="placeholder"), inputs)
    ]
    set_input_meta(gm.graph, specs)
    kinds = tensor_kinds(gm)
    for node in gm.graph.find_nodes(op="get_attr"):
        kind, tensor = kinds[node.target]
        specs.append(InputSpec(kind, node.name, node.target, tuple(tensor.shape), tensor.dtype))
    (result,) = gm.graph.find_nodes(op="output")[0].args
    outs = []
    for node, value in zip(leaves(result), leaves(outputs)):
        if isinstance(node, Node):
            outs.append(OutputSpec("user_output", node.name, tuple(value.shape), value.dtype))
        else:
            outs.append(OutputSpec("constant", None, None, None))
    return GraphSignature(tuple(specs), tuple(outs), out_structure(result))


def _data_dependent(warning: str) -> str:
    """The trace's warning about a frozen value, said as the reason export refuses."""
    found = re.search(r"to a Python ([\w ]+);.*\(at (.+)\)$", warning)
    what = (
        f"converts a tensor to a Python {found[1]} at {found[2]}"
        if found
        else f"reads a tensor's value in Python ({warning})"
    )
    return (
        f"export: the module {what}, so what it computes depends on the data, but an "
        "exported program holds one graph for every input; write a choice that depends "
        "on values with minitorch.where, or use minitorch.jit.trace to freeze the branch "
        "taken now"
    )


def _describe(shape: tuple[int, ...] | None, dtype: DType | None) -> str:
    return f"{_SHORT.get(dtype.name, dtype.name)}{list(shape)}"
