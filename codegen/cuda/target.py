"""The NVPTX target: LLVM IR for a GPU -> PTX text, with no GPU, no CUDA driver and no cupy.

    ptx = compile_ptx([str(module)])                 # arch="sm_80" by default
    entry_name("kernel0", 0, 1)                      # 'kernel0': its name in the PTX

[Note: PTX from LLVM]
PTX is NVIDIA's virtual assembly: text that the driver (or `ptxas`) assembles into the machine
code of one GPU generation. LLVM's NVPTX target writes it, from the same IR the CPU backend
optimizes, once the module names the triple `nvptx64-nvidia-cuda` and the target machine names
an architecture (`sm_80` is the A100; the PTX version follows from it, 7.0 for sm_80). The
pipeline is the CPU's (codegen/llvm/jit.py) with the last step changed: link the graph's
kernels into one module, run O3, and `emit_assembly` instead of `emit_object`.

Two things differ from the CPU:
- An instruction NVPTX cannot select does not raise: LLVM aborts the process ("Cannot select:
  fsin", which `llvm.sin.f32` without fast-math flags gives). So no IR reaches LLVM before
  `check_intrinsics` has vetted every intrinsic it declares against `SAFE_INTRINSICS`, the
  ones tests/codegen/cuda/test_target.py compiles here in a subprocess, each on every type we
  use it on; anything else is a CompileError naming it. Our kernels use no instruction NVPTX
  lacks (no frem, no fsin: the math library is polynomials, codegen/llvm/mathlib.py).
- Symbols: PTX names allow no '.', so two kernels of one graph linked together are named
  `part0_kernel0`, `part1_kernel0` (`entry_name`), where the CPU's module says `part0.kernel0`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

import llvmlite.binding as llvm

from codegen.llvm import jit
from codegen.llvm.jit import linked_source, optimize, part_symbol
from minitorch.errors import CompileError

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_80"  # the oldest with everything we use; ptxas 13.0 accepts its PTX 7.0

# Every LLVM intrinsic a kernel may declare, by name without its type suffix. Each one is
# compiled for NVPTX on each type we use it on by tests/codegen/cuda/test_target.py.
SAFE_INTRINSICS = frozenset({
    "llvm.fma", "llvm.rint", "llvm.floor", "llvm.fabs", "llvm.copysign", "llvm.sqrt",
    "llvm.minnum", "llvm.maxnum", "llvm.maximum", "llvm.minimum",
    "llvm.smax", "llvm.smin", "llvm.abs", "llvm.fshl", "llvm.fshr", "llvm.assume",
    "llvm.nvvm.read.ptx.sreg.tid.x", "llvm.nvvm.read.ptx.sreg.ctaid.x",
    "llvm.nvvm.read.ptx.sreg.nctaid.x", "llvm.nvvm.shfl.sync.bfly.i32",
    "llvm.nvvm.barrier.cta.sync.aligned.all",
})  # fmt: skip
# NOTE: LLVM's compiler is not safe to run from two threads at once, whichever the target: one
# lock for both, the JIT's ([Note: the JIT and threads] in codegen/llvm/jit.py).
_llvm_lock = jit._lock
_TYPE_SUFFIX = re.compile(r"\.(v\d+)?(f32|f64|i\d+)$")

# Called with (ptx, arch) for every PTX made: how the test suite runs ptxas on all of it.
_observers: list[Callable[[str, str], None]] = []


def observe_ptx(observer: Callable[[str, str], None]) -> None:
    """Call `observer(ptx, arch)` on every PTX that `compile_ptx` makes from now on."""
    _observers.append(observer)


@functools.cache
def _initialize() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def target_machine(arch: str = DEFAULT_ARCH) -> llvm.TargetMachine:
    """An LLVM target machine for NVIDIA GPUs of architecture `arch` ('sm_80', 'sm_90')."""
    if not re.fullmatch(r"sm_\d+a?", arch):
        raise CompileError(f"{arch!r} is not a CUDA architecture (sm_80, sm_90, ...)")
    with _llvm_lock:
        _initialize()
    return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, opt=3)


def entry_name(kernel_name: str, part: int, parts: int) -> str:
    """The PTX name of kernel `kernel_name` of text `part` of `parts` linked together."""
    return part_symbol(kernel_name, part, parts).replace(".", "_")


def check_intrinsics(ir_text: str) -> None:
    """A CompileError if `ir_text` declares an LLVM intrinsic not in SAFE_INTRINSICS: one that
    NVPTX might not select, aborting the process ([Note: PTX from LLVM])."""
    for name in re.findall(r'^declare [^@]*@"?(llvm\.[\w.]+)"?\(', ir_text, re.MULTILINE):
        if _TYPE_SUFFIX.sub("", name) not in SAFE_INTRINSICS and name not in SAFE_INTRINSICS:
            raise CompileError(
                f"the CUDA backend cannot compile {name}: NVPTX may not "
                f"select it (see [Note: PTX from LLVM] in codegen/cuda/target.py)"
            )


def compile_ptx(ir_texts: Sequence[str], arch: str = DEFAULT_ARCH) -> str:
    """The IR texts of one graph's kernels, linked, optimized at O3 for NVPTX, as PTX text;
    kernel k of n is named `entry_name(its name, k, n)` there."""
    for text in ir_texts:
        check_intrinsics(text)
    machine = target_machine(arch)
    text = linked_source(ir_texts)
    with _llvm_lock:
        context = llvm.create_context()
        try:
            module = llvm.parse_assembly(text, context=context)
            try:
                module.triple = TRIPLE
                module.data_layout = str(machine.target_data)
                _rename_entries(module)
                module.verify()
                optimize(module, machine)
                ptx = machine.emit_assembly(module)
            finally:
                module.close()  # NOTE: the module before its context
        finally:
            context.close()
    for observer in _observers:
        observer(ptx, arch)
    return ptx


def _rename_entries(module: llvm.ModuleRef) -> None:
    """Give the kernels names PTX allows: 'part0.kernel0' -> 'part0_kernel0'."""
    for fn in module.functions:
        if not fn.is_declaration and fn.linkage == llvm.Linkage.external:
            fn.name = fn.name.replace(".", "_")
