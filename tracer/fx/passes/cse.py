"""Common-subexpression elimination: compute each repeated expression once.

    >>> gm = symbolic_trace(lambda x: x.sin() + x.sin())
    >>> print(eliminate_common_subexpressions(gm).code)
    def forward(self, x):
        sin = x.sin();  x = None
        add = sin + sin;  sin = None
        return add

Two nodes compute the same value when they have the same opcode, target and arguments, and
argument nodes that were themselves found equal. One walk in program order sees every node
after its inputs, with the repeats among those inputs already merged, so one pass finds all.

[Note: what CSE may merge]
Merging makes two names share one tensor. That is right for a deterministic, pure expression
and wrong for three kinds of node, which are never merged:
  - random ones (an op of kind 'random', `minitorch.rand_like`, `F.dropout`, ...): two draws
    differ, and merged they would be equal;
  - call_module nodes: a module may hold state, and we do not argue purity module by module;
  - nodes that may write a tensor in place (`x.add_(1)`, `F.relu(x, inplace=True)`, a
    training-mode BatchNorm updating its statistics, a function we do not know).
A write also changes what equal-looking code means: after `a = x + 1; x.add_(1); b = x + 1`,
a != b; and merging `a = x.clone(); b = x.clone()` before an `a.add_(1)` would write b too.
So only the nodes after the last possible write are merged. Graphs from jit.trace and AOT
autograd never write (they refuse in-place ops), so there every node is considered.
"""

from __future__ import annotations

import builtins
import copy
import inspect
import operator
from typing import Any

from minitorch.nn.module import Module
from minitorch.ops import OpDef
from tracer.fx.graph import is_random
from tracer.fx.graph_module import GraphModule
from tracer.fx.node import Node
from tracer.fx.symbolic_trace import symbolic_trace

# The operators that write their first argument: `x += y` and `x[i] = y`.
_IN_PLACE_OPERATORS = frozenset(
    {
        operator.setitem,
        operator.delitem,
        operator.iadd,
        operator.isub,
        operator.imul,
        operator.itruediv,
        operator.ifloordiv,
        operator.imod,
        operator.ipow,
        operator.imatmul,
        operator.iand,
        operator.ior,
        operator.ixor,
        operator.ilshift,
        operator.irshift,
    }
)

_PURE_BUILTINS = frozenset({builtins.getattr, builtins.len})


def eliminate_common_subexpressions(gm: Module) -> GraphModule:
    """A new GraphModule in which each repeated pure expression is computed once.

    `gm` itself is left as it was; a plain Module is traced with symbolic_trace first.
    """
    gm = gm if isinstance(gm, GraphModule) else symbolic_trace(gm)
    graph = copy.deepcopy(gm.graph)
    modules = dict(gm.named_modules())
    nodes = graph.nodes
    writes = [i for i, node in enumerate(nodes) if may_write(node, modules)]
    first = writes[-1] + 1 if writes else 0  # see [Note: what CSE may merge]
    seen: dict[tuple, Node] = {}
    for node in nodes[first:]:
        if node.op not in ("get_attr", "call_function", "call_method") or is_random(node):
            continue
        try:
            key = (node.op, node.target, _hashable(node.args), _hashable(node.kwargs))
            earlier = seen.setdefault(key, node)
        except TypeError:  # an argument that cannot be hashed: we cannot compare it, keep it
            continue
        if earlier is not node:
            node.replace_all_uses_with(earlier)
            graph.erase_node(node)
    return GraphModule(gm, graph, gm._class_name)


def may_write(node: Node, modules: dict[str, Module]) -> bool:
    """Could `node` change a tensor in place: one of its inputs, a parameter or a buffer?

    x.add_(1)   x += 1   x[0] = 1   F.relu(x, inplace=True)   nn.ReLU(inplace=True)
    a training-mode BatchNorm or F.batch_norm(..., training=True) (the running statistics)
    any function we do not know
    """
    if node.op == "call_method":
        return node.target.endswith("_")  # PyTorch's naming rule for in-place methods
    if node.op == "call_module":
        return not all(_is_stateless_layer(m) for m in modules[node.target].modules())
    if node.op != "call_function":
        return False
    target = node.target
    if isinstance(target, OpDef):
        return False  # ops of the table compute new tensors; in-place forms are not ops
    if target in _IN_PLACE_OPERATORS:
        return True
    if not _is_known_function(target):
        return True
    return _writes_by_argument(target, node.args, node.kwargs)


def _is_known_function(target: Any) -> bool:
    """operator.*, getattr/len, and minitorch's own functions (minitorch.*, F.*)."""
    name = getattr(target, "__name__", None)
    if name is None:
        return False
    if getattr(operator, name, None) is target or target in _PURE_BUILTINS:
        return True
    module = getattr(target, "__module__", None) or ""
    return module.split(".")[0] == "minitorch" and not name.endswith("_")


def _writes_by_argument(target: Any, args: tuple, kwargs: dict) -> bool:
    """`inplace=True`, by name or by position (`F.relu(x, True)`), or `training=True` with
    running statistics (`F.batch_norm` updates them in place)."""
    try:
        bound = inspect.signature(target).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):  # no signature (a builtin), or a call that does not bind
        bound = kwargs
    if bound.get("inplace") is True:
        return True
    return bound.get("training") is True and bound.get("running_mean") is not None


def _is_stateless_layer(m: Module) -> bool:
    """A built-in layer whose call writes nothing (containers are judged by their children)."""
    if not type(m).__module__.startswith("minitorch.nn."):
        return False  # a user's module: its forward could do anything
    if getattr(m, "inplace", False):
        return False  # nn.ReLU(inplace=True), nn.Dropout(inplace=True) write their input
    return not (m.training and getattr(m, "track_running_stats", False))  # BatchNorm's stats


def _hashable(a: Any) -> Any:
    """A key for an argument: equal keys mean equal values, types included (1, 1.0, True)."""
    if isinstance(a, Node):
        return a  # by identity: repeats among the inputs were merged already
    if isinstance(a, (tuple, list)):
        return (type(a), tuple(_hashable(x) for x in a))
    if isinstance(a, dict):
        return (dict, tuple(sorted((k, _hashable(v)) for k, v in a.items())))
    if isinstance(a, slice):
        return (slice, _hashable(a.start), _hashable(a.stop), _hashable(a.step))
    if isinstance(a, float):
        return (float, repr(a))  # -0.0 and 0.0 are equal, but not the same constant
    hash(a)  # raises TypeError for an unhashable value
    return (type(a), a)
