"""Run a kernel's outermost loop on several threads: split [0, n) into one chunk per thread.

Every LLVM kernel takes `(buffers, start, end)` and runs its outermost loop over [start, end),
so any split of [0, n) into chunks computes the same result (no two iterations of the outer
loop write the same element). ctypes releases the GIL for the duration of a foreign call,
so Python threads calling into machine code really do run at the same time.

Starting a thread costs far more than a small kernel, so the threads are started once and
kept (a persistent pool), and a kernel with little work runs inline on the calling thread:
handing a chunk to the pool and waiting for it costs ~50 us.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from minitorch import config

_pool: ThreadPoolExecutor | None = None


def _thread_pool() -> ThreadPoolExecutor:
    """The process's worker threads, started on first use (the caller is one more worker)."""
    global _pool
    if _pool is None:
        workers = max(1, config.num_threads - 1)
        _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="minitorch")
    return _pool


def _forget_pool() -> None:
    global _pool
    _pool = None


# NOTE: a forked child inherits the pool object but not its threads; work handed to it would
# wait forever, so the child starts a pool of its own.
os.register_at_fork(after_in_child=_forget_pool)


def chunks(n: int, parts: int) -> list[tuple[int, int]]:
    """[0, n) cut into `parts` contiguous, nearly equal, non-empty pieces.

    chunks(10, 3) == [(0, 4), (4, 7), (7, 10)]
    """
    parts = max(1, min(parts, n))
    base, extra = divmod(n, parts)
    bounds = [0]
    for k in range(parts):
        bounds.append(bounds[-1] + base + (1 if k < extra else 0))
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def parallel_for(run: Callable[[int, int], None], n: int, work: int) -> None:
    """Call run(start, end) over chunks covering [0, n), in parallel when `work` is large.

    `work` is the number of element computations the whole call does; the caller's thread
    runs the first chunk itself and then waits for the others.
    """
    threads = config.num_threads  # the calling thread included
    if work < config.parallel_threshold or threads == 1 or n < 2:
        run(0, n)
        return
    first, *rest = chunks(n, threads)
    futures = [_thread_pool().submit(run, start, end) for start, end in rest]
    try:
        run(*first)
    finally:
        for future in futures:
            future.result()  # re-raises a worker's exception here
