"""`minitorch._dynamo`: controls of bytecode capture (implemented in tracer/dynamo).

    minitorch._dynamo.reset()                       # forget every compiled frame
    print(minitorch._dynamo.explain(f)(x))          # graphs, graph breaks, guards of one call
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def reset() -> None:
    """Forget every compiled function, guard and cache entry."""
    from tracer.dynamo import reset as _reset

    _reset()


def explain(fn: Callable) -> Callable[..., Any]:
    """`explain(fn)(*args, **kwargs)`: run `fn` once, captured, and return an ExplainOutput.

        out = minitorch._dynamo.explain(f)(minitorch.randn(3))
        out.graph_count, out.graph_break_count, out.break_reasons, out.guards
    """
    from tracer.dynamo.explain import explain as _explain  # tracer imports minitorch: not above

    return _explain(fn)


def __getattr__(name: str) -> Any:
    if name == "ExplainOutput":  # for isinstance checks, without importing tracer at startup
        from tracer.dynamo.explain import ExplainOutput

        return ExplainOutput
    raise AttributeError(f"module 'minitorch._dynamo' has no attribute {name!r}")
