"""The backends `minitorch.compile(fn, backend=...)` accepts.

A backend is any `backend(gm, example_inputs) -> callable`: it receives the GraphModule that
bytecode capture built, and the real tensors of the first call, and returns what to run instead
(called with the graph's inputs, returning the graph's output tuple).

    "eager"      run the captured graph's Python code as is
    "aot_eager"  AOT autograd (joint graph, partition), then run both graphs' code
    "inductor"   AOT autograd, then the loop-level IR and LLVM kernels (codegen/inductor.py)

A backend whose result only works at the example inputs' sizes says so with
`specializes_shapes = True`; for a graph with dynamic dims ([Note: dynamic shapes] in
tracer/dynamo/output_graph.py) it is then compiled lazily once per input shape (`per_shape`),
unless its `compile_dynamic(gm, example_inputs)` gives one size-generic version: "inductor"
does for inference graphs, whose kernels take the dynamic sizes as arguments (codegen/symbolic.py,
[Note: symbolic sizes] in ir/symbolic.py). Any other backend is called once and must handle
every size (as "eager" does).
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


def inductor_dynamic(gm, example_inputs) -> Callable | None:
    """Inductor compiled once for every size of the graph's dynamic dims, or None where it
    cannot be (fallback ops, a size baked into a constant): then `per_shape` compiles per shape."""
    from codegen.symbolic import compile_dynamic

    # Which dims capture left unguarded, per graph input; without it every dim of size >= 2
    # is a symbol (correct either way: the guards still pin what capture specialised).
    return compile_dynamic(gm, example_inputs, getattr(gm, "dynamic_dims", None))


aot_eager.specializes_shapes = True  # AOT autograd traces the joint graph at concrete sizes
inductor.specializes_shapes = True
inductor.compile_dynamic = inductor_dynamic


def per_shape(backend: Callable, gm, example_inputs) -> Callable:
    """One callable that compiles `gm` with `backend` for each new input shape it is called
    with, and runs that version: compiled for `example_inputs` now, other shapes on first use.

        f = per_shape(aot_eager, gm, [x3])   # compiled for x3's shape
        f(x5)                                # compiled again for x5's shape, then cached

    A backend with `compile_dynamic` first gets the chance to compile one version for every
    size (an object with `bind(args)`, None where args do not fit it, and `run(args, sizes)`);
    args no generic version fits get a new one, or, if the backend gives none, a per-shape one.
    """
    def key(inputs) -> tuple:
        return tuple((tuple(t.shape), t.stride()) for t in inputs)

    make_generic = getattr(backend, "compile_dynamic", None)
    generics: list = []  # size-generic versions, each for the sizes its `bind` accepts
    versions: dict = {}

    def compile_for(args) -> Callable:
        # NOTE: tried again for each new shape (a trace and a lowering, cheap next to a
        # compile): a first call whose dynamic dims all have size 1 has nothing to make generic.
        generic = make_generic(gm, list(args)) if make_generic is not None else None
        if generic is not None and generic.bind(args) is not None:
            generics.append(generic)
            return generic
        compiled = versions[key(args)] = backend(gm, list(args))
        return compiled

    compile_for(example_inputs)

    def run(*args):
        for generic in generics:
            sizes = generic.bind(args)
            if sizes is not None:
                return generic.run(args, sizes)  # bound once: not again inside the call
        compiled = versions.get(key(args))
        if compiled is None:
            # NOTE: a generic version may not fit because two dims that shared a symbol (equal
            # sizes in its example) now differ; one from these args gives them a symbol each.
            compiled = compile_for(args)
        return compiled(*args)

    run.versions = versions  # for tests: shape key -> compiled version
    run.generics = generics  # for tests: the size-generic versions
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
