"""`minitorch.compile(fn)`: the entry to the whole pipeline.

    compiled = minitorch.compile(f)                 # backend="inductor": the full pipeline
    compiled = minitorch.compile(f, backend="eager")      # capture only, run the fx graph
    compiled = minitorch.compile(f, backend="numpy")      # the full pipeline, numpy kernels
    compiled = minitorch.compile(f, backend=my_backend)   # my_backend(gm, example_inputs)

This package is the driver that ties the stages together, above all of them: it hands
`tracer.dynamo` (capture) a compiler for each graph, and that compiler runs AOT autograd, the
loop IR and a code generator. It is imported with `minitorch` (for the `compile` function), so
this file imports the stages lazily, inside `compile`.

    backends.py     the backends by name, register_backend
    inductor.py     the driver: the passes from a captured graph to compiled kernels
    wrapper.py      CompiledGraph: runs a compiled graph's kernels and extern steps
    layouts.py      outputs in eager's memory layout (eager asked once, at compile time)
    shapes.py       size symbols' binding; compiling again per shape where needed
    walkthrough.py  `python -m minitorch.compile script.py` (__main__.py): every stage shown

`minitorch.compile` the *function* is re-exported by `minitorch/__init__.py`; `python -m` finds
the package through `sys.modules`, so both work.
"""

from __future__ import annotations

from collections.abc import Callable

from minitorch.nn.module import Module


def compile(
    model: Callable | None = None,
    *,
    backend: str | Callable = "inductor",  # a name (backends.py) or backend(gm, inputs)
    fullgraph: bool = False,
    dynamic: bool | None = None,
):
    """Capture `model`'s bytecode into graphs on its first call and run them through `backend`.

    Returns a function (or, for an `nn.Module`, a module) that checks guards on each call and
    reuses the compiled code while they hold. Used bare or as `@minitorch.compile(...)`.
    """
    from minitorch import config
    from minitorch.compile.backends import lookup_backend
    from tracer.dynamo import optimize
    from tracer.dynamo.eval_frame import OptimizedModule

    backend = config.force_backend or backend
    if model is None:
        return lambda fn: compile(fn, backend=backend, fullgraph=fullgraph, dynamic=dynamic)
    compiler = lookup_backend(backend)  # an unknown backend name fails here, not on a call
    if isinstance(model, Module):
        return OptimizedModule(model, optimize(model.forward, backend=compiler,
                                               fullgraph=fullgraph, dynamic=dynamic))
    return optimize(model, backend=compiler, fullgraph=fullgraph, dynamic=dynamic)


def reset() -> None:
    """Drop the kernels every code generator has compiled and cached (the LLVM JIT's machine
    code, codegen/llvm/jit.py); kernels of compiled functions still alive keep working.
    `minitorch._dynamo.reset()` calls it after forgetting the compiled frames."""
    from codegen import registry

    registry.clear_caches()
