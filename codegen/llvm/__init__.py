"""The LLVM CPU backend. The files, in the order a kernel goes through them:

kernel.py       FusedKernel -> LLVM IR: the loop nest, its loads and stores
ops.py          the ops handler whose values are LLVM registers: running a loop body emits it
loops.py        `with for_range(builder, start, stop) as i:` and friends
reductions.py   how each reduction starts and how a term joins it, per dtype (CUDA's too)
mathlib.py      exp, log and pow as vectorizable polynomials in IR; the Emitter
trig.py         sin and cos: the vectorized fast path, and the trig library for huge x
trig_library.py   the trig library at run time: loaded when a kernel first calls it
pi_reduction.py x mod pi/2 exactly, for every double (the trig library's slow path)
activations.py  tanh, sigmoid and erf, built from mathlib's exp and polynomials
arg_reduction.py  argmax and argmin as two reductions that vectorize
random.py       ops.rand: the counter-based generator in i64 instructions
jit.py          IR (a graph's kernels linked as one module) -> machine code: the caches, loading
compiler.py     the part of it that needs LLVM: link, O3 for this CPU, emit object code; MCJIT
object_loader.py  object code -> callable, without LLVM: our own ELF loader
host.py         what LLVM calls this CPU, kept on disk by a fingerprint of the host
parallel.py     the thread pool that splits a kernel's outermost loop
matmul.py       a register-blocked matmul generated as IR: the lesson of BLAS (not in the pipeline)
attention.py    an extra: attention as one generated kernel, an online softmax between two
                register-tiled products (flash attention); attention_kernel.py compiles and calls it
backend.py      LLVMBackend: all of the above behind codegen.backend.Backend; a graph's
                kernels keyed on disk by their loop IR
"""
