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
Only large blocks are pooled (small ones are cheap to get from malloc), and the pool holds at
most `MAX_CACHED_BYTES`, so memory a program stops using goes back to the OS.
"""

from __future__ import annotations

import ctypes
import threading
import weakref

import numpy as np

MIN_POOLED_BYTES = 1 << 20  # smaller arrays come straight from numpy
MAX_CACHED_BYTES = 1 << 30  # free blocks kept for reuse, in total

_free: dict[int, list[np.ndarray]] = {}  # nbytes -> free raw blocks (uint8 arrays)
_cached_bytes = 0
_lock = threading.Lock()  # threads take and give back blocks at once: one pool, one owner


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array, from the pool when it is large."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < MIN_POOLED_BYTES:
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
    return np.empty(nbytes, np.uint8)


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
