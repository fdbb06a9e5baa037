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
    inductor.py     the driver: the passes from a captured graph to compiled kernels, as one
                    list (compile_fx), at static sizes: the core
    wrapper.py      CompiledGraph: runs a compiled graph's kernels and extern steps
    output_code.py  ... as one generated Python function: the wrapper's code
    layouts.py      outputs in eager's memory layout (eager asked once, at compile time)
    shapes.py       size symbols' binding; compiling again per shape where needed
    symbolic_sizes.py  an extra: one version for every size of a dynamic dim
    graph_cache.py  an extra: a compiled graph kept whole on disk, loaded by the next process
    direct_externs.py  an extra: extern steps that call their op's eager kernel, not dispatch
    modes.py        compile(mode=, options=): PyTorch's presets, checked as PyTorch does
    ptx.py          the `ptx` stage: each graph's kernels also compiled (only) for the GPU
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
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable = "inductor",  # a name (backends.py) or backend(gm, inputs)
    mode: str | None = None,
    options: dict[str, str | int | bool] | None = None,
    disable: bool = False,
):
    """Capture `model`'s bytecode into graphs on its first call and run them through `backend`.

    Returns a function (or, for an `nn.Module`, an OptimizedModule that forwards every other
    attribute to the model) that checks guards on each call and reuses the compiled code while
    they hold. Used bare or as `@minitorch.compile(...)`.

    fullgraph  True: a graph break is a CompileError instead of a split graph
    dynamic    None: sizes become dynamic once they change; True: from the start; False: never
    backend    "inductor" (the whole pipeline), "eager", "aot_eager", a code generator's name,
               or a function backend(gm, example_inputs)
    mode       "default", "reduce-overhead", "max-autotune" or "max-autotune-no-cudagraphs",
               accepted as PyTorch's; our backends compile the same code for each (modes.py)
    options    the options a mode stands for, one by one (not together with `mode`)
    disable    True: return `model` itself, uncompiled
    """
    from minitorch import config
    from minitorch.compile.backends import lookup_backend
    from tracer.dynamo import optimize
    from tracer.dynamo.optimized_module import OptimizedModule

    backend = config.force_backend or backend
    if model is None:
        return lambda fn: compile(
            fn,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
        )
    compiler = lookup_backend(_with_mode(backend, mode, options))  # an unknown name fails here
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(
            model, optimize(model.forward, backend=compiler, fullgraph=fullgraph, dynamic=dynamic)
        )
    return optimize(model, backend=compiler, fullgraph=fullgraph, dynamic=dynamic)


def _with_mode(backend: str | Callable, mode: str | None, options: dict | None) -> str | Callable:
    """`backend`, after checking `mode` and `options` as PyTorch does: against the presets for
    our own backends, while a function backend is handed them (modes.py)."""
    from minitorch.compile.modes import BackendWithOptions, check_one_of, compile_options
    from tracer.dynamo.compiler import GraphCompiler

    if isinstance(backend, (str, GraphCompiler)):
        compile_options(mode, options)  # raises for an unknown mode or option
        return backend
    check_one_of(mode, options)
    if mode in (None, "default") and not options:
        return backend
    items = None if options is None else tuple(options.items())
    return BackendWithOptions(backend, mode, items)


def reset() -> None:
    """Drop the kernels every code generator has compiled and cached (the LLVM JIT's machine
    code, codegen/llvm/jit.py); kernels of compiled functions still alive keep working.
    `minitorch._dynamo.reset()` calls it after forgetting the compiled frames."""
    from codegen import registry

    registry.clear_caches()
