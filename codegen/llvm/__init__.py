"""The LLVM CPU backend. The files, in the order a kernel goes through them:

kernel.py       FusedKernel -> LLVM IR: the loop nest, its loads and stores
ops.py          the ops handler whose values are LLVM registers: running a loop body emits it
loops.py        `with for_range(builder, start, stop) as i:` and friends
mathlib.py      sin, cos, exp, log and pow as vectorizable polynomials in IR
activations.py  tanh, sigmoid and erf, built from mathlib's exp and polynomials
jit.py          IR -> O3 optimization for this CPU -> machine code -> ctypes callable
parallel.py     the thread pool that splits a kernel's outermost loop
backend.py      LLVMBackend: all of the above behind codegen.backend.Backend
"""
