"""The code that replaces a frame: reload the graph's inputs, call it, rebuild the return value.

For `def f(x): return x.sin() ** 2, x.shape[0]` traced with x of shape (3,), the cache entry
runs this instead of f's bytecode:

    def __transformed_f_0(L, G):
        graph_out = __compiled_fn_0(L['x'])
        return (graph_out[0], 3)

TorchDynamo emits the same thing as *bytecode* (a new code object that CPython runs in place of
the original, through the PEP 523 hook). We cannot install that hook from Python (see
docs/04-dynamo.md), so we generate Python source: it reads the same, shows up in tracebacks,
and is kept as text for printing. Resume functions after a graph break (a later issue) start
in the middle of a function and will need real bytecode; they will be generated next to this.
"""

from __future__ import annotations

import itertools
import linecache
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

import minitorch
from minitorch.dtype import DType
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import ConstantVariable
from tracer.dynamo.variables.tensor import TensorVariable
from tracer.dynamo.variables.tuples import ListVariable, TupleVariable

_counter = itertools.count()


@dataclass
class TransformedCode:
    """The replacement of a frame for one cache entry: `fn(L, G) -> the frame's return value`."""

    name: str  # '__transformed_f_0'
    source: str  # its Python source, for printing
    namespace: dict[str, Any]  # what the source refers to besides L and G
    fn: Callable[[dict, dict], Any] | None = field(default=None, repr=False)

    def finish(self, compiled_fn: Callable | None) -> None:
        """Bind the backend's compiled graph and compile the source."""
        if compiled_fn is not None:
            self.namespace[self.name.replace("__transformed", "__compiled_fn")] = compiled_fn
        filename = f"<{self.name}>"
        linecache.cache[filename] = (len(self.source), None, self.source.splitlines(True),
                                     filename)
        exec(compile(self.source, filename, "exec"), self.namespace)  # noqa: S102
        self.fn = self.namespace[self.name]


def generate_transformed_code(code: CodeType, value: VariableTracker,
                              graph_outputs: list[TensorVariable],
                              input_sources: list[Source], has_graph: bool) -> TransformedCode:
    """The source of the function that returns `value`; raises Unsupported if it cannot."""
    n = next(_counter)
    stem = re.sub(r"\W", "_", code.co_name)  # '<lambda>' -> '_lambda_'
    name = f"__transformed_{stem}_{n}"
    namespace: dict[str, Any] = {"minitorch": minitorch, "sys": sys}  # sys: see source.py
    out_index = {t.node: i for i, t in enumerate(graph_outputs)}
    result = _reconstruct(value, out_index, namespace)
    lines = [f"def {name}(L, G):"]
    if has_graph:
        args = ", ".join(source.name() for source in input_sources)
        lines.append(f"    graph_out = __compiled_fn_{stem}_{n}({args})")
    lines.append(f"    return {result}")
    return TransformedCode(name, "\n".join(lines) + "\n", namespace)


def _reconstruct(v: VariableTracker, out_index: dict, namespace: dict[str, Any]) -> str:
    """A Python expression for `v` at the end of the frame."""
    if isinstance(v, TensorVariable):
        if v.node in out_index:
            return f"graph_out[{out_index[v.node]}]"
        if v.source is not None:
            return v.source.name()  # an input returned as is
        raise Unsupported(f"returning {v.describe()}, which no graph output computes")
    if isinstance(v, ListVariable):
        return "[" + ", ".join(_reconstruct(i, out_index, namespace) for i in v.items) + "]"
    if isinstance(v, TupleVariable) and v.source is not None:
        return v.source.name()  # a tuple of the frame (or a shape): immutable, reload it
    if isinstance(v, TupleVariable):
        items = [_reconstruct(i, out_index, namespace) for i in v.items]
        text = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if v.tuple_type is tuple:
            return text
        if v.tuple_type is minitorch.Size:
            return f"minitorch.Size({text})"
        raise Unsupported(f"returning a {v.tuple_type.__name__}")
    if isinstance(v, ConstantVariable):
        return _literal(v.value, namespace)
    if v.source is not None:
        return v.source.name()  # a value of the frame that tracing only passed along
    raise Unsupported(f"returning {v.describe()}")


def _literal(value: Any, namespace: dict[str, Any]) -> str:
    if value is None or type(value) in (bool, int, str):
        return repr(value)
    if type(value) is float and math.isfinite(value):
        return repr(value)
    if isinstance(value, DType):
        return repr(value)  # minitorch.float32
    name = f"___const_{len(namespace)}"
    namespace[name] = value
    return name
