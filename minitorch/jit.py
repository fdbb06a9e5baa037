"""`minitorch.jit`: concrete tracing, as in `torch.jit.trace(f, example_inputs)`.

    >>> f_traced = minitorch.jit.trace(f, minitorch.randn(5, 5, 5))
    >>> f_traced.graph, f_traced.code   # the ops f ran, and the Python code they become

Implemented in tracer/jit_trace.py (see [Note: concrete tracing] there), imported on first use
because tracer is built on top of minitorch.
"""

from __future__ import annotations

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


__all__ = ["TracerWarning", "trace"]
