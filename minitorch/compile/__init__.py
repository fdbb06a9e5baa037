"""`minitorch.compile(fn)`: the entry to the whole pipeline.

This package is also the walkthrough CLI: `python -m minitorch.compile examples/sincos.py`
(see __main__.py). `minitorch.compile` the *function* is re-exported by `minitorch/__init__.py`;
`python -m` finds the package through `sys.modules`, so both work.

    compiled = minitorch.compile(f)                 # backend="inductor": the full pipeline
    compiled = minitorch.compile(f, backend="eager")      # capture only, run the fx graph
    compiled = minitorch.compile(f, backend=my_backend)   # my_backend(gm, example_inputs)
"""

from __future__ import annotations

from collections.abc import Callable

from minitorch.nn.module import Module


def compile(
    model: Callable | None = None,
    *,
    backend: str | Callable = "inductor",
    fullgraph: bool = False,
    dynamic: bool | None = None,
):
    """Capture `model`'s bytecode into graphs on its first call and run them through `backend`.

    Returns a function (or, for an `nn.Module`, a module) that checks guards on each call and
    reuses the compiled code while they hold. Used bare or as `@minitorch.compile(...)`.
    """
    from minitorch import config
    from tracer.backends import lookup_backend
    from tracer.dynamo import optimize

    backend = config.force_backend or backend
    if model is None:
        return lambda fn: compile(fn, backend=backend, fullgraph=fullgraph, dynamic=dynamic)
    lookup_backend(backend)  # an unknown backend name fails here, not on the first call
    if isinstance(model, Module):
        return OptimizedModule(model, optimize(model.forward, backend=backend,
                                               fullgraph=fullgraph, dynamic=dynamic))
    return optimize(model, backend=backend, fullgraph=fullgraph, dynamic=dynamic)


class OptimizedModule(Module):
    """A compiled module: calls go through the compiled forward; parameters are shared."""

    def __init__(self, orig_mod: Module, compiled_forward: Callable) -> None:
        super().__init__()
        self._orig_mod = orig_mod  # registered as a submodule, so parameters() finds them
        object.__setattr__(self, "_compiled_forward", compiled_forward)

    def forward(self, *args, **kwargs):
        return self._compiled_forward(*args, **kwargs)
