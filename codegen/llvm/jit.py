"""Turn LLVM IR text into machine code for this CPU, and machine code into Python callables.

[Note: the JIT pipeline]
    IR text --parse--> module --verify--> O3 passes --MCJIT--> machine code --ctypes--> callable

1. The target machine describes *this* CPU: the process triple, the host CPU's name and its
   feature list (avx2, fma, ...), at opt level 3. A generic x86-64 machine would not know
   that `llvm.fma` and `llvm.rint` are single instructions here; it turns them into libm calls
   and a vectorizable kernel runs ~60x slower.
2. The optimizer is LLVM's new pass manager running the standard O3 pipeline with the loop
   and SLP vectorizers, interleaving and unrolling on. Our kernels are written as plain scalar
   loops; this is the step that makes them use 8- or 16-wide vector registers.
3. MCJIT compiles the optimized module to machine code in memory. The code lives exactly as
   long as its execution engine, so `JitModule` keeps the engine and hands out callables.
4. A compile cache: the same IR text on the same CPU always gives the same machine code, so a
   process compiles each distinct kernel once.

[Note: the JIT's memory]
Machine code is memory outside Python's heap (a compiled kernel holds ~1.3 MB: its execution
engine, code pages, the optimized module MCJIT keeps, LLVM's types and constants), freed only
when its execution engine is. So each module gets its own LLVM context, which dies with it, and the
compile cache holds at most `CACHE_LIMIT` modules, dropping the least recently used; and
`clear_cache()` (called by `minitorch._dynamo.reset()`) drops them all. Dropping a module from
the cache frees nothing that is still in use: every callable `function()` hands out keeps its
JitModule alive, and so does every compiled kernel (codegen/llvm/backend.py), so the machine
code lives exactly as long as something can still jump into it.

[Note: the JIT and threads]
LLVM's compiler is not safe to run from two threads at once, and the cache is a shared dict.
One lock serializes every compile (`_lock`, re-entrant so that compiling the trig library from
inside a kernel's compile works) and every change to the cache. Calling compiled code takes no
lock: ctypes releases the GIL and kernels run in parallel.
"""

from __future__ import annotations

import ctypes
import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import llvmlite
import llvmlite.binding as llvm

from minitorch.errors import CompileError

# How many compiled modules the compile cache keeps ([Note: the JIT's memory]). A kernel of a
# live compiled function stays valid after it leaves the cache; the limit only bounds how
# much code a process holds for kernels that nothing uses any more.
CACHE_LIMIT = 128

_lock = threading.RLock()  # see [Note: the JIT and threads]


@functools.cache
def host_description() -> tuple[str, str, str, str]:
    """What machine code depends on besides the IR: (triple, CPU name, CPU features, llvmlite).

    ('x86_64-unknown-linux-gnu', 'znver3', '+64bit,+adx,+aes,...,+avx2,...', '0.50.0')
    """
    return (
        llvm.get_process_triple(),
        llvm.get_host_cpu_name(),
        llvm.get_host_cpu_features().flatten(),
        llvmlite.__version__,
    )


@functools.cache
def _initialize_llvm() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def host_target_machine() -> llvm.TargetMachine:
    """A new LLVM target machine for the CPU this process runs on, optimizing at -O3.

    NOTE: new on every call, because an MCJIT engine takes ownership of its target machine
    and frees it with itself; two engines sharing one would crash after the first is freed.
    """
    with _lock:  # initialize once, even when two threads compile their first kernels at once
        _initialize_llvm()
    triple, cpu, features, _ = host_description()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu, features=features, opt=3, jit=True)


def optimize(module: llvm.ModuleRef, target_machine: llvm.TargetMachine) -> None:
    """Run LLVM's O3 pipeline, vectorizers included, over `module` in place."""
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True  # turn scalar loops into vector loops
    options.slp_vectorization = True  # pack independent scalar ops into vector ops
    options.loop_interleaving = True  # several vector iterations in flight at once
    options.loop_unrolling = True
    passes = llvm.create_pass_builder(target_machine, options)
    passes.getModulePassManager().run(module, passes)


class JitModule:
    """One LLVM module compiled to machine code; its functions stay valid while this lives.

        jit = JitModule(ir_text)
        add = jit.function("add", ctypes.c_double, ctypes.c_double, ctypes.c_double)
        add(1.0, 2.0)   # 3.0

    `source` is the IR as given; `optimized_source` the IR after O3 (what became machine code).
    """

    def __init__(self, ir_text: str) -> None:
        with _lock:
            self._compile(ir_text)

    def _compile(self, ir_text: str) -> None:
        target_machine = host_target_machine()
        try:
            # Its own context: LLVM's types and constants are freed with the module.
            context = llvm.create_context()
            module = llvm.parse_assembly(ir_text, context=context)
            module.verify()
        except RuntimeError as error:
            raise CompileError(f"LLVM rejected the generated IR: {error}") from error
        # The optimizer's cost model needs the real data layout and triple to pick vector widths.
        module.triple = target_machine.triple
        module.data_layout = str(target_machine.target_data)
        optimize(module, target_machine)
        self.source = ir_text
        self.optimized_source = str(module)
        self._target_machine = target_machine
        self._module = module
        self._engine = llvm.create_mcjit_compiler(module, target_machine)
        # NOTE: the engine (which owns the module) must be freed before the context: a
        # finalizer holds both and frees them in that order, whatever order the garbage
        # collector finds them in.
        weakref.finalize(self, _free, self._engine, context)
        self._engine.finalize_object()

    def address(self, name: str) -> int:
        """The address of the compiled function `name`."""
        address = self._engine.get_function_address(name)
        if not address:
            raise CompileError(f"the compiled module has no function named {name!r}")
        return address

    def function(self, name: str, restype: Any, *argtypes: Any) -> Callable[..., Any]:
        """The compiled function `name` as a ctypes callable (it releases the GIL while it runs)."""
        prototype = ctypes.CFUNCTYPE(restype, *argtypes)
        callable_ = prototype(self.address(name))
        callable_._jit_module = self  # NOTE: the machine code dies with the engine; pin it.
        return callable_

    def assembly(self) -> str:
        """The machine code as assembly text, for reading what the vectorizer did."""
        return self._target_machine.emit_assembly(self._module)


def _free(engine: llvm.ExecutionEngine, context: llvm.ContextRef) -> None:
    engine.close()  # the machine code, the module and the target machine
    context.close()


# The compile cache: (IR text, *host_description()) -> compiled module, least recently used
# first.
_compiled: OrderedDict[tuple[str, ...], JitModule] = OrderedDict()


def compile_ir(ir_text: str) -> JitModule:
    """Compile LLVM IR text for this CPU, once per process for each distinct text (while it
    stays among the CACHE_LIMIT most recently used)."""
    key = (ir_text, *host_description())
    with _lock:
        if key in _compiled:
            _compiled.move_to_end(key)
            return _compiled[key]
        # NOTE: store only after compiling succeeded, so a failure leaves no broken entry.
        jit = _compiled[key] = JitModule(ir_text)
        while len(_compiled) > CACHE_LIMIT:
            _compiled.popitem(last=False)  # freed when no kernel uses it any more
        return jit


def clear_cache() -> None:
    """Forget every compiled module; each is freed once no kernel or callable uses it."""
    with _lock:
        _compiled.clear()


def cached_modules() -> int:
    """How many compiled modules the cache holds."""
    return len(_compiled)
