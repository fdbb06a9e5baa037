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
(proxy.py), and so does any public minitorch function given a Proxy, through the
__torch_function__ protocol ([Note: a Proxy in a minitorch function]). Modules need two more
doors, opened only while `Tracer.trace` runs, by patches that are always undone, even when
tracing fails:
  - `Module.__call__` asks `Tracer.call_module`: a leaf module (a built-in `nn` layer by
    default) is recorded as `call_module`, any other module is traced through;
  - `Module.__getattr__` asks `Tracer.getattr`: a parameter or buffer of the traced module
    becomes a `get_attr` Proxy named by its dotted path ('linear.weight'), the same node each
    time it is read.
A third patch swaps the functions named by `wrap` (wrap.py) for stand-ins that record a call
on Proxies as one call_function node.

[Note: concrete_args] `symbolic_trace(f, concrete_args={"flag": True})` runs `f` with the
value itself, so that Python control flow on it is decided while tracing. The input stays in
the generated forward's signature (callers keep passing it, by position or by name), and the
graph checks it, as PyTorch does, so that another value fails loudly instead of being ignored:

    %flag : [num_users=1] = placeholder[target=flag]
    %check_concrete_arg : [num_users=0] = call_function[target=tracer.fx.symbolic_trace.
        check_concrete_arg](args = (%flag, True, 'flag'), kwargs = {})

Nothing reads the check's value, so dead-code elimination would remove it: it is listed in
`_IMPURE_TARGETS`, which that pass keeps. A value the check cannot compare (a tensor, a module)
gets a warning instead, as in PyTorch.

[Note: tracing beside other threads] The patched Module methods are process-wide, but
a trace belongs to one thread: each patch asks `_tracer`, a context variable, which tracer is
running in the calling thread, and in a thread that traces nothing it calls the original at
once. The patches go in when the first trace in any thread starts and come out when the last
one ends (a count under a lock), so that two threads tracing at once neither record into each
other's graphs nor restore each other's patches as the "originals".
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from minitorch.errors import MinitorchError, at_user_line
from minitorch.nn.container import ModuleList, Sequential
from minitorch.nn.module import Module
from minitorch.tensor import Tensor
from tracer.fx.graph import _IMPURE_TARGETS, Graph
from tracer.fx.graph_module import GraphModule
from tracer.fx.node import map_aggregate
from tracer.fx.proxy import _LITERALS, Proxy, TraceError, TracerBase
from tracer.fx.wrap import patch_wrapped


