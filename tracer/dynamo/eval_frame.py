"""The entry point: `optimize(fn, backend)` and the per-call dispatch through the cache.

[Note: our PEP 523]
CPython's PEP 523 lets C code replace the function that evaluates every frame; TorchDynamo
installs one that, before a frame runs, looks up the frame's code object in its cache, checks
each entry's guards against the frame's locals and globals, and runs the entry's transformed
bytecode (or compiles a new entry). That hook cannot be installed from pure Python (a Python
callback re-enters itself; see docs/04-dynamo.md). So the wrapper that `optimize` returns does
the same thing at the one place we control, the call:

    optimized(*args, **kwargs)
      1. bind the arguments into a frame view: code, f_locals (by parameter name), f_globals
      2. for each entry of cache_for(code), most recently used first: if its guard passes,
         return entry.transformed(f_locals, f_globals)
      3. miss: record why (the first failing guard part), trace and compile a new entry
         (convert_frame.py), put it first, and run it; one thread at a time compiles a
         frame of one code object ([Note: the cache and threads] in cache.py)

What we give up: only the function passed to `optimize` is captured, not every frame it calls
(a real hook sees those too). Tracing makes up for most of it by inlining the calls; where a
call cannot be inlined and the graph breaks there, the transformed code runs that call through
`call_captured`, which does for the callee's frame what the hook would ([Note: breaks inside
inlined calls] in graph_break.py). A frame that runs wholly eagerly (a break inside a loop,
say) has the modules it calls captured on their own, through `nn.Module.__call__`'s
`call_hook`; the plain functions it calls run uncaptured.
"""

from __future__ import annotations

import functools
import inspect
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType, FunctionType, MethodType
from typing import Any

from minitorch import config
from minitorch._logging import compiled_call, log
from minitorch.dispatch import current_mode
from minitorch.errors import CompileError
from minitorch.nn.hooks import call_with_hooks, has_hooks
from minitorch.nn.module import Module, call_hook
from tracer.dynamo import cache as _cache
from tracer.dynamo.cache import CacheEntry, cache_for, existing_cache
from tracer.dynamo.compiler import EAGER, GraphCompiler, as_compiler
from tracer.dynamo.convert_frame import convert_frame, frame_title
from tracer.dynamo.optimized_module import OptimizedModule
from tracer.dynamo.variables.nn_module import MODULE_CALL


@dataclass
class Frame:
    """What a PEP 523 hook is handed, rebuilt from one call."""

    code: CodeType
    f_locals: dict[str, Any]  # arguments by parameter name, and a closure's free variables
    f_globals: dict[str, Any]
    f_builtins: dict[str, Any]


