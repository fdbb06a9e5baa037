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
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from typing import Any

import llvmlite
import llvmlite.binding as llvm

from minitorch.errors import CompileError


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
        target_machine = host_target_machine()
        try:
            module = llvm.parse_assembly(ir_text)
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


# The compile cache: (IR text, *host_description()) -> compiled module.
_compiled: dict[tuple[str, ...], JitModule] = {}


def compile_ir(ir_text: str) -> JitModule:
    """Compile LLVM IR text for this CPU, once per process for each distinct text."""
    key = (ir_text, *host_description())
    if key not in _compiled:
        # NOTE: store only after compiling succeeded, so a failure leaves no broken entry.
        _compiled[key] = JitModule(ir_text)
    return _compiled[key]
