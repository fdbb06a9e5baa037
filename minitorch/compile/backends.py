"""The backends `minitorch.compile(f, backend=NAME)` accepts, and how to add one.

    "eager"        capture only: run the captured graph's Python code (tracer/dynamo)
    "aot_eager"    AOT autograd, then run the forward and backward graphs' code
    "inductor"     AOT autograd, the loop-level IR, and the default code generator for the
                   inputs' device (inductor.py; codegen/registry.py picks it)
    "llvm", "cuda", "interpreter", "numpy", ...   the same, with that code generator (its
                   device must be the inputs')

    register_backend("mine", MyBackend())      # a codegen.backend.Backend: "mine" compiles
                                               # through the loop IR with it
    register_backend("count", my_function)     # a function backend(gm, example_inputs)

A name is registered once. Every code generator of codegen/registry.py is also a backend here,
under its own name.
"""

from __future__ import annotations

from collections.abc import Callable

from codegen import registry as codegen_registry
from codegen.backend import Backend
from minitorch.compile.inductor import AOTEagerCompiler, InductorCompiler
from minitorch.errors import CompileError
from tracer.dynamo.compiler import EAGER, GraphCompiler, as_compiler

_COMPILERS: dict[str, GraphCompiler] = {
    "eager": EAGER,
    "aot_eager": AOTEagerCompiler(),
    "inductor": InductorCompiler(),
}


def lookup_backend(backend: str | Callable | GraphCompiler) -> GraphCompiler:
    """The compiler for a backend name, or `backend` itself as a GraphCompiler."""
    if not isinstance(backend, str):
        return as_compiler(backend)
    if backend not in _COMPILERS:
        if backend not in codegen_registry.backend_names():
            raise CompileError(
                f"unknown backend {backend!r}; expected one of {list_backends()} or a "
                "function backend(gm, example_inputs)"
            )
        # setdefault: two threads naming a new backend at once share one compiler, so that
        # their cache entries match each other's
        _COMPILERS.setdefault(
            backend, InductorCompiler(codegen_registry.get_backend(backend), backend)
        )
    return _COMPILERS[backend]


def register_backend(name: str, backend: Backend | GraphCompiler | Callable) -> None:
    """Make `minitorch.compile(f, backend=name)` use `backend`: a code generator (a
    codegen.backend.Backend, run by the whole pipeline), a GraphCompiler, or a function
    backend(gm, example_inputs) -> callable that gets each captured graph."""
    if name in list_backends():
        raise CompileError(f"a backend named {name!r} is already registered")
    if isinstance(backend, Backend):
        codegen_registry.register_backend(backend, name)
        return
    if not callable(backend) and not isinstance(backend, GraphCompiler):
        raise CompileError(
            f"register_backend({name!r}, ...): expected a codegen Backend, a "
            f"GraphCompiler or a function, got {type(backend).__name__}"
        )
    _COMPILERS[name] = as_compiler(backend)


def list_backends() -> list[str]:
    """Every name `minitorch.compile(f, backend=...)` accepts."""
    return sorted(set(_COMPILERS) | set(codegen_registry.backend_names()))
