"""The backends `minitorch.compile(fn, backend=...)` accepts.

A backend is any `backend(gm, example_inputs) -> callable`: it receives the GraphModule that
bytecode capture built, and the real tensors of the first call, and returns what to run instead
(called with the graph's inputs, returning the graph's output tuple).

    "eager"      run the captured graph's Python code as is
    "aot_eager"  AOT autograd (joint graph, partition), then run both graphs' code
    "inductor"   AOT autograd, then the loop-level IR and LLVM kernels (codegen/inductor.py)
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


BACKENDS: dict[str, Callable] = {"eager": eager, "aot_eager": aot_eager, "inductor": inductor}


def lookup_backend(backend: str | Callable) -> Callable:
    """The backend function for a name, or the callable itself."""
    if callable(backend):
        return backend
    if backend not in BACKENDS:
        raise CompileError(f"unknown backend {backend!r}; expected one of {sorted(BACKENDS)} "
                           "or a callable backend(gm, example_inputs)")
    return BACKENDS[backend]