class _Binder:
    """Turns (args, kwargs) into f_locals the way CPython fills a new frame."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self._read()

    def _read(self) -> None:
        """What binding needs from the function. Its code and defaults are attributes anyone
        may assign, so `frame` reads them again when they are other objects than here."""
        fn = self.fn
        code = fn.__code__
        self.code, self.defaults, self.kwdefaults = code, fn.__defaults__, fn.__kwdefaults__
        # The code's own parameters: functools.wraps's __wrapped__ names another function's.
        self.signature = inspect.signature(fn, follow_wrapped=False)
        flags = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
        # Plain positional parameters without defaults: one zip per call (the common case).
        self.simple = not (code.co_flags & flags or code.co_kwonlyargcount or fn.__defaults__)
        self.names = code.co_varnames[: code.co_argcount]
        self.freevars = code.co_freevars
        builtins_ = fn.__globals__.get("__builtins__", __builtins__)
        self.builtins = builtins_ if isinstance(builtins_, dict) else vars(builtins_)

    def bind(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        """The frame's f_locals for this call; `code` is then the function's code now."""
        fn = self.fn
        if (
            fn.__code__ is not self.code
            or fn.__defaults__ is not self.defaults
            or fn.__kwdefaults__ is not self.kwdefaults
        ):
            self._read()
        if self.simple and not kwargs and len(args) == len(self.names):
            f_locals = dict(zip(self.names, args))
        else:
            try:
                bound = self.signature.bind(*args, **kwargs)
            except TypeError:  # a bad call: let CPython raise eager's own TypeError (the body
                self.fn(*args, **kwargs)  # never runs: binding fails first)
                raise
            f_locals = dict(bound.arguments)
            # The defaults as they are now: __kwdefaults__ is a dict, changed in place too.
            for name, param in self.signature.parameters.items():
                if name in f_locals:
                    continue
                if param.kind is param.KEYWORD_ONLY and name in (fn.__kwdefaults__ or {}):
                    f_locals[name] = fn.__kwdefaults__[name]
                elif param.kind is param.VAR_POSITIONAL:
                    f_locals[name] = ()
                elif param.kind is param.VAR_KEYWORD:
                    f_locals[name] = {}
                else:
                    f_locals[name] = param.default
        if self.freevars:
            for name, cell in zip(self.freevars, fn.__closure__ or ()):
                try:
                    f_locals[name] = cell.cell_contents
                except ValueError:  # an empty cell: reading it in the body raises NameError
                    pass
        return f_locals

    def frame(self, f_locals: dict[str, Any]) -> Frame:
        """The frame `bind` made f_locals for."""
        return Frame(self.code, f_locals, self.fn.__globals__, self.builtins)


def optimize(
    fn: Callable,
    backend: GraphCompiler | Callable = EAGER,
    fullgraph: bool = False,
    dynamic: bool | None = None,
) -> Callable:
    """Wrap `fn` so that each call runs a compiled, guarded version of its bytecode.

        compiled = optimize(f, backend=EAGER)   # or any GraphCompiler, or backend(gm, inputs)
        compiled(x)          # first call: trace, compile, run; later calls: check guards, run

    `dynamic`: None compiles static sizes first and, once a size changes, that dim dynamic;
    True makes every dim of every input dynamic from the start; False guards every size
    ([Note: dynamic shapes] in output_graph.py).
    """
    compiler = as_compiler(backend)
    function, bound_self = _function_of(fn)
    binder = _Binder(function)
    code = function.__code__
    f_globals = function.__globals__  # NOTE: a function's globals cannot be replaced

    @functools.wraps(fn)
    def optimized(*args, **kwargs):
        if current_mode() is not None:
            # A tracer is recording (jit.trace, AOT autograd, fake tensors): compiled code would
            # hide its ops from the dispatcher, so run the original and let them be seen.
            return fn(*args, **kwargs)
        f_locals = binder.bind(args if bound_self is None else (bound_self, *args), kwargs)
        cache = cache_for(binder.code)  # the code it has now: `f.__code__ = g.__code__`
        entry = cache.lookup(f_locals, f_globals, compiler, fullgraph, dynamic)
        if entry is None:
            entry = _compile(cache, binder.frame(f_locals), compiler, fullgraph, dynamic)
            if entry is None:
                return _run_eagerly(compiler, dynamic, fn, args, kwargs)
            if entry.transformed is not None:
                compiled_call(fn, optimized, args, kwargs)
        if entry.transformed is None:
            return _run_eagerly(compiler, dynamic, fn, args, kwargs)
        return entry.transformed.fn(f_locals, f_globals)

    optimized._dynamo_code = code
    optimized._dynamo_options = (compiler, fullgraph, dynamic)  # for module_dispatcher
    return optimized


def _compile(
    cache: _cache.CodeCache,
    frame: Frame,
    compiler: GraphCompiler,
    fullgraph: bool,
    dynamic: bool | None = None,
) -> CacheEntry | None:
    """An entry for `frame` at the front of `cache`, or None past the recompile limit (run
    eagerly). One thread at a time compiles a frame of this code ([Note: the cache and
    threads] in cache.py); one that waited may find the entry it needs compiled meanwhile."""
    with cache.compiling:
        entry = cache.lookup(frame.f_locals, frame.f_globals, compiler, fullgraph, dynamic)
        if entry is not None:
            return entry
        return _compile_new(cache, frame, compiler, fullgraph, dynamic)


def _compile_new(
    cache: _cache.CodeCache,
    frame: Frame,
    compiler: GraphCompiler,
    fullgraph: bool,
    dynamic: bool | None,
) -> CacheEntry | None:
    if len(cache.entries) >= config.recompile_limit:
        if fullgraph or not cache.limit_reached:
            reason = cache.miss_reason(
                frame.f_locals, frame.f_globals, compiler, fullgraph, dynamic
            )
            message = (
                f"recompile limit ({config.recompile_limit}) reached, so calls that "
                f"miss the cache run eagerly; the first such miss: {reason}"
            )
            if fullgraph:
                raise CompileError(message)
            cache.limit_reached = True
            cache.fallback_reasons.append(message)
            warnings.warn(f"minitorch.compile: {frame_title(frame)}: {message}", stacklevel=3)
            log("recompiles", frame_title(frame), message)
        return None
    if cache.entries:
        reason = cache.miss_reason(frame.f_locals, frame.f_globals, compiler, fullgraph, dynamic)
        cache.recompile_reasons.append(reason)
        n = len(cache.entries)
        marked = []
        if dynamic is None:  # automatic dynamic shapes: a dim seen with two sizes
            marked = cache.mark_changed_sizes(frame.f_locals, frame.f_globals)
        now_dynamic = f"\nnow dynamic: {', '.join(marked)}" if marked else ""
        log(
            "recompiles",
            frame_title(frame),
            f"recompiling because {reason}{now_dynamic}\n{n} cache entr{'y' if n == 1 else 'ies'}"
            f" before this one, of at most {config.recompile_limit}",
        )
    auto = cache.auto_dynamic if dynamic is None else None
    entry = convert_frame(frame, compiler, fullgraph, dynamic, auto)
    cache.add(entry)
    if entry.fallback_reason is not None:
        cache.fallback_reasons.append(entry.fallback_reason)
    return entry


def call_captured(
    compiler: GraphCompiler, dynamic: bool | None, fn: Callable, /, *args, **kwargs
) -> Any:
    """`fn(*args, **kwargs)`, its own frame captured with `compiler` when it is user code: what
    the eval-frame hook does for a call that a graph break runs for real (graph_break.py)."""
    target = _captured_target(fn)
    if target is None:
        return fn(*args, **kwargs)
    function, bound_self = target
    if bound_self is not None:
        args = (bound_self, *args)
    return _optimized(function, compiler, dynamic)(*args, **kwargs)


def _run_eagerly(
    compiler: GraphCompiler, dynamic: bool | None, fn: Callable, args: tuple, kwargs: dict
) -> Any:
    """Run a frame that was not captured; the modules it calls are captured on their own
    (TorchDynamo's hook, which sees every frame, skips one and still captures its callees)."""
    token = call_hook.set(functools.partial(_captured_module_call, compiler, dynamic))
    try:
        return fn(*args, **kwargs)
    finally:
        call_hook.reset(token)


def _captured_module_call(
    compiler: GraphCompiler, dynamic: bool | None, module: Module, args: tuple, kwargs: dict
) -> Any:
    token = call_hook.set(None)  # its own frame sets it again if it runs eagerly
    try:
        return call_captured(compiler, dynamic, module, *args, **kwargs)
    finally:
        call_hook.reset(token)


# Packages whose functions the hook leaves alone, as TorchDynamo skips torch's own files:
# minitorch's internals run on numpy. (Modules are captured whatever their package: an nn
# layer's forward is user-level code.)
_SKIPPED_PACKAGES = ("minitorch", "tracer", "ir", "codegen", "numpy")


def _captured_target(fn: Callable) -> tuple[FunctionType, object | None] | None:
    """(function, bound self) of a call whose frame is worth capturing; None to call as is."""
    if isinstance(fn, OptimizedModule):  # compiled already: it captures itself
        return None
    if isinstance(fn, Module):  # m(x) is Module.__call__, which calls m.forward(x)
        return module_call_target(fn)
    if hasattr(fn, "_dynamo_code"):  # already compiled: it captures itself
        return None
    if isinstance(fn, MethodType):
        target = _python_function(fn.__func__, fn.__self__)
    else:
        target = _python_function(fn, None)
    if target is None:
        return None
    package = (getattr(target[0], "__module__", None) or "").split(".")[0]
    return None if package in _SKIPPED_PACKAGES else target


def module_call_target(module: Module) -> tuple[FunctionType, object | None] | None:
    """(function, bound self) that `module(*args)` runs now, read as CPython reads it on
    every call ([Note: a module's call is looked up on every call]); None when that is not
    a plain Python function (a builtin, a partial, a generator), or when the call runs forward
    hooks around it: call the module as it is."""
    if _runs_hooks(module):
        return None
    return _forward_target(module)


def _runs_hooks(module: Module) -> bool:
    """Does `module(...)` run forward hooks? Module.__call__ does; an overridden one not."""
    return type(module).__call__ is MODULE_CALL and has_hooks(module)


def _forward_target(module: Module) -> tuple[FunctionType, object | None] | None:
    """module_call_target, hooks aside: type(m).__call__ if overridden, else m.forward."""
    cls = type(module)
    if cls.__call__ is not MODULE_CALL:  # type(m).__call__, never the instance's
        call = inspect.getattr_static(cls, "__call__")
        return _python_function(call, module)
    forward = module.__dict__.get("forward", _NO_FORWARD)
    if forward is _NO_FORWARD:  # the class's forward, bound to the module
        return _python_function(inspect.getattr_static(cls, "forward", None), module)
    if isinstance(forward, MethodType):  # m.forward = other.method
        return _python_function(forward.__func__, forward.__self__)
    return _python_function(forward, None)  # m.forward = a function: called without self


_NO_FORWARD = object()


def module_dispatcher(compiled_forward: Callable) -> Callable:
    """`call(module, args, kwargs)`: what a compiled module (optimized_module.py) runs.

    `compiled_forward` is `optimize(model.forward)`; a call runs it while the model's call
    still runs that function on that model, and otherwise captures what the call runs now,
    with the same backend ([Note: a module's call is looked up on every call]).
    """
    traced_function, traced_self = _function_of(compiled_forward.__wrapped__)
    compiler, fullgraph, dynamic = compiled_forward._dynamo_options

    def call(module: Module, args: tuple, kwargs: dict) -> Any:
        if _runs_hooks(module):  # Module.__call__'s hooks, around the compiled forward
            return call_with_hooks(module, functools.partial(run, module), args, kwargs)
        return run(module, *args, **kwargs)

    def run(module: Module, /, *args, **kwargs) -> Any:
        target = _forward_target(module)
        if target is None:  # not a plain function: run as it is
            if type(module).__call__ is MODULE_CALL:
                return module.forward(*args, **kwargs)
            return module(*args, **kwargs)
        function, bound_self = target
        if function is traced_function and bound_self is traced_self:
            return compiled_forward(*args, **kwargs)  # the common case
        if bound_self is not None:
            args = (bound_self, *args)
        return _optimized(function, compiler, dynamic, fullgraph)(*args, **kwargs)

    return call


def _python_function(fn: Any, bound_self: object | None):
    """A plain function (generators and coroutines are not captured: they would only fall
    back)."""
    if not isinstance(fn, FunctionType) or fn.__code__.co_flags & _NOT_PLAIN:
        return None
    return fn, bound_self


_NOT_PLAIN = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


# function -> {(compiler, dynamic): its optimized wrapper}: made once, not on every call
_optimized_callees: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _optimized(
    function: FunctionType, compiler: GraphCompiler, dynamic: bool | None, fullgraph: bool = False
) -> Callable:
    wrappers = _optimized_callees.setdefault(function, {})
    key = (compiler, dynamic, fullgraph)
    if key not in wrappers:
        wrappers[key] = optimize(function, compiler, fullgraph=fullgraph, dynamic=dynamic)
    return wrappers[key]


def _function_of(fn: Callable) -> tuple[Callable, object | None]:
    """The Python function whose bytecode runs, and the bound self of a method."""
    if isinstance(fn, MethodType):
        return fn.__func__, fn.__self__
    if inspect.isfunction(fn):
        return fn, None
    raise CompileError(
        f"cannot compile {fn!r}: expected a Python function or method, got {type(fn).__name__}"
    )


# ---- looking inside, for tests and the walkthrough ---------------------------------------------


def _code_of(fn: Callable) -> CodeType:
    code = getattr(fn, "_dynamo_code", None)
    if code is not None:
        return code
    return _function_of(fn)[0].__code__


def cache_entries(fn: Callable) -> list[CacheEntry]:
    """The cache entries of `fn`'s code (`fn` original or optimized), most recently used first."""
    cache = existing_cache(_code_of(fn))
    return [] if cache is None else list(cache.entries)


def fallback_reasons(fn: Callable) -> list[str]:
    """Why calls of `fn` ran eagerly: one reason per entry that could not be captured."""
    cache = existing_cache(_code_of(fn))
    return [] if cache is None else list(cache.fallback_reasons)


def recompile_reasons(fn: Callable) -> list[str]:
    """For each recompile of `fn`, the first guard part that failed."""
    cache = existing_cache(_code_of(fn))
    return [] if cache is None else list(cache.recompile_reasons)


def reset() -> None:
    """Forget every compiled function, guard and cache entry."""
    _cache.reset()
