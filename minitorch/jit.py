"""`minitorch.jit`: concrete tracing, as in `torch.jit.trace(f, example_inputs)`.

    >>> f_traced = minitorch.jit.trace(f, minitorch.randn(5, 5, 5))
    >>> f_traced.graph, f_traced.code   # the ops f ran, and the Python code they become
    >>> f_traced.save("traced.pt"); minitorch.jit.load("traced.pt")(x)   # no pickle

Implemented in tracer/jit_trace.py (see [Note: concrete tracing] there) and, for save/load,
tracer/export/serialize.py ([Note: the file format]), imported on first use because tracer is
built on top of minitorch.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minitorch.tensor import Tensor
    from tracer.fx import GraphModule


class TracerWarning(UserWarning):
    """A trace may not generalize: a value it read from a tensor was frozen into it."""


def trace(fn_or_module: Callable, example_inputs: Tensor | tuple) -> GraphModule:
    """Run `fn_or_module(*example_inputs)` once; return the ops it ran as a GraphModule."""
    from tracer.jit_trace import trace as trace_ops

    return trace_ops(fn_or_module, example_inputs)


def save(m: GraphModule, f: str | os.PathLike) -> None:
    """Write a traced module to the file `f`: the same as `m.save(f)`."""
    from tracer.export import save as save_file

    save_file(m, f)


def load(f: str | os.PathLike, map_location=None) -> GraphModule:
    """Read a module that `save` (or `traced.save`) wrote; it runs without the original source.

    A file from `minitorch.export.save` loads too, as its `module()`. `map_location` moves the
    tensors to a device ("cpu", "cuda"); they load on the CPU.
    """
    from tracer.export import ExportedProgram
    from tracer.export import load as load_file

    loaded = load_file(f)
    module = loaded.module() if isinstance(loaded, ExportedProgram) else loaded
    return module.to(map_location) if map_location is not None else module


__all__ = ["TracerWarning", "load", "save", "trace"]