class Tracer(TracerBase):
    """Turns a module or function into a Graph by running it on Proxies.

    Override `is_leaf_module` to choose which submodules stay opaque `call_module` nodes,
    `call_module` and `getattr` to change what a module call or a parameter read records, and
    `create_node` / `create_proxy` (TracerBase) to see or change every node made.
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

    def path_of_module(self, mod: Module) -> str:
        """The qualified name of `mod` in the traced root ('layers.0'); NameError if absent."""
        path = self._module_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m: Module, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """Record a leaf module as one `call_module` node; trace through any other."""
        try:
            path = self.path_of_module(m)
        except NameError:
            return forward(*args, **kwargs)  # a module made inside forward is traced through
        if not self.is_leaf_module(m, path):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", path, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Any]) -> Any:
        """What `module.<attr>` gives in forward: a parameter or buffer of the root becomes its
        get_attr Proxy (one per path, kept in `parameter_proxy_cache`); the rest stays itself."""
        path = self._tensor_paths.get(id(attr_val)) if isinstance(attr_val, Tensor) else None
        if path is None:
            return attr_val
        return self._attr_proxy(path, parameter_proxy_cache)

    # ---- recording -------------------------------------------------------------------------

    def _arg_leaf(self, a: Any) -> Any:
        if isinstance(a, Tensor):
            return self._tensor_attr(a).node
        return super()._arg_leaf(a)

    def _tensor_attr(self, t: Tensor) -> Proxy:
        """The get_attr Proxy of a parameter, buffer, or (stored on root) tensor constant."""
        path = self._tensor_paths.get(id(t))
        if path is None:  # a tensor made outside the module: keep it as a constant
            path = f"_tensor_constant{self._constant_count}"
            self._constant_count += 1
            setattr(self.root, path, t)
            self._tensor_paths[id(t)] = path
        return self._attr_proxy(path, self._attr_proxies)

    def _attr_proxy(self, path: str, cache: dict[str, Any]) -> Proxy:
        if path not in cache:
            cache[path] = self.create_proxy("get_attr", path, (), {})
        return cache[path]

    # ---- the trace -------------------------------------------------------------------------

    def trace(self, root: Module | Callable, concrete_args: dict[str, Any] | None = None) -> Graph:
        """Run `root` (its forward, for a Module) on Proxies; return the recorded Graph."""
        self.graph = Graph()
        self._attr_proxies = {}
        self._constant_count = 0
        if isinstance(root, Module):
            self.root, fn = root, root.forward
        else:
            self.root, fn = Module(), root
        self._module_paths = {id(m): name for name, m in self.root.named_modules()}
        self._tensor_paths = {
            id(t): name for name, t in [*self.root.named_parameters(), *self.root.named_buffers()]
        }
        args = self._placeholders(fn, concrete_args or {})
        with _tracing(self):
            result = fn(*args)
        self.create_node("output", "output", (self.create_arg(result),), {})
        return self.graph

    def _placeholders(self, fn: Callable, concrete_args: dict[str, Any]) -> list[Any]:
        """One placeholder per input of `fn` (with its default, if any); the Proxy of each, or
        for a concrete arg its value, checked by the graph ([Note: concrete_args])."""
        parameters = inspect.signature(fn).parameters
        unknown = set(concrete_args) - set(parameters)
        if unknown:
            raise TraceError(
                f"concrete_args names {sorted(unknown)}, which are not inputs of {fn.__qualname__}"
            )
        args = []
        for name, param in parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TraceError(
                    f"symbolic_trace needs named inputs, but {fn.__qualname__} "
                    f"takes {'*' if param.kind == param.VAR_POSITIONAL else '**'}"
                    f"{name}"
                )
            default = () if param.default is param.empty else (param.default,)
            proxy = self.create_proxy("placeholder", name, default, {}, name=name)
            if name in concrete_args:
                args.append(self._concrete(name, proxy, concrete_args[name]))
            else:
                args.append(proxy)
        return args

    def _concrete(self, name: str, proxy: Proxy, value: Any) -> Any:
        """`value`, with a node that checks the input `proxy` stands for equals it."""
        if _is_literal(value):
            self.create_proxy("call_function", check_concrete_arg, (proxy, value, name), {})
        else:
            warnings.warn(
                f"symbolic_trace cannot check that later calls pass the same {name} "
                f"as concrete_args did (a {type(value).__name__}): a different one "
                "would be ignored",
                stacklevel=4,
            )
        return value


def symbolic_trace(
    root: Module | Callable, concrete_args: dict[str, Any] | None = None
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


# ---- concrete_args ([Note: concrete_args]) ---------------------------------------------------


class ConcreteArgError(MinitorchError, AssertionError):
    """A traced module was called with another value for an input `concrete_args` fixed."""


def check_concrete_arg(value: Any, expected: Any, name: str) -> None:
    """Fail unless `value` is the `expected` value that `name` was traced with."""
    same = value is None if expected is None else value == expected
    if not same:
        raise ConcreteArgError(
            at_user_line(
                f"{name} has been specialized to have value {expected!r} by symbolic_trace's "
                f"concrete_args, but got {value!r}; trace again with the new value"
            )
        )


_IMPURE_TARGETS.add(check_concrete_arg)  # dead-code elimination keeps the check


def _is_literal(value: Any) -> bool:
    """A value a check can compare: a literal, or tuples and lists of them."""
    leaves = []
    map_aggregate(value, leaves.append)
    return not isinstance(value, dict) and all(isinstance(v, _LITERALS) for v in leaves)


# ---- the patches ([Note: how tracing sees everything]) ---------------------------------------


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
            _unpatch[:] = [_patch_modules(), patch_wrapped()]
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
        if tracer is None:
            return value
        return tracer.getattr(name, value, tracer._attr_proxies)

    Module.__call__, Module.__getattr__ = module_call, module_getattr

    def undo() -> None:
        Module.__call__, Module.__getattr__ = original_call, original_getattr

    return undo
