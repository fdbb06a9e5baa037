"""`symbolic_trace` and `Tracer`: run `forward` on Proxies and keep the graph they record.

    >>> gm = symbolic_trace(MyModule())      # forward: self.linear(x + self.param).clamp(...)
    >>> print(gm.graph)
    graph():
        %x : [num_users=1] = placeholder[target=x]
        %param : [num_users=1] = get_attr[target=param]
        %add : [num_users=1] = call_function[target=operator.add](args = (%x, %param), ...)
        %linear : [num_users=1] = call_module[target=linear](args = (%add,), kwargs = {})
        %clamp : [num_users=1] = call_method[target=clamp](args = (%linear,), kwargs = {...})
        return clamp

[Note: how tracing sees everything] Operators and tensor methods on a Proxy record themselves
(proxy.py). Three more doors are opened only while `Tracer.trace` runs, by patches that are
always undone, even when tracing fails:
  - `minitorch.<op>` and `minitorch.nn.functional.<op>` are wrapped: called with any Proxy
    argument they record `call_function` with the original function as target;
  - `Module.__call__` asks `Tracer.call_module`: a leaf module (a built-in `nn` layer by
    default) is recorded as `call_module`, any other module is traced through;
  - `Module.__getattr__` turns a parameter or buffer of the traced module into a `get_attr`
    Proxy named by its dotted path ('linear.weight'), the same node each time it is read.

[Note: tracing beside other threads] The patched functions and methods are process-wide, but
a trace belongs to one thread: each patch asks `_tracer`, a context variable, which tracer is
running in the calling thread, and in a thread that traces nothing it calls the original at
once. The patches go in when the first trace in any thread starts and come out when the last
one ends (a count under a lock), so that two threads tracing at once neither record into each
other's graphs nor restore each other's patches as the "originals".
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import threading
from collections.abc import Callable, Iterator
from typing import Any

import minitorch
from minitorch.device import device
from minitorch.dtype import DType
from minitorch.errors import user_location
from minitorch.nn import functional as nn_functional
from minitorch.nn.container import ModuleList, Sequential
from minitorch.nn.module import Module
from minitorch.tensor import Tensor
from tracer.fx.graph import Graph
from tracer.fx.graph_module import GraphModule
from tracer.fx.node import Node, map_aggregate
from tracer.fx.proxy import Proxy, TraceError

# Factories that are useful on a traced shape or tensor: `minitorch.zeros_like(x)`.
_FACTORIES = ("empty", "full", "ones", "ones_like", "rand_like", "randn_like", "zeros",
              "zeros_like")

# Values a node's args may hold as they are: they print as valid Python with repr().
_LITERALS = (type(None), bool, int, float, complex, str, type(Ellipsis), DType, device)


class Tracer:
    """Turns a module or function into a Graph by running it on Proxies.

    Override `is_leaf_module` to choose which submodules stay opaque `call_module` nodes.
    """

    def __init__(self) -> None:
        self.graph = Graph()
        self.root = Module()
        self._module_paths: dict[int, str] = {}
        self._tensor_paths: dict[int, str] = {}
        self._attr_proxies: dict[str, Proxy] = {}  # one get_attr node per parameter
        self._constant_count = 0

    # ---- the overridable policy ------------------------------------------------------------

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """Built-in minitorch.nn layers are leaves; containers and user modules are not."""
        builtin = type(m).__module__.startswith("minitorch.nn")
        return builtin and not isinstance(m, (Sequential, ModuleList))

    def call_module(self, m: Module, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """Record a leaf module as one `call_module` node; trace through any other."""
        path = self._module_paths.get(id(m))
        if path is None or not self.is_leaf_module(m, path):
            return forward(*args, **kwargs)  # a module made inside forward is traced through
        return self.create_proxy("call_module", path, args, kwargs)

    # ---- recording -------------------------------------------------------------------------

    def create_proxy(self, kind: str, target: Any, args: tuple, kwargs: dict,
                     name: str | None = None) -> Proxy:
        """Append a node for `kind[target](args, kwargs)`, returning a Proxy for its value."""
        node = self.graph.create_node(kind, target, self.create_arg(tuple(args)),
                                      self.create_arg(dict(kwargs)), name)
        node.meta["stack_trace"] = user_location()
        return Proxy(node, self)

    def create_arg(self, a: Any) -> Any:
        """A value as node args hold it: Proxies become their nodes, tensors get_attr nodes."""
        return map_aggregate(a, self._arg_leaf)

    def _arg_leaf(self, a: Any) -> Any:
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Tensor):
            return self._tensor_attr(a).node
        if isinstance(a, _LITERALS) or isinstance(a, Node):
            return a
        raise TraceError(f"symbolic tracing cannot record an argument of type "
                         f"{type(a).__name__}: {a!r}")

    def _tensor_attr(self, t: Tensor) -> Proxy:
        """The get_attr Proxy of a parameter, buffer, or (stored on root) tensor constant."""
        path = self._tensor_paths.get(id(t))
        if path is None:  # a tensor made outside the module: keep it as a constant
            path = f"_tensor_constant{self._constant_count}"
            self._constant_count += 1
            setattr(self.root, path, t)
            self._tensor_paths[id(t)] = path
        if path not in self._attr_proxies:
            self._attr_proxies[path] = self.create_proxy("get_attr", path, (), {})
        return self._attr_proxies[path]

    # ---- the trace -------------------------------------------------------------------------

    def trace(self, root: Module | Callable, concrete_args: dict[str, Any] | None = None
              ) -> Graph:
        """Run `root` (its forward, for a Module) on Proxies; return the recorded Graph."""
        self.graph = Graph()
        self._attr_proxies = {}
        self._constant_count = 0
        if isinstance(root, Module):
            self.root, fn = root, root.forward
        else:
            self.root, fn = Module(), root
        self._module_paths = {id(m): name for name, m in self.root.named_modules()}
        self._tensor_paths = {id(t): name for name, t in [*self.root.named_parameters(),
                                                          *self.root.named_buffers()]}
        args = self._placeholders(fn, concrete_args or {})
        with _tracing(self):
            result = fn(*args)
        self.graph.output(self.create_arg(result))
        return self.graph

    def _placeholders(self, fn: Callable, concrete_args: dict[str, Any]) -> list[Any]:
        """One placeholder Proxy per input of `fn`; concrete args are passed as they are."""
        args = []
        for name, param in inspect.signature(fn).parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TraceError(f"symbolic_trace needs named inputs, but {fn.__qualname__} "
                                 f"takes {'*' if param.kind == param.VAR_POSITIONAL else '**'}"
                                 f"{name}")
            if name in concrete_args:
                args.append(concrete_args[name])  # fixed: no placeholder, not an input
            else:
                args.append(Proxy(self.graph.placeholder(name), self))
        unknown = set(concrete_args) - set(inspect.signature(fn).parameters)
        if unknown:
            raise TraceError(f"concrete_args names {sorted(unknown)}, which are not inputs of "
                             f"{fn.__qualname__}")
        return args


def symbolic_trace(root: Module | Callable, concrete_args: dict[str, Any] | None = None
                   ) -> GraphModule:
    """Trace `root` into a GraphModule whose generated forward computes the same thing.

    >>> gm = symbolic_trace(lambda x: minitorch.relu(x) + 1)
    >>> print(gm.code)
    def forward(self, x):
        relu = minitorch.relu(x);  x = None
        add = relu + 1;  relu = None
        return add
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else getattr(root, "__name__", "fn")
    return GraphModule(tracer.root, graph, name if name.isidentifier() else "GraphModule")


