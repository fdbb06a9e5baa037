"""Stage 4 of the pipeline: code generation, from fused kernels to something that runs.

    backend.py    the interface a target implements (Backend, CompiledKernel); how to add one
    inductor.py   the back half of the compiler: lower, schedule, compile each kernel, run
    allocator.py  a caching allocator for the buffers compiled graphs fill
    llvm/         the CPU backend: LLVM IR through llvmlite, vectorized, multi-threaded
"""
