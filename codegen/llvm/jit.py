"""Turn LLVM IR text into machine code for this CPU, and machine code into Python callables.

[Note: the JIT pipeline]
    IR texts --parse, link--> module --verify--> O3 passes --emit--> object code --load--> callable
                                                                         ^ the kernel cache on disk

1. The target machine describes *this* CPU: the process triple, the host CPU's name and its
   feature list (avx2, fma, ...), at opt level 3. A generic x86-64 machine would not know
   that `llvm.fma` and `llvm.rint` are single instructions here; it turns them into libm calls
   and a vectorizable kernel runs ~60x slower.
2. The optimizer is LLVM's new pass manager running the standard O3 pipeline with the loop
   and SLP vectorizers, interleaving and unrolling on. Our kernels are written as plain scalar
   loops; this is the step that makes them use 8- or 16-wide vector registers.
3. The target machine turns the optimized module into object code: the bytes of an object
   file, as a C compiler writes one. These bytes are what the kernel cache on disk keeps
   ([Note: the kernel cache on disk] in codegen/disk_cache.py), so that a new process loads
   them (well under 1 ms) instead of compiling (5 to 80 ms a kernel).
4. Our own loader links the object code into this process (object_loader.py): it places the
   code in executable memory and resolves its calls (the trig library's functions, by
   name); an object it does not handle goes to LLVM's MCJIT instead. The code lives exactly
   as long as what loaded it, so `JitModule` keeps that and hands out callables.
5. A compile cache in memory: the same IR text on the same CPU always gives the same machine
   code, so a process compiles (or loads) each distinct kernel once.

Steps 1 to 3 are codegen/llvm/compiler.py, the only module that imports LLVM itself.

[Note: a warm start without LLVM]
Importing llvmlite.binding costs ~45 ms, more than a warm start's whole budget (a new process
running sincos from the kernel cache on disk: 20 ms). A process whose kernels all come from
the disk needs none of LLVM: the object code is loaded by object_loader.py, and the host
description that keys the cache is read from the disk by a fingerprint of the host
(codegen/llvm/host.py). So this module imports compiler.py (and LLVM with it) only when it
must: to compile, to print the optimized IR or the assembly, or to hand MCJIT what our loader
refuses.

[Note: the JIT's memory]
Machine code is memory outside Python's heap, freed only when the object that loaded it is
(object_loader.LoadedObject, or MCJIT's engine). The optimized module is not kept: it is
freed, with its own LLVM context (LLVM's types and constants), as soon as its object code is
emitted, and rebuilt only if someone asks to read it (`optimized_source`, `assembly()`).
The compile cache holds at most `CACHE_LIMIT` modules, dropping the least recently used; and
`clear_cache()` (called by `minitorch._dynamo.reset()`) drops them all. Dropping a module
from the cache frees nothing that is still in use: every callable `function()` hands out
keeps its JitModule alive, and so does every compiled kernel (codegen/llvm/backend.py), so
the machine code lives exactly as long as something can still jump into it.

[Note: one module per graph]
A training step has twenty-odd small kernels, and compiling each as a module of its own pays,
every time, what does not depend on its size: a target machine, a pass pipeline set up and
run, an object file emitted and loaded (~2 ms). So `compile_ir` takes the texts of every
kernel of one graph at once and links them into one module (LLVM's IR
linker: the helpers each text defines, `kernel0.body`, `minitorch.exp.float`, are internal,
and the linker renames any two that clash), optimized and emitted once, one entry in the
kernel cache on disk, one load. Kernels from two segments may share a name (`kernel0`), so
in a module of several texts the functions and variables text k exports are renamed
`part<k>.<name>` (`part_symbol`). The MLP's training step compiled ~40% faster this way.

[Note: the JIT and threads]
LLVM's compiler is not safe to run from two threads at once, and the cache is a shared dict.
One lock serializes every compile and load (`_lock`, re-entrant: a lookup in the caches holds
it and compiles inside it) and every change to the cache. Calling compiled code takes no
lock: ctypes releases the GIL and kernels run in parallel.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from codegen import disk_cache
from codegen.llvm import object_loader
from codegen.llvm.host import host_description
from codegen.llvm.object_loader import LoadedObject, UnsupportedObject
from minitorch import _logging, config
from minitorch.errors import CompileError

if TYPE_CHECKING:  # types only: importing LLVM is what a warm start avoids
    import llvmlite.binding as llvm

# How many compiled modules the compile cache keeps ([Note: the JIT's memory]). A kernel of a
# live compiled function stays valid after it leaves the cache; the limit only bounds how
# much code a process holds for kernels that nothing uses any more.
CACHE_LIMIT = 128

_lock = threading.RLock()  # see [Note: the JIT and threads]


def _compiler() -> ModuleType:
    """codegen/llvm/compiler.py, imported on first use ([Note: a warm start without LLVM])."""
    from codegen.llvm import compiler

    return compiler


def disk_key(*parts: str) -> str:
    """The key of compiled code in the cache on disk: `parts` (the IR text), the host, and
    compiler.py's source, which holds everything else the object code depends on (the
    passes, the target machine's options): a change to them must not load code compiled
    without it."""
    return disk_cache.cache_key(*parts, *host_description(), _compiler_source())


@functools.cache
def _compiler_source() -> str:
    return Path(__file__).with_name("compiler.py").read_text()


def add_symbol(name: str, address: int) -> None:
    """Let modules loaded from now on call the function `name` at `address` (the trig
    library's functions, which kernels call by name)."""
    object_loader.add_symbol(name, address)


class JitModule:
    """One LLVM module compiled to machine code; its functions stay valid while this lives.

        jit = JitModule(ir_text)
        add = jit.function("add", ctypes.c_double, ctypes.c_double, ctypes.c_double)
        add(1.0, 2.0)   # 3.0

    `source` is the IR as given; `optimized_source` the IR after O3 (what became machine code).
    `object_code`, when given, is that machine code already compiled (from the cache on disk),
    and `ir_text` may then be a function that makes the text, called only if it is read.
    `loaded_by` says what loaded it: "object_loader", or "MCJIT: <why the loader refused>".
    """

    def __init__(self, ir_text: str | Callable[[], str], object_code: bytes | None = None) -> None:
        self._ir_text = ir_text  # or a function that makes it, when it is dear to make
        self.disk_key: str | None = None  # its entry in the cache on disk, once it has one
        with _lock:
            self.object_code = object_code or compile_object(self.source)
            self._loaded = self._load()

    @functools.cached_property
    def source(self) -> str:
        """The IR text this module was compiled from."""
        return self._ir_text if isinstance(self._ir_text, str) else self._ir_text()

    def _load(self) -> Any:
        """Link the object code into this process: our loader, or MCJIT for what it refuses
        ([Note: loading object code ourselves] in object_loader.py). The code lives and dies
        with what this returns ([Note: the JIT's memory]). With config.object_loader off (an
        extra: [Note: the core and its extras] in config.py) MCJIT loads everything."""
        if not config.object_loader:
            self.loaded_by = "MCJIT: config.object_loader is off"
        else:
            try:
                loaded = LoadedObject(self.object_code)
                self.loaded_by = "object_loader"
                return loaded
            except UnsupportedObject as refused:
                self.loaded_by = f"MCJIT: {refused}"
                _logging.log("kernel_cache", "loading object code with MCJIT", str(refused))
        if config.exact_trig:  # the trig library: the only symbol source ([Note: plain trig])
            object_loader.load_symbol_sources()  # MCJIT finds only what is registered
        return _compiler().McjitObject(
            self.object_code, host_description(), object_loader.registered_symbols()
        )

    def defined_symbols(self) -> dict[str, int] | None:
        """Every global symbol the module defines, name -> address; None where MCJIT loaded
        it (it lists nothing)."""
        return self._loaded.symbols() if isinstance(self._loaded, LoadedObject) else None

    def address(self, name: str) -> int:
        """The address of the compiled function `name`."""
        address = self._loaded.address(name)
        if not address:
            raise CompileError(f"the compiled module has no function named {name!r}")
        return address

    def function(self, name: str, restype: Any, *argtypes: Any) -> Callable[..., Any]:
        """The compiled function `name` as a ctypes callable (it releases the GIL while it runs)."""
        prototype = ctypes.CFUNCTYPE(restype, *argtypes)
        callable_ = prototype(self.address(name))
        callable_._jit_module = self  # NOTE: the machine code dies with its loader; pin it.
        return callable_

    @functools.cached_property
    def optimized_source(self) -> str:
        """The IR after O3, optimized again on first use: the object code is all a module
        keeps, and the pipeline gives the same IR for the same input."""
        return _with_optimized((self.source,), lambda module, machine: str(module))

    def assembly(self) -> str:
        """The machine code as assembly text, for reading what the vectorizer did."""
        return _with_optimized(
            (self.source,), lambda module, machine: machine.emit_assembly(module)
        )


def compile_object(*ir_texts: str) -> bytes:
    """IR texts -> one linked, verified, optimized module -> object code for this CPU (an ELF
    file's bytes on Linux)."""
    with _lock:
        return _compiler().compile_object(host_description(), *ir_texts)


def linked_source(ir_texts: Sequence[str]) -> str:
    """The IR text of `ir_texts` linked into one module ([Note: one module per graph]); one
    text is its own."""
    if len(ir_texts) == 1:
        return ir_texts[0]
    with _lock:
        return _compiler().linked_source(ir_texts)


def optimize(module: llvm.ModuleRef, target_machine: llvm.TargetMachine) -> None:
    """Run LLVM's O3 pipeline, vectorizers included, over `module` in place (compiler.py; the
    CUDA target runs it too, on a module for the GPU)."""
    _compiler().optimize(module, target_machine)


def part_symbol(name: str, part: int, parts: int) -> str:
    """What symbol `name` of text `part` is called in a module linked from `parts` texts."""
    return name if parts == 1 else f"part{part}.{name}"


def _with_optimized(ir_texts: Sequence[str], use: Callable[..., Any]) -> Any:
    """`use(module, target_machine)` on `ir_texts` optimized at O3 (compiler.py)."""
    with _lock:
        return _compiler().with_optimized(host_description(), ir_texts, use)


# The compile cache: (IR texts, *host_description()) -> compiled module, least recently used
# first.
_compiled: OrderedDict[tuple, JitModule] = OrderedDict()


def compile_ir(*ir_texts: str) -> JitModule:
    """Compile LLVM IR texts, linked into one module, for this CPU ([Note: one module per
    graph]): once per process for each distinct tuple of texts (while it stays among the
    CACHE_LIMIT most recently used), and once per machine while the kernel cache on disk
    keeps it ([Note: the kernel cache on disk] in codegen/disk_cache.py)."""
    key = (ir_texts, *host_description())
    with _lock:
        if key in _compiled:
            _compiled.move_to_end(key)
            return _compiled[key]
        # NOTE: store only after compiling succeeded, so a failure leaves no broken entry.
        return _keep(
            key,
            cached_module(
                disk_key(*ir_texts),
                lambda: linked_source(ir_texts),
                lambda: compile_object(*ir_texts),
            ),
        )


def compile_described(
    descriptions: tuple[str, ...], make_texts: Callable[[], Sequence[str]]
) -> JitModule:
    """`compile_ir(*make_texts())`, keyed by `descriptions` of what the texts are made from
    instead of the texts: where the disk has the object code, the IR is never generated
    ([Note: a key made before the IR] in backend.py). The descriptions must determine the
    texts: the caller's part of the key."""
    key = ("described", descriptions, *host_description())
    with _lock:
        if key in _compiled:
            _compiled.move_to_end(key)
            return _compiled[key]
        if not config.disk_cache:  # the core: compile (the disk is an extra)
            object_code = compile_object(*make_texts())
            return _keep(key, JitModule(lambda: linked_source(tuple(make_texts())), object_code))
        disk = disk_cache.cache_key(
            "described", *descriptions, *host_description(), _compiler_source()
        )
        object_code = disk_cache.load(disk)
        if object_code is None:  # NOTE: stored only once it compiled: no broken entry
            object_code = compile_object(*make_texts())
            disk_cache.store(disk, object_code)
        jit = JitModule(lambda: linked_source(tuple(make_texts())), object_code)
        jit.disk_key = disk
        return _keep(key, jit)


def _keep(key: Hashable, jit: JitModule) -> JitModule:
    """`jit`, kept in the compile cache under `key`: the most recently used of CACHE_LIMIT."""
    _compiled[key] = jit
    while len(_compiled) > CACHE_LIMIT:
        _compiled.popitem(last=False)  # freed when no kernel uses it any more
    return jit


def cached_module(
    key: str, make_ir: Callable[[], str], make_object: Callable[[], bytes] | None = None
) -> JitModule:
    """The module stored on disk under `key`, or compiled (`make_object()`, by default
    `make_ir()` compiled) and stored there.

    `make_ir` runs only if someone reads the source: the trig library's key is cheaper than
    its text, and a linked module's text is printed only to be read."""
    with _lock:
        object_code = disk_cache.load(key)
        if object_code is None:
            object_code = make_object() if make_object else compile_object(make_ir())
            disk_cache.store(key, object_code)
        return JitModule(make_ir, object_code)


def module_on_disk(key: str) -> JitModule | None:
    """The module stored on disk under `key` (a `disk_key`), or None if the disk has none. Its
    IR was never kept: it cannot be compiled again, only loaded ([Note: the compiled-graph
    cache] in minitorch/compile/graph_cache.py). A module this process holds already is
    not loaded twice."""
    with _lock:
        for jit in _compiled.values():
            if jit.disk_key == key:
                return jit
        object_code = disk_cache.load(key)
        if object_code is None:
            return None
        jit = JitModule(_no_ir_text, object_code)
        jit.disk_key = key
        return _keep(("on disk", key), jit)


def _no_ir_text() -> str:
    """A module loaded with its whole graph has no IR text to show: it was never made."""
    raise CompileError(
        "this kernel was loaded with its whole graph from the cache on disk, so "
        "its IR was never made in this process; MINITORCH_LOGS=kernels (or "
        "config.disk_cache = False) compiles it here, where it can be read"
    )


def clear_cache() -> None:
    """Forget every compiled module; each is freed once no kernel or callable uses it."""
    with _lock:
        _compiled.clear()


def cached_modules() -> int:
    """How many compiled modules the cache holds."""
    return len(_compiled)
