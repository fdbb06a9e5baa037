"""Python code generation for a Graph: what `GraphModule.code` shows and runs.

    def forward(self, x):
        sin = minitorch.sin(x)
        pow_1 = sin ** 2;  sin = None
        ...
        return (add,)

Each node becomes one assignment. Operators print infix; other functions by their importable
name, whose top-level module goes into the globals the code runs with. After a value's last
use it is set to None, so big intermediates are freed as early as in eager code.
"""

from __future__ import annotations

import builtins
import keyword
import math
import operator
from typing import Any, NamedTuple

from tracer.fx.node import Node, map_arg, target_name

_INFIX = {
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.truediv: "/",
    operator.floordiv: "//",
    operator.mod: "%",
    operator.pow: "**",
    operator.matmul: "@",
    operator.and_: "&",
    operator.or_: "|",
    operator.xor: "^",
    operator.lshift: "<<",
    operator.rshift: ">>",
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
    operator.eq: "==",
    operator.ne: "!=",
}
_PREFIX = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}


class PythonCode(NamedTuple):
    source: str  # the text of `def forward(...)`
    globals: dict[str, Any]  # what the text refers to: modules and unnamed callables


def python_code(graph, root_module: str = "self") -> PythonCode:
    """Generate `def forward(self, ...)` for `graph`."""
    import minitorch

    # repr() of an infinite or NaN constant is `inf` / `nan`, of a device `device(type='cpu')`
    # (`arange(t, device=idx.device)`): give those names a value.
    globals_: dict[str, Any] = {
        "operator": operator,
        "minitorch": minitorch,
        "inf": math.inf,
        "nan": math.nan,
        "device": minitorch.device,
    }
    last_use: dict[Node, Node] = {}
    for node in graph.nodes:
        for inp in node.all_input_nodes:
            last_use[inp] = node
    dies_at: dict[Node, list[Node]] = {}
    for value, user in last_use.items():
        dies_at.setdefault(user, []).append(value)

    params, body = [], []
    for node in graph.nodes:
        if node.op == "placeholder":  # an input, with its default value if it has one
            params.append(f"{node.name} = {_src(node.args[0])}" if node.args else node.name)
            continue
        line = _emit(node, root_module, globals_)
        dead = [v.name for v in dies_at.get(node, [])]
        if node.op != "output" and dead:
            line += ";  " + " = ".join(dead) + " = None"
        body.append("    " + line)
    if not body or not body[-1].lstrip().startswith("return"):
        body.append("    return None")
    signature = ", ".join([root_module, *params])
    return PythonCode(f"def forward({signature}):\n" + "\n".join(body) + "\n", globals_)


def _emit(node: Node, root: str, globals_: dict[str, Any]) -> str:
    args = map_arg(node.args, lambda n: _Name(n.name))
    kwargs = map_arg(node.kwargs, lambda n: _Name(n.name))
    if node.op == "output":
        return f"return {_src(args[0])}"
    if node.op == "get_attr":
        return f"{node.name} = {_attr_path(root, node.target)}"
    if node.op == "call_module":
        return f"{node.name} = {_attr_path(root, node.target)}({_call_args(args, kwargs)})"
    if node.op == "call_method":
        obj, rest = args[0], args[1:]
        return f"{node.name} = {_src(obj)}.{node.target}({_call_args(rest, kwargs)})"
    target = node.target
    if target in _INFIX and len(args) == 2 and not kwargs:
        return f"{node.name} = {_src(args[0])} {_INFIX[target]} {_src(args[1])}"
    if target in _PREFIX and len(args) == 1 and not kwargs:
        return f"{node.name} = {_PREFIX[target]}{_src(args[0])}"
    if target is operator.getitem and len(args) == 2:
        return f"{node.name} = {_src(args[0])}[{_src(args[1])}]"
    return f"{node.name} = {_callable_name(target, globals_)}({_call_args(args, kwargs)})"


def _callable_name(target: Any, globals_: dict[str, Any]) -> str:
    """A name for `target` that resolves in the generated code's globals."""
    name = target_name(target)
    if name.isidentifier() and getattr(builtins, name, None) is target:
        return name
    top = name.split(".")[0]
    if name.count(".") and _resolves(top, name, target):
        globals_[top] = __import__(top)
        return name
    # A local or lambda function: give it a global of its own.
    mangled = "_" + "".join(c if c.isalnum() else "_" for c in name)
    globals_[mangled] = target
    return mangled


def _resolves(top: str, dotted: str, target: Any) -> bool:
    try:
        obj = __import__(top)
        for part in dotted.split(".")[1:]:
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return False
    return obj is target


def _attr_path(root: str, target: str) -> str:
    """`layers.0.weight` as Python: `getattr(self.layers, '0').weight`."""
    path = root
    for part in target.split("."):
        plain = part.isidentifier() and not keyword.iskeyword(part)
        path = f"{path}.{part}" if plain else f"getattr({path}, {part!r})"
    return path


class _Name:
    """A node reference inside args: prints as the bare variable name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _src(a: Any) -> str:
    if isinstance(a, tuple):
        inner = ", ".join(_src(x) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_src(x) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k!r}: {_src(v)}" for k, v in a.items()) + "}"
    if isinstance(a, slice):
        return f"slice({_src(a.start)}, {_src(a.stop)}, {_src(a.step)})"
    return repr(a)  # numbers, strings, None, and dtypes (minitorch.float32)


def _call_args(args: tuple, kwargs: dict) -> str:
    parts = [_src(a) for a in args] + [f"{k} = {_src(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)
