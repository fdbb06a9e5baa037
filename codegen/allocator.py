"""A caching allocator for the buffers compiled code writes.

[Note: caching allocator]
The first write to freshly allocated memory is slow: the OS maps each 4 KiB page on first
touch, so a new 40 MB output costs ~9 ms of page faults on this machine, more than the fused
sin/cos kernel that fills it. A framework that allocates the same sizes call after call (every
training step does) can skip that by keeping freed blocks and handing them out again, which is
what PyTorch's CUDA caching allocator does for cudaMalloc.

Here: `empty(shape, dtype)` returns an ordinary numpy array whose memory comes from a pool of
blocks keyed by byte size. The array is a view of a ctypes object over the block; a
`weakref.finalize` on that object returns the block to the pool when the last view of it dies.
Only large blocks are pooled (small ones are cheap to get from malloc, and the generated
wrapper asks numpy for them directly: `pooled(nbytes)` is decided when it is compiled), and
the pool holds at most `MAX_CACHED_BYTES`, so memory a program stops using goes back to the OS.

A block starts where numpy's malloc puts it (16 bytes into a cache line, often), not on a
64-byte line as PyTorch's CPU allocator aligns. We measured aligning: layernorm's kernel
gained little, and gelu on 1e7 floats ran 15% slower, side by side. Most likely 4K aliasing:
the input, a large numpy array, starts 16 bytes into a page, an aligned output 64 bytes into
one, so a vector load of the input often matches the low 12 address bits of a store to the
output still in flight, and the CPU holds the load back. A large output from the same malloc
starts 16 bytes into its page too.

[Note: huge pages]
A block the pool has never seen still faults in page by page. Linux can back memory with 2 MiB
pages instead (transparent huge pages), 512 times fewer faults, where
/sys/kernel/mm/transparent_hugepage/enabled allows it: `always`, or `madvise` for memory that
asks. With `config.huge_pages` on, a large block is mapped with `mmap`, aligned to 2 MiB, and
asks with `madvise(MADV_HUGEPAGE)`; where the OS says `never` (or has no such call), it is an
ordinary mapping, and everything works the same with small pages.

Whether it pays is the machine's to say, so it is measured, not assumed: on the 2-core VM
this course is developed on (Firecracker, whose host backs guest memory lazily), touching a
fresh 40 MB block took ~55 ms with huge pages against ~9 ms with 4 KiB pages (the OS did give
them: /proc/vmstat's thp_fault_alloc grew, thp_fault_fallback did not). So it is off by
default; on bare metal, where a huge page is one fault instead of 512, try it on.
"""

from __future__ import annotations

import ctypes
import math
import mmap
import threading
import weakref

import numpy as np

from minitorch import config

MIN_POOLED_BYTES = 1 << 20  # smaller arrays come straight from numpy
MAX_CACHED_BYTES = 1 << 30  # free blocks kept for reuse, in total
HUGE_PAGE = 1 << 21  # 2 MiB: with config.huge_pages, blocks this large are mapped for them

_free: dict[int, list[np.ndarray]] = {}  # nbytes -> free raw blocks (uint8 arrays)
_cached_bytes = 0
_lock = threading.Lock()  # threads take and give back blocks at once: one pool, one owner


def pooled(nbytes: int | None) -> bool:
    """Whether a buffer of `nbytes` (None: not known until the call) may come from the pool
    (else: `np.empty`). Never with config.pooled_allocator off: the pool is an extra
    ([Note: the core and its extras] in config.py), and buffers are then numpy's own."""
    return config.pooled_allocator and (nbytes is None or nbytes >= MIN_POOLED_BYTES)


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array, from the pool when it is large."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if not pooled(nbytes):
        return np.empty(shape, dtype)
    block = _take(nbytes)
    owner = (ctypes.c_char * nbytes).from_buffer(block)
    weakref.finalize(owner, _give_back, block)
    return np.frombuffer(owner, dtype=dtype).reshape(shape)


def _take(nbytes: int) -> np.ndarray:
    global _cached_bytes
    with _lock:
        blocks = _free.get(nbytes)
        if blocks:
            _cached_bytes -= nbytes
            return blocks.pop()
    return _new_block(nbytes)


def _new_block(nbytes: int) -> np.ndarray:
    """Fresh memory for a block: mapped for huge pages when it is large enough."""
    if not config.huge_pages or nbytes < HUGE_PAGE or not hasattr(mmap, "MADV_HUGEPAGE"):
        return np.empty(nbytes, np.uint8)
    mapping = mmap.mmap(-1, nbytes + HUGE_PAGE)  # room to start on a 2 MiB boundary
    start = -_address(mapping) % HUGE_PAGE
    try:
        mapping.madvise(mmap.MADV_HUGEPAGE, start, nbytes)
    except OSError:  # a kernel built without huge pages: small ones, then
        pass
    return np.frombuffer(mapping, np.uint8, nbytes, start)


def _address(mapping: mmap.mmap) -> int:
    view = (ctypes.c_char * 1).from_buffer(mapping)
    try:
        return ctypes.addressof(view)
    finally:
        del view  # NOTE: a live export would keep the mapping from ever being closed


def _give_back(block: np.ndarray) -> None:
    global _cached_bytes
    with _lock:
        if _cached_bytes + block.nbytes > MAX_CACHED_BYTES:
            return  # let it go back to the OS
        _free.setdefault(block.nbytes, []).append(block)
        _cached_bytes += block.nbytes


def cached_bytes() -> int:
    """Bytes held in free blocks right now."""
    return _cached_bytes


def empty_cache() -> None:
    """Return every free block to the OS."""
    global _cached_bytes
    with _lock:
        _free.clear()
        _cached_bytes = 0