# ---- the patches ([Note: how tracing sees everything]) ---------------------------------------


def _has_proxy(args: tuple, kwargs: dict) -> bool:
    found = []
    map_aggregate((args, kwargs), lambda a: found.append(a) if isinstance(a, Proxy) else None)
    return bool(found)


# The tracer running in this thread, if any ([Note: tracing beside other threads]).
_tracer: contextvars.ContextVar[Tracer | None] = contextvars.ContextVar("fx_tracer", default=None)
_patching = threading.Lock()  # held while the patches go in or come out
_traces = 0  # traces running, in all threads; the patches are in while it is above 0
_unpatch: list[Callable[[], None]] = []  # what puts the originals back


@contextlib.contextmanager
def _tracing(tracer: Tracer) -> Iterator[None]:
    """`tracer` is this thread's tracer inside the block; the patches are in while it runs."""
    global _traces
    with _patching:
        if _traces == 0:
            _unpatch[:] = [_patch_library(), _patch_modules()]
        _traces += 1
    previous = _tracer.get()
    _tracer.set(tracer)
    try:
        yield
    finally:
        _tracer.set(previous)
        with _patching:
            _traces -= 1
            if _traces == 0:
                for undo in _unpatch:
                    undo()


def _recording(fn: Callable) -> Callable:
    """`fn`, except that while this thread traces, a call with any Proxy argument records
    `call_function[target=fn]`."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        tracer = _tracer.get()
        if tracer is not None and _has_proxy(args, kwargs):
            return tracer.create_proxy("call_function", fn, args, kwargs)
        return fn(*args, **kwargs)

    return wrapper


def _patch_library() -> Callable[[], None]:
    """Wrap the public functions of minitorch and minitorch.nn.functional; returns the undo."""
    names = [(minitorch, n) for n in (*minitorch.functional.__all__, *_FACTORIES)]
    names += [(nn_functional, n) for n in nn_functional.__all__]
    saved = [(module, n, getattr(module, n)) for module, n in names
             if inspect.isfunction(getattr(module, n, None))]
    for module, n, fn in saved:
        setattr(module, n, _recording(fn))

    def undo() -> None:
        for module, n, fn in saved:
            setattr(module, n, fn)

    return undo


def _patch_modules() -> Callable[[], None]:
    """Route Module calls through the tracer's `call_module`; read parameters as get_attr
    Proxies. Returns the undo."""
    original_call, original_getattr = Module.__call__, Module.__getattr__

    def module_call(m: Module, *args, **kwargs):
        tracer = _tracer.get()
        if tracer is None:
            return original_call(m, *args, **kwargs)
        return tracer.call_module(m, lambda *a, **k: original_call(m, *a, **k), args, kwargs)

    def module_getattr(m: Module, name: str):
        value = original_getattr(m, name)
        tracer = _tracer.get()
        if tracer is not None and isinstance(value, Tensor) and id(value) in tracer._tensor_paths:
            return tracer._tensor_attr(value)
        return value

    Module.__call__, Module.__getattr__ = module_call, module_getattr

    def undo() -> None:
        Module.__call__, Module.__getattr__ = original_call, original_getattr

    return undo
