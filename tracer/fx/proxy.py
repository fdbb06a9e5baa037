"""`Proxy`: a stand-in value that records every operation done on it as a graph node.

Symbolic tracing runs `forward` on Proxies instead of tensors. Each operation a Proxy takes
part in appends a Node to the tracer's graph and returns a new Proxy for its result:

    x + 1           call_function[target=operator.add](args = (%x, 1))
    x.relu()        call_method[target=relu](args = (%x,))          (an Attribute, then a call)
    x.shape         call_function[target=getattr](args = (%x, 'shape'))
    minitorch.sum(x, dim=-1)   call_function[target=minitorch.sum]  (__torch_function__, below)

A Proxy records into its tracer. Symbolic tracing makes the Tracer (symbolic_trace.py); a graph
built by hand takes a `GraphAppendingTracer`, which appends to the graph it is given, and is what
`Proxy(node)` uses when no tracer is named:

    graph = Graph()
    x = Proxy(graph.placeholder("x"))
    graph.output((minitorch.cat([x, x + 1]) * 2).node)

Every node goes through `TracerBase.create_node`, so a tracer that overrides it (to add metadata,
to rename) sees them all: placeholders, attributes, calls and the output.

[Note: a Proxy in a minitorch function] `minitorch.cat([x, y])` reaches the Proxy through the
__torch_function__ protocol ([Note: __torch_function__] in minitorch/overrides.py): the function
hands the call to `Proxy.__torch_function__`, which records call_function[target=minitorch.cat]
on the tracer of the Proxies among the arguments. There is no patching and no global state, so it
works the same inside and outside `symbolic_trace`, and in any thread.

[Note: what a Proxy cannot know] A Proxy has no value, so anything Python needs a concrete
answer for -- `bool(p)` in an `if`, `len(p)`, `for v in p`, `range(p.shape[0])` -- cannot be
recorded. Those raise `TraceError` at the user's line, suggesting the ways out: fix the value
with `concrete_args`, trace with real inputs (`minitorch.jit.trace`, which freezes the branch
taken), or `minitorch.compile`, which splits the graph around the branch.
"""

from __future__ import annotations

import linecache
import operator
from typing import Any

from minitorch.device import device
from minitorch.dtype import DType
from minitorch.errors import MinitorchError, user_location
from minitorch.tensor import Tensor
from tracer.fx.graph import Graph
from tracer.fx.node import Node, map_aggregate

# Values a node's args may hold as they are: they print as valid Python with repr().
_LITERALS = (type(None), bool, int, float, complex, str, type(Ellipsis), DType, device)


class TraceError(MinitorchError, RuntimeError):
    """Symbolic tracing needed a concrete value that only exists at run time."""


def trace_error(what: str) -> TraceError:
    """A TraceError for `what`, naming and quoting the user's line, with the ways out."""
    where = user_location()
    quoted = ""
    if where is not None:
        filename, _, lineno = where.rpartition(":")
        quoted = "\n    " + linecache.getline(filename, int(lineno)).strip()
    return TraceError(
        f"symbolic tracing cannot {what}: a Proxy stands for a value only known at run time "
        f"(at {where}){quoted}\n"
        "Fix the input that decides it with symbolic_trace(..., concrete_args={...}), trace "
        "with real inputs using minitorch.jit.trace (the branch taken is frozen), or use "
        "minitorch.compile, which handles Python control flow."
    )


class TracerBase:
    """What a Proxy records with: `create_proxy` turns a call into a node of `self.graph`.

    Each step is a method a subclass may override: `create_arg` (a value as node args hold it),
    `create_node` (the node itself) and `proxy` (the Proxy that stands for it).
    """

    graph: Graph

    def create_node(
        self,
        kind: str,
        target: Any,
        args: tuple,
        kwargs: dict,
        name: str | None = None,
        type_expr: Any = None,
    ) -> Node:
        """Append the node `kind[target](args, kwargs)`; args already hold nodes, not Proxies."""
        node = self.graph.create_node(kind, target, args, kwargs, name)
        node.meta["stack_trace"] = user_location()
        if type_expr is not None:
            node.meta["type"] = type_expr
        return node

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(
        self,
        kind: str,
        target: Any,
        args: tuple,
        kwargs: dict,
        name: str | None = None,
        type_expr: Any = None,
    ) -> Proxy:
        """Record `kind[target](args, kwargs)`, returning a Proxy for its value."""
        node = self.create_node(
            kind,
            target,
            self.create_arg(tuple(args)),
            self.create_arg(dict(kwargs)),
            name,
            type_expr,
        )
        return self.proxy(node)

    def create_arg(self, a: Any) -> Any:
        """A value as node args hold it: each Proxy becomes its node."""
        return map_aggregate(a, self._arg_leaf)

    def _arg_leaf(self, a: Any) -> Any:
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, _LITERALS) or isinstance(a, Node):
            return a
        raise TraceError(
            f"symbolic tracing cannot record an argument of type {type(a).__name__}: {a!r}"
        )


class GraphAppendingTracer(TracerBase):
    """Records into an existing graph: for building or extending graphs by hand.

    >>> tracer = GraphAppendingTracer(graph)
    >>> (Proxy(node, tracer) + 1).node      # call_function[target=operator.add](%node, 1)
    """

    def __init__(self, graph: Graph) -> None:
        self.graph = graph


