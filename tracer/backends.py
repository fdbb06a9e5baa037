"""The backends `minitorch.compile(fn, backend=...)` accepts.

A backend is any `backend(gm, example_inputs) -> callable`: it receives the GraphModule that
bytecode capture built, and the real tensors of the first call, and returns what to run instead
(called with the graph's inputs, returning the graph's output tuple).

    "eager"      run the captured graph's Python code as is
    "aot_eager"  AOT autograd (joint graph, partition), then run both graphs' code
    "inductor"   AOT autograd, then the loop-level IR and LLVM kernels (codegen/inductor.py)

A backend whose result only works at the example inputs' sizes says so with
`specializes_shapes = True`; for a graph with dynamic dims ([Note: dynamic shapes] in
tracer/dynamo/output_graph.py) it is then compiled lazily once per input shape (`per_shape`).
Any other backend is called once and must handle every size (as "eager" does).
"""

from __future__ import annotations

from collections.abc import Callable

from minitorch.errors import CompileError


def eager(gm, example_inputs) -> Callable:
    return gm.forward


def aot_eager(gm, example_inputs) -> Callable:
    from tracer.aot import aot_module

    return aot_module(gm, example_inputs, eager, eager)


def inductor(gm, example_inputs) -> Callable:
    from codegen.inductor import compile_fx
    from tracer.aot import aot_module

    return aot_module(gm, example_inputs, compile_fx, compile_fx)


aot_eager.specializes_shapes = True  # AOT autograd traces the joint graph at concrete sizes
inductor.specializes_shapes = True


def per_shape(backend: Callable, gm, example_inputs) -> Callable:
    """One callable that compiles `gm` with `backend` for each new input shape it is called
    with, and runs that version: compiled for `example_inputs` now, other shapes on first use.

        f = per_shape(inductor, gm, [x3])    # compiled for x3's shape
        f(x5)                                # compiled again for x5's shape, then cached
    """
    def key(inputs) -> tuple:
        return tuple((tuple(t.shape), t.stride()) for t in inputs)

    versions = {key(example_inputs): backend(gm, example_inputs)}

    def run(*args):
        k = key(args)
        compiled = versions.get(k)
        if compiled is None:
            compiled = versions[k] = backend(gm, list(args))
        return compiled(*args)

    run.versions = versions  # for tests: shape key -> compiled version
    return run


BACKENDS: dict[str, Callable] = {"eager": eager, "aot_eager": aot_eager, "inductor": inductor}


def lookup_backend(backend: str | Callable) -> Callable:
    """The backend function for a name, or the callable itself."""
    if callable(backend):
        return backend
    if backend not in BACKENDS:
        raise CompileError(f"unknown backend {backend!r}; expected one of {sorted(BACKENDS)} "
                           "or a callable backend(gm, example_inputs)")
    return BACKENDS[backend]
