"""`GraphModule`: an nn.Module whose forward is Python code generated from a Graph.

gm = GraphModule(root, graph)   # copies the submodules/attributes the graph reads
gm.code                         # the generated forward, as text
gm(x)                           # runs it
gm.graph ...edit... ; gm.recompile()
"""

from __future__ import annotations

import itertools
import linecache
import os
import types
from typing import Any

from minitorch import config
from minitorch.nn.module import Module
from tracer.fx.graph import Graph, GraphLintError

# Numbers each generated forward's filename. `next` on a count is one step under the GIL, so
# two threads recompiling at once never share a filename (and so never each other's linecache
# source in a traceback), which `+= 1` on a global int would not promise.
_compiled_count = itertools.count(1)


class GraphModule(Module):
    """A Module built from `root`'s attributes and a Graph; `forward` is generated code."""

    def __init__(
        self, root: Module | dict[str, Any], graph: Graph, class_name: str = "GraphModule"
    ) -> None:
        super().__init__()
        object.__setattr__(self, "_class_name", class_name)
        for node in graph.nodes:
            if node.op in ("get_attr", "call_module"):
                _copy_attr(root, self, node.target)
        if isinstance(root, Module):
            object.__setattr__(self, "training", root.training)
        self.meta: dict[str, Any] = {}  # free-form, e.g. 'name': what the walkthrough calls it
        self.graph = graph

    @property
    def graph(self) -> Graph:
        return self._graph

    @graph.setter
    def graph(self, graph: Graph) -> None:
        object.__setattr__(self, "_graph", graph)
        # NOTE: the code is generated when first asked for (`code`, `forward`), not here: most
        # graphs the compiler makes are lowered to kernels and never run as Python.
        self.__dict__.pop("_generated", None)

    @property
    def code(self) -> str:
        return self._generate()[0]

    @property
    def forward(self) -> Any:
        """The generated forward, bound to this module."""
        return self._generate()[1]

    def recompile(self) -> str:
        """Regenerate `forward` from the (possibly edited) graph."""
        self.__dict__.pop("_generated", None)
        return self.code

    def _generate(self) -> tuple[str, Any]:
        """(source, bound forward), generated from the graph once per change of graph."""
        generated = self.__dict__.get("_generated")
        if generated is not None:
            return generated
        from tracer.fx.python_code import python_code

        code = python_code(self._graph, "self")
        # Register the source with linecache so tracebacks show the generated line.
        filename = f"<fx-generated {self._class_name} #{next(_compiled_count)}>"
        linecache.cache[filename] = (len(code.source), None, code.source.splitlines(True), filename)
        namespace = dict(code.globals)
        exec(compile(code.source, filename, "exec"), namespace)  # noqa: S102
        generated = (code.source, types.MethodType(namespace["forward"], self))
        object.__setattr__(self, "_generated", generated)
        return generated

    def print_readable(self, print_output: bool = True) -> str:
        """The module as a class definition, with each input's shape and dtype when known."""
        params = []
        for node in self._graph.nodes:
            if node.op != "placeholder":
                continue
            val = node.meta.get("val")
            param = node.name
            if hasattr(val, "shape") and hasattr(val, "dtype"):
                param += f': "{_short_dtype(val.dtype)}{list(val.shape)}"'
            if node.args:  # the input's default value
                param += f" = {node.args[0]!r}"
            params.append(param)
        first, rest = self.code.split("\n", 1)
        code = f"def forward({', '.join(['self', *params])}):\n{rest}"
        body = "\n".join("    " + line if line else line for line in code.splitlines())
        text = f"class {self._class_name}(minitorch.nn.Module):\n{body}\n"
        if print_output:
            print(text)
        return text

    def save(self, f: str | os.PathLike) -> None:
        """Write the graph and its tensors to the file `f`, without pickle; see minitorch.jit.load.

        Only graphs of minitorch.ops calls can be saved (what jit.trace and export make):
        the file names each function, and loading resolves names only in the op table.
        """
        from tracer.export.serialize import save

        save(self, f)

    def __repr__(self) -> str:
        return f"{self._class_name}()\n\n{self.code}"


def lint_after(stage: str, gm: GraphModule, name: str | None = None) -> None:
    """With config.check on (MINITORCH_CHECK=1), lint the graph that `stage` just made.

    A broken graph raises GraphLintError naming the stage, the graph (`name`, else its
    meta's) and what is wrong, with the graph printed:
    `after capture, graph 'f': node sin uses pow_2 before it is defined`.
    """
    if not config.check:
        return
    try:
        gm.graph.lint()
    except GraphLintError as error:
        name = name or gm.meta.get("name", "graph")
        raise GraphLintError(f"after {stage}, graph {name!r}: {error}\n{gm.graph}") from None


def _short_dtype(dtype) -> str:
    return {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64", "bool": "b8"}.get(
        dtype.name, dtype.name
    )


def _copy_attr(root: Module | dict[str, Any], gm: Module, target: str) -> None:
    """Copy root.<target> (a dotted path) into gm at the same path."""
    *path, leaf = target.split(".")
    if isinstance(root, dict):
        value = root[target]
    else:
        value = root
        for part in target.split("."):
            value = getattr(value, part)
    owner: Module = gm
    for part in path:
        child = owner.__dict__.get("_modules", {}).get(part)
        if child is None:
            child = Module()
            owner.add_module(part, child)
        owner = child
    if isinstance(value, Module):
        owner.add_module(leaf, value)
    elif type(value).__name__ == "Tensor" and not isinstance(root, dict):
        owner.register_buffer(leaf, value)
    else:
        setattr(owner, leaf, value)