class Proxy:
    """A symbolic value: `node` is where it was made, `tracer` records what is done with it."""

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        self.node = node
        self.tracer = tracer if tracer is not None else GraphAppendingTracer(node.graph)

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __hash__(self) -> int:  # __eq__ records a node, so hash by identity
        return id(self)

    def __getattr__(self, name: str) -> Attribute:
        # NOTE: only reached for names a Proxy lacks. Dunders stay missing, so that probes such
        # as numpy's `__array__` or copy's `__deepcopy__` see a plain object.
        if name.startswith("__"):
            raise AttributeError(name)
        return Attribute(self, name)

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def _op(self, target, *args) -> Proxy:
        return self.tracer.create_proxy("call_function", target, args, {})

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None) -> Proxy:
        """`func(*args, **kwargs)` as a node: call_method for a Tensor method, else
        call_function ([Note: a Proxy in a minitorch function]). The Proxies among the
        arguments must share one tracer, as in torch.fx."""
        tracers = {}
        map_aggregate(
            (args, kwargs),
            lambda a: tracers.setdefault(id(a.tracer), a.tracer) if isinstance(a, Proxy) else None,
        )
        if len(tracers) > 1:
            raise TraceError(
                f"{func.__name__}() was given Proxies of {len(tracers)} different "
                "tracers; one call can only be recorded into one graph"
            )
        (tracer,) = tracers.values()
        if getattr(Tensor, func.__name__, None) is func:  # a method: `const.view(x.shape)`
            return tracer.create_proxy("call_method", func.__name__, args, kwargs or {})
        return tracer.create_proxy("call_function", func, args, kwargs or {})

    # ---- what cannot be recorded ([Note: what a Proxy cannot know]) ------------------------

    def __bool__(self) -> bool:
        raise trace_error(f"use {self.node.name} as a Python bool (an `if`, `and`, `assert`)")

    def __len__(self) -> int:
        raise trace_error(f"take len() of {self.node.name}")

    def __iter__(self):
        raise trace_error(f"iterate over {self.node.name} (a `for` loop or unpacking)")

    def __index__(self) -> int:
        raise trace_error(f"use {self.node.name} as a Python int (range(), an index)")

    def __int__(self) -> int:
        raise trace_error(f"convert {self.node.name} to a Python int")

    def __float__(self) -> float:
        raise trace_error(f"convert {self.node.name} to a Python float")

    # ---- arithmetic: self op other ---------------------------------------------------------

    def __add__(self, other):
        return self._op(operator.add, self, other)

    def __sub__(self, other):
        return self._op(operator.sub, self, other)

    def __mul__(self, other):
        return self._op(operator.mul, self, other)

    def __truediv__(self, other):
        return self._op(operator.truediv, self, other)

    def __floordiv__(self, other):
        return self._op(operator.floordiv, self, other)

    def __mod__(self, other):
        return self._op(operator.mod, self, other)

    def __pow__(self, other):
        return self._op(operator.pow, self, other)

    def __matmul__(self, other):
        return self._op(operator.matmul, self, other)

    def __and__(self, other):
        return self._op(operator.and_, self, other)

    def __or__(self, other):
        return self._op(operator.or_, self, other)

    def __xor__(self, other):
        return self._op(operator.xor, self, other)

    def __lshift__(self, other):
        return self._op(operator.lshift, self, other)

    def __rshift__(self, other):
        return self._op(operator.rshift, self, other)

    # ---- reflected arithmetic: other op self (Python tried other's method first) -----------

    def __radd__(self, other):
        return self._op(operator.add, other, self)

    def __rsub__(self, other):
        return self._op(operator.sub, other, self)

    def __rmul__(self, other):
        return self._op(operator.mul, other, self)

    def __rtruediv__(self, other):
        return self._op(operator.truediv, other, self)

    def __rfloordiv__(self, other):
        return self._op(operator.floordiv, other, self)

    def __rmod__(self, other):
        return self._op(operator.mod, other, self)

    def __rpow__(self, other):
        return self._op(operator.pow, other, self)

    def __rmatmul__(self, other):
        return self._op(operator.matmul, other, self)

    def __rand__(self, other):
        return self._op(operator.and_, other, self)

    def __ror__(self, other):
        return self._op(operator.or_, other, self)

    def __rxor__(self, other):
        return self._op(operator.xor, other, self)

    def __rlshift__(self, other):
        return self._op(operator.lshift, other, self)

    def __rrshift__(self, other):
        return self._op(operator.rshift, other, self)

    # ---- comparisons: recorded, not answered (so `if x > 0` fails in __bool__) -------------

    def __lt__(self, other):
        return self._op(operator.lt, self, other)

    def __le__(self, other):
        return self._op(operator.le, self, other)

    def __gt__(self, other):
        return self._op(operator.gt, self, other)

    def __ge__(self, other):
        return self._op(operator.ge, self, other)

    def __eq__(self, other):
        return self._op(operator.eq, self, other)

    def __ne__(self, other):
        return self._op(operator.ne, self, other)

    # ---- unary and indexing ----------------------------------------------------------------

    def __neg__(self):
        return self._op(operator.neg, self)

    def __pos__(self):
        return self._op(operator.pos, self)

    def __invert__(self):
        return self._op(operator.invert, self)

    def __abs__(self):
        return self._op(operator.abs, self)

    def __getitem__(self, key):
        return self._op(operator.getitem, self, key)


class Attribute(Proxy):
    """`proxy.name`: a method call if it is called, else a `getattr` node made on first use."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        # NOTE: lazy, so that `x.relu()` records one call_method and no unused getattr.
        if self._node is None:
            self._node = self.tracer.create_proxy(
                "call_function", getattr, (self.root, self.attr), {}
            ).node
        return self._node

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)
