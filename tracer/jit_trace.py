"""`jit.trace`: run a function once on real inputs and record every op it dispatches.

    >>> f_traced = minitorch.jit.trace(lambda x: (x + 1).sin(), minitorch.randn(3))
    >>> print(f_traced.code)
    def forward(self, x):
        add = minitorch.ops.add(x, 1);  x = None
        sin = minitorch.ops.sin(add);  add = None
        return sin

[Note: concrete tracing]
Symbolic tracing (tracer/fx) runs the user's Python on proxies, which cannot answer `x.sum() < 0`.
Concrete tracing runs it on the real example inputs, so every Python question has an answer,
and listens one level down, at the dispatcher: `TraceMode` sits on the mode stack
(minitorch/dispatch.py, [Note: dispatch modes]), lets the eager kernels compute each op's real
output, and adds one `call_function` node per op, remembered under id(output). Composites are
already decomposed there, so the graph holds `minitorch.ops.*` primitives only.

What the trace cannot see is frozen into it, exactly as in PyTorch's torch.jit.trace:
- Python control flow on tensor values: `if x.sum() < 0` takes one branch now, and the graph
  holds only that branch. Every tensor -> Python value conversion (bool, int, float, item,
  tolist, numpy) during the trace emits a `TracerWarning` naming the user's line.
- Python numbers read from tensors' shapes (`x.reshape(x.shape[0], -1)`) become constants.
- Tensors made inside the function without an op (factories, `from_numpy`) become constants,
  read by `get_attr` as `_tensor_constant0`, ... A module's parameters and buffers are also
  read by `get_attr`, under their qualified names (`0.weight`), and stay parameters of the
  result, so training or `load_state_dict` on it changes what it computes.
In-place ops are refused: a write changes a tensor behind its node (and its views' nodes).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import operator
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from minitorch.autograd import no_grad
from minitorch.dispatch import DispatchMode
from minitorch.errors import CompileError, at_user_line
from minitorch.jit import TracerWarning
from minitorch.nn.module import Module
from minitorch.tensor import Tensor
from tracer.fx import Graph, GraphModule, Node
from tracer.fx.node import map_aggregate


class TraceMode(DispatchMode):
    """Records every op into `graph` while the eager kernels compute the real outputs."""

    def __init__(self, graph: Graph, attr_names: dict[int, str]) -> None:
        self.graph = graph
        self.attr_names = attr_names  # id(parameter or buffer) -> its qualified name
        self.node_of: dict[int, Node] = {}  # id(real tensor) -> the node that computed it
        self._alive: list[Tensor] = []  # keeps traced tensors alive so their ids stay unique
        self.attrs: dict[str, Tensor] = {}  # get_attr target -> the tensor it reads
        self.constant_count = 0

    def track(self, tensor: Tensor, node: Node) -> None:
        self.node_of[id(tensor)] = node
        self._alive.append(tensor)

    def placeholder(self, name: str, tensor: Tensor) -> None:
        self.track(tensor, self.graph.placeholder(name))

    def to_node(self, value: Any) -> Any:
        """The node for a tensor (made on first sight for parameters and constants)."""
        if not isinstance(value, Tensor):
            return value
        node = self.node_of.get(id(value))
        if node is not None:
            return node
        name = self.attr_names.get(id(value))
        if name is None:  # a real tensor made without an op: freeze its value
            name = f"_tensor_constant{self.constant_count}"
            self.constant_count += 1
        self.attrs[name] = value
        node = self.graph.get_attr(name)
        self.track(value, node)
        return node

    def run(self, op, args: tuple, kwargs: dict, meta) -> Any:
        # This mode is popped while it runs, so calling the op here reaches the eager kernel
        # (or the next mode down). Autograd is recorded once, by the dispatch that called us.
        with no_grad():
            out = op(*args, **kwargs)
        node = self.graph.call_function(
            op, map_aggregate(args, self.to_node), map_aggregate(kwargs, self.to_node)
        )
        if type(meta) is not tuple:
            self.track(out, node)
            return out
        # Several outputs: one getitem node per output, as torch.fx does for tuples.
        for i, value in enumerate(out):
            self.track(value, self.graph.call_function(operator.getitem, (node, i)))
        return out

    def alias(self, out: Tensor, source: Tensor) -> None:
        """`out` holds the same values as `source` (detach): both read the same node."""
        node = self.node_of.get(id(source))
        if node is not None:
            self.track(out, node)

    def output(self, values: Any) -> None:
        self.graph.output(map_aggregate(values, self.to_node))


def trace(fn_or_module: Callable, example_inputs: Tensor | tuple) -> GraphModule:
    """Run `fn_or_module(*example_inputs)` once and return the ops it ran, as a GraphModule.

    >>> traced = trace(nn.Sequential(nn.Linear(4, 2), nn.ReLU()), minitorch.randn(3, 4))
    >>> traced(minitorch.randn(5, 4))   # the same ops on new data; `if`s stay as first taken
    """
    inputs = (
        tuple(example_inputs) if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    )
    fn_or_module = _eager_version(fn_or_module)
    module = fn_or_module if isinstance(fn_or_module, Module) else None
    attr_names: dict[int, str] = {}
    if module is not None:
        attr_names.update((id(t), name) for name, t in module.named_buffers())
        attr_names.update((id(p), name) for name, p in module.named_parameters())

    graph = Graph()
    mode = TraceMode(graph, attr_names)
    for name, value in zip(_input_names(fn_or_module, len(inputs)), inputs):
        if not isinstance(value, Tensor):
            raise CompileError(
                at_user_line(
                    f"jit.trace: example inputs must be tensors, got {type(value).__name__} for "
                    f"'{name}'; bind other arguments with functools.partial or a lambda"
                )
            )
        mode.placeholder(name, value)
    with _watch_tensors(mode), mode:
        out = fn_or_module(*inputs)
    mode.output(out)
    graph.eliminate_dead_code()  # ops whose value only steered Python (`x.sum() < 0`)
    graph.lint()
    return _graph_module(module, graph, mode.attrs)


def _eager_version(fn: Callable) -> Callable:
    """What a `minitorch.compile`d function or module runs eagerly: that is what we trace.

    Compiled kernels compute without dispatching ops, so the trace would see their outputs as
    tensors from nowhere and freeze them as constants.
    """
    from tracer.dynamo.eval_frame import OptimizedModule

    if isinstance(fn, OptimizedModule):
        return fn._orig_mod
    if hasattr(fn, "_dynamo_code"):  # the wrapper that tracer/dynamo/eval_frame.py returns
        return fn.__wrapped__
    return fn


def _input_names(fn: Callable, count: int) -> list[str]:
    """The parameter names of `fn` (or of `module.forward`), so the code reads like the source."""
    target = fn.forward if isinstance(fn, Module) else fn
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):  # a builtin or a C callable has no signature
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [names[i] if i < len(names) else f"input_{i}" for i in range(count)]


def _graph_module(module: Module | None, graph: Graph, attrs: dict[str, Tensor]) -> GraphModule:
    """A GraphModule holding what the graph reads: parameters stay parameters, buffers buffers."""
    gm = GraphModule(attrs, graph)
    if module is None:
        return gm
    gm.train(module.training)
    # A dict root turns plain tensors into plain attributes; give buffers their kind back.
    for name, _ in module.named_buffers():
        if name in attrs:
            *path, leaf = name.split(".")
            owner = gm.get_submodule(".".join(path)) if path else gm
            del owner.__dict__[leaf]
            owner.register_buffer(leaf, attrs[name])
    return gm


# [Note: watching conversions]
# Tensor -> Python conversions do not reach the dispatcher (they read the data directly), so the
# trace cannot record them; it can only say that it froze one. For the duration of a trace
# these Tensor methods are wrapped, and restored on exit however the trace ends. `detach` makes
# a tensor without an op too: it is recorded as an alias of its source, since it holds the same
# values. In-place writes are refused.
_CONVERSIONS = {
    "__bool__": "bool",
    "__int__": "int",
    "__float__": "float",
    "__index__": "int",
    "item": "number",
    "tolist": "list",
    "numpy": "numpy array",
}


@contextlib.contextmanager
def _watch_tensors(mode: TraceMode) -> Iterator[None]:
    names = (*_CONVERSIONS, "detach", "_in_place")
    own = {name: Tensor.__dict__.get(name) for name in names}  # None: inherited from a mixin
    saved = {name: getattr(Tensor, name) for name in names}
    converting = [False]  # bool(x) calls x.item(): warn once, for the outermost conversion

    def warn_on_conversion(name: str) -> Callable:
        original = saved[name]

        @functools.wraps(original)
        def converted(self, *args, **kwargs):
            if converting[0]:
                return original(self, *args, **kwargs)
            warnings.warn(
                at_user_line(
                    f"jit.trace: converting a tensor to a Python {_CONVERSIONS[name]}; the trace "
                    "records the value it has now and the branch it takes now, so the result may "
                    "not generalize to other inputs (minitorch.compile guards on such values "
                    "instead)"
                ),
                TracerWarning,
                stacklevel=2,
            )
            converting[0] = True
            try:
                return original(self, *args, **kwargs)
            finally:
                converting[0] = False

        return converted

    def detach(self: Tensor) -> Tensor:
        out = saved["detach"](self)
        mode.alias(out, self)
        return out

    def in_place(self: Tensor, op: str, *args, **kwargs) -> Tensor:
        raise CompileError(
            at_user_line(
                f"jit.trace: {op} writes a tensor in place, which the trace cannot record; use "
                "the out-of-place op (y = x.add(1), not x.add_(1))"
            )
        )

    try:
        for name in _CONVERSIONS:
            setattr(Tensor, name, warn_on_conversion(name))
        Tensor.detach = detach
        Tensor._in_place = in_place
        yield
    finally:
        for name, original in own.items():
            if original is None:
                delattr(Tensor, name)
            else:
                setattr(Tensor, name, original)
