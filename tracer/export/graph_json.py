"""A Graph as JSON, and back: the header of a saved program (see serialize.py for the file).

    {"name": "add", "op": "call_function", "target": "minitorch.ops.add",
     "args": [{"node": "mm"}, {"node": "linear_bias"}], "kwargs": {}}

[Note: nothing is imported by name]
A saved graph names its functions as text. Loading resolves that text through one table,
`allowed_functions()`: `minitorch.ops.<name>` for each row of the op table, and
`operator.getitem`. Nothing else is callable from a file, so a header that names `os.system`
or `builtins.eval` is refused, not imported. Arguments are plain data too, with a small tag
for each kind JSON lacks:

    value            JSON                           value            JSON
    None, bool, str  null, true/false, "text"       tuple            [...]
    int, finite flt  1, 2.5                         list             {"list": [...]}
    inf, -inf, nan   {"float": "inf"}               dict (str keys)  {"dict": {"k": ...}}
    a node's value   {"node": "mm"}                 slice(a, b, c)   {"slice": [a, b, c]}
    minitorch.int64  {"dtype": "int64"}             Ellipsis         {"ellipsis": null}
    device("cpu")    {"device": "cpu"}

A namedtuple is saved as a plain tuple (generated code returns it as one already).
Names are checked to be identifiers before they reach the code GraphModule generates.
"""

from __future__ import annotations

import keyword
import math
import operator
import re
from collections.abc import Callable
from typing import Any

from minitorch.device import device
from minitorch.dtype import ALL_DTYPES, DType
from minitorch.errors import SerializationError
from tracer.fx import Graph, GraphModule, Node
from tracer.fx.node import target_name

SAVED_OPCODES = ("placeholder", "get_attr", "call_function", "output")
_MAX_DEPTH = 32  # nesting of args: deeper is not something a trace produces
_DTYPES = {d.name: d for d in ALL_DTYPES}
_ATTR_PART = re.compile(r"[A-Za-z0-9_]+")


def allowed_functions() -> dict[str, Callable]:
    """Every function a saved graph may call, by the name it is saved under."""
    from minitorch.ops import OPS

    table: dict[str, Callable] = {"operator.getitem": operator.getitem}
    table.update((f"minitorch.ops.{name}", op) for name, op in OPS.items())
    return table


# ---- saving ---------------------------------------------------------------------------------


def graph_to_json(graph: Graph) -> list[dict]:
    """One JSON object per node; refuses what a file cannot name (call_module, lambdas)."""
    functions = allowed_functions()
    nodes = []
    for node in graph.nodes:
        target = node.target
        if node.op not in SAVED_OPCODES:
            raise SerializationError(
                f"cannot save node '{node.name}': {node.op} nodes are not saved (only graphs of "
                "minitorch.ops calls, as minitorch.jit.trace and export.export make them)"
            )
        if node.op == "call_function":
            target = target_name(node.target)
            if functions.get(target) is not node.target:
                raise SerializationError(
                    f"cannot save node '{node.name}': {target} is not in the op table "
                    "(a saved graph may call minitorch.ops.* and operator.getitem only)"
                )
        nodes.append(
            {
                "name": node.name,
                "op": node.op,
                "target": target,
                "args": encode(node.args, node.name),
                "kwargs": {k: encode(v, node.name) for k, v in node.kwargs.items()},
            }
        )
    return nodes


