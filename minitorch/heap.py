"""The C heap keeps freed memory mapped, so that a training step does not page-fault.

[Note: the C heap's page faults]
numpy takes every array's memory from the C library's malloc. glibc serves a block of 128 KiB
or more with a mapping of its own and unmaps it when it is freed, and hands the free memory at
the top of its heap back to the OS once more than 128 KiB lie there. A training step allocates
the same sizes as the step before (activations, gradients, matmul outputs), so each step maps
those pages again, and the OS zeroes each 4 KiB page on first touch: the MLP train step of
benchmarks/train_step.py took ~820 page faults per step, about a millisecond of its ~4.

glibc raises both thresholds by itself as it sees big blocks freed (its "dynamic mmap
threshold"), up to 32 MiB for a mapping and twice that for the heap's top; a training loop
whose blocks are all smaller keeps crossing the lower values on the way. We start where that
heuristic ends: blocks under 32 MiB come from the heap, and up to 64 MiB of free heap stays
mapped. Larger arrays still get mappings of their own, given back when freed (the caching
allocator in codegen/allocator.py keeps those for compiled code).

Only glibc has `mallopt`; elsewhere (musl, macOS) this does nothing.
"""

from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD = -1  # free bytes at the heap's top beyond which they go back to the OS
M_MMAP_THRESHOLD = -3  # blocks this large or larger get a mapping of their own

MMAP_THRESHOLD = 32 << 20  # glibc's own ceiling for the dynamic threshold on 64-bit
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # the trim threshold glibc pairs with it


def keep_freed_memory_mapped() -> bool:
    """Set glibc's thresholds ([Note: the C heap's page faults]); False if there is no glibc."""
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
