"""Stage 4 of the pipeline: code generation, from fused kernels to something that runs.

Imports only `ir` and the eager core: a code generator never sees a graph.

    backend.py       the Backend protocol a target implements (capabilities, compile_kernel(s))
    registry.py      the code generators by name, and the default one per device
    interpreter.py   the reference interpreter as a backend: the definition, slow
    numpy_source.py  numpy source code, compiled with exec: the course's worked backend
    allocator.py     a caching allocator for the buffers compiled graphs fill
    disk_cache.py    compiled code kept on disk between processes, checked before it is loaded
    llvm/            the CPU backend: LLVM IR through llvmlite, vectorized, multi-threaded
    cuda/            the GPU backend: the same loop bodies as LLVM IR for NVPTX, PTX launched
                     with cupy, and the grid emulated on the CPU (the cuda_emulator backend,
                     tested with no GPU)

The driver that calls them (lower, schedule, compile each kernel, run) is minitorch/compile/.
"""