def encode(value: Any, where: str) -> Any:
    """`value` as JSON data, tagged as in the module docstring."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, Node):
        return {"node": value.name}
    if isinstance(value, tuple):  # namedtuples too
        return [encode(v, where) for v in value]
    if isinstance(value, list):
        return {"list": [encode(v, where) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {k: encode(v, where) for k, v in value.items()}}
    if isinstance(value, slice):
        return {"slice": [encode(v, where) for v in (value.start, value.stop, value.step)]}
    if isinstance(value, DType):
        return {"dtype": value.name}
    if isinstance(value, device):
        return {"device": value.type}
    if value is Ellipsis:
        return {"ellipsis": None}
    raise SerializationError(
        f"cannot save node '{where}': an argument of type "
        f"{type(value).__name__} ({value!r:.60}) is not plain data"
    )


# ---- loading --------------------------------------------------------------------------------


def graph_from_json(nodes: Any, tensor_names: set[str]) -> Graph:
    """Rebuild a Graph from `nodes`, checking every field; SerializationError on the first bad one.

    `tensor_names` are the tensors the file holds: the only things get_attr may read.
    """
    _expect(isinstance(nodes, list) and nodes, "'nodes' must be a non-empty list")
    functions = allowed_functions()
    graph = Graph()
    made: dict[str, Node] = {}  # name in the file -> rebuilt node
    for i, entry in enumerate(nodes):
        _expect(
            isinstance(entry, dict) and set(entry) == {"name", "op", "target", "args", "kwargs"},
            f"node #{i} must be an object with keys name, op, target, args, kwargs",
        )
        name, op, target = entry["name"], entry["op"], entry["target"]
        _expect(_is_identifier(name), f"node #{i}: name {name!r:.60} is not an identifier")
        _expect(name not in made, f"node #{i}: two nodes are named {name!r}")
        _expect(
            op in SAVED_OPCODES,
            f"node '{name}': op {op!r:.60} is not one of {', '.join(SAVED_OPCODES)}",
        )
        _expect(
            isinstance(entry["args"], list) and isinstance(entry["kwargs"], dict),
            f"node '{name}': args must be a list and kwargs an object",
        )
        args = tuple(decode(a, made, name) for a in entry["args"])
        kwargs = {}
        for key, value in entry["kwargs"].items():
            _expect(_is_identifier(key), f"node '{name}': keyword {key!r:.60} is not an identifier")
            kwargs[key] = decode(value, made, name)
        if op == "placeholder":
            _expect(
                _is_identifier(target) and not args and not kwargs,
                f"node '{name}': a placeholder's target must be an identifier, without args",
            )
            made[name] = graph.placeholder(target)
        elif op == "get_attr":
            _expect(
                isinstance(target, str) and target in tensor_names and not args,
                f"node '{name}': get_attr reads {target!r:.60}, which is not one of the "
                "file's tensors",
            )
            made[name] = graph.get_attr(target)
        elif op == "call_function":
            _expect(
                isinstance(target, str) and target in functions,
                f"node '{name}': target {target!r:.80} is not allowed (a saved graph may "
                "call minitorch.ops.* and operator.getitem only)",
            )
            made[name] = graph.call_function(functions[target], args, kwargs)
        else:
            _expect(
                i == len(nodes) - 1 and len(args) == 1 and not kwargs,
                "the output node must come last and hold one value",
            )
            made[name] = graph.output(args[0])
    _expect(nodes[-1]["op"] == "output", "the graph has no output node")
    graph.lint()
    return graph


def decode(value: Any, made: dict[str, Node], where: str, depth: int = 0) -> Any:
    """The Python value that `encode` wrote as `value`; node refs must be defined earlier."""
    _expect(depth < _MAX_DEPTH, f"node '{where}': arguments nested too deeply")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return tuple(decode(v, made, where, depth + 1) for v in value)
    _expect(
        isinstance(value, dict) and len(value) == 1,
        f"node '{where}': an argument {value!r:.60} is not a tagged value",
    )
    ((tag, inner),) = value.items()
    if tag == "node":
        _expect(
            isinstance(inner, str) and inner in made,
            f"node '{where}' reads {inner!r:.60}, which is not an earlier node",
        )
        return made[inner]
    if tag == "float" and inner in ("inf", "-inf", "nan"):
        return float(inner)
    if tag == "list" and isinstance(inner, list):
        return [decode(v, made, where, depth + 1) for v in inner]
    if tag == "dict" and isinstance(inner, dict):
        return {k: decode(v, made, where, depth + 1) for k, v in inner.items()}
    if tag == "slice" and isinstance(inner, list) and len(inner) == 3:
        return slice(*(decode(v, made, where, depth + 1) for v in inner))
    if tag == "dtype" and isinstance(inner, str) and inner in _DTYPES:
        return _DTYPES[inner]
    if tag == "device" and inner in ("cpu", "cuda"):
        return device(inner)
    if tag == "ellipsis" and inner is None:
        return Ellipsis
    raise SerializationError(f"node '{where}': unknown argument {value!r:.80}")


def check_attr_name(name: Any) -> None:
    """A tensor's dotted name must be plain words that GraphModule can own."""
    ok = isinstance(name, str) and name != ""
    for part in name.split(".") if ok else ():
        # NOTE: a part that names a Module attribute (forward, training, __dict__) would
        # replace it; a real model's parameters never do.
        ok = (
            ok
            and _ATTR_PART.fullmatch(part) is not None
            and not part.startswith("__")
            and not hasattr(GraphModule, part)
            and part not in _MODULE_FIELDS
        )
    _expect(ok, f"tensor name {name!r:.60} is not a dotted path of plain names")


_MODULE_FIELDS = {
    "training",
    "meta",
    "_graph",
    "_code",
    "_class_name",
    "_parameters",
    "_buffers",
    "_modules",
    "_non_persistent_buffers",
}


def _is_identifier(name: Any) -> bool:
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def _expect(ok: bool, message: str) -> None:
    if not ok:
        raise SerializationError(message)
