"""`minitorch._dynamo`: controls of bytecode capture (implemented in tracer/dynamo).

minitorch._dynamo.reset()                       # forget every compiled frame
print(minitorch._dynamo.explain(f)(x))          # graphs, graph breaks, guards of one call
minitorch._dynamo.register_backend("mine", MyBackend())   # then compile(f, backend="mine")
minitorch._dynamo.list_backends()               # every name compile(backend=) accepts
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def reset() -> None:
    """Forget every compiled function, guard and cache entry, and free the compiled kernels
    nothing uses any more."""
    from minitorch.compile import reset as reset_kernels
    from tracer.dynamo import reset as _reset

    _reset()  # the captured frames first: their kernels are then unused
    reset_kernels()


def explain(fn: Callable) -> Callable[..., Any]:
    """`explain(fn)(*args, **kwargs)`: run `fn` once, captured, and return an ExplainOutput.

    out = minitorch._dynamo.explain(f)(minitorch.randn(3))
    out.graph_count, out.graph_break_count, out.break_reasons, out.guards
    """
    from tracer.dynamo.explain import explain as _explain  # tracer imports minitorch: not above

    return _explain(fn)


def register_backend(name: str, backend: Any) -> None:
    """Make `minitorch.compile(f, backend=name)` use `backend`: a code generator (a
    codegen.backend.Backend), or a function backend(gm, example_inputs) -> callable."""
    from minitorch.compile.backends import register_backend as _register

    _register(name, backend)


def list_backends() -> list[str]:
    """Every name `minitorch.compile(f, backend=...)` accepts."""
    from minitorch.compile.backends import list_backends as _list

    return _list()


def __getattr__(name: str) -> Any:
    if name == "ExplainOutput":  # for isinstance checks, without importing tracer at startup
        from tracer.dynamo.explain import ExplainOutput

        return ExplainOutput
    raise AttributeError(f"module 'minitorch._dynamo' has no attribute {name!r}")
