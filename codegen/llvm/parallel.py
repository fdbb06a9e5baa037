"""Run a kernel's outermost loop on several threads: [0, n) cut into pieces the threads claim.

Every LLVM kernel takes `(buffers, start, end)` and runs its outermost loop over [start, end),
so any split of [0, n) into pieces computes the same result (no two iterations of the outer
loop write the same element). ctypes releases the GIL for the duration of a foreign call,
so Python threads calling into machine code really do run at the same time.

Starting a thread costs far more than a small kernel, so the threads are started once and
kept (a persistent pool, [Note: a pool of our own]), and a kernel with little work runs
inline on the calling thread.

[Note: claiming pieces]
Cutting [0, n) into one equal chunk per thread, and waiting for every thread to finish its
own, makes the call as slow as its slowest thread, and a thread is slow for reasons the
kernel does not control: a pool thread wakes up tens of microseconds after it is handed work
(a futex wake-up, in a virtual machine), and on a shared machine another process may hold one
core for milliseconds. So [0, n) is cut into pieces that the threads *claim*, in order, until
none is left, each piece a fraction of what is left (guided self-scheduling, as OpenMP's
`schedule(guided)`):

    piece = max(grain, left // threads)       # 4096 rows, 2 threads: 2048, 1024, 512, ...

A thread that starts late, or runs slowly, just claims fewer pieces; the pieces shrink
towards the end, so the two threads finish within about one small piece of each other. The
caller claims pieces too, and waits only for pieces already claimed: a pool thread that
wakes up after everything is done finds nothing to claim and costs the caller nothing.

Why halve what is left, and not cut finer? Each piece costs a claim and a ctypes call (~2
us), and each thread streams memory best in long runs of neighbouring rows. Measured side by
side on layernorm 4096x1024 (~0.8 ms a call on 2 threads): pieces of a quarter of what is
left were 12% slower than one equal half per thread; halves of what is left, no piece under
`GRAIN_WORK` elements of work (6 pieces), were as fast as equal halves on an idle machine,
and keep a late or preempted thread from holding the call up.

[Note: a pool of our own]
The pool is a deque of functions and a condition variable, some twenty lines, rather than
concurrent.futures' ThreadPoolExecutor. Importing concurrent.futures (with the logging,
queue and traceback modules it loads) takes ~4 ms, a fifth of a warm start's budget (issue
13), paid by the first call of any program with a kernel big enough to split; and its
futures, which we would never read (a job counts its finished pieces itself), cost every
call a few microseconds. Ours needs nothing beyond `threading`. Its threads start at the
first split that needs them, and are daemons: one waits forever for work, and must not keep
the process from exiting. (A pool thread runs a kernel only while the caller that handed it
out waits, so no kernel of ours is cut short at exit that the caller's own thread would not
have kept alive.) Several callers share the pool safely: each hands over
its own job, and since a caller runs its job's unclaimed pieces itself and waits only for
pieces already running, a caller never waits for a pool thread that is busy elsewhere, even
when the caller is itself a pool thread (a piece that splits work of its own).
"""

from __future__ import annotations

import functools
import os
import threading
from collections import deque
from collections.abc import Callable

from minitorch import config

GRAIN_WORK = 1 << 17  # elements of work a piece does at least ([Note: claiming pieces])


@functools.lru_cache(maxsize=256)
def pieces(n: int, threads: int, grain: int = 1) -> tuple[tuple[int, int], ...]:
    """[0, n) cut into pieces for `threads` threads to claim in order: each a `1 / threads`
    share of what is left, and at least `grain` long.

    pieces(100, 2, 10) == ((0, 50), (50, 75), (75, 87), (87, 97), (97, 100))
    """
    bounds = [0]
    while bounds[-1] < n:
        left = n - bounds[-1]
        bounds.append(min(n, bounds[-1] + max(grain, left // threads)))
    return tuple(zip(bounds[:-1], bounds[1:]))


class _Job:
    """One parallel_for call: the pieces, the next one to claim, and how many are finished."""

    def __init__(
        self, run: Callable[[int, int], None], pieces: tuple[tuple[int, int], ...]
    ) -> None:
        self.run, self.pieces = run, pieces
        self.claimed = 0  # pieces[:claimed] are some thread's
        self.finished = 0  # pieces run (or failed)
        self.error: BaseException | None = None  # the first piece's exception, if any
        self.lock = threading.Lock()
        self.done = threading.Event()  # set when every piece is finished

    def claim(self) -> int:
        """The index of the next piece (len(pieces) once none is left)."""
        with self.lock:
            k = self.claimed
            self.claimed = min(k + 1, len(self.pieces))
            return k

    def work(self) -> None:
        """Run pieces until none is left to claim."""
        k = self.claim()
        while k < len(self.pieces):
            try:
                self.run(*self.pieces[k])
            except BaseException as error:  # re-raised on the caller's thread
                self.error = self.error or error
            with self.lock:
                self.finished += 1
                if self.finished == len(self.pieces):
                    self.done.set()
            k = self.claim()


def parallel_for(run: Callable[[int, int], None], n: int, work: int) -> None:
    """Call run(start, end) over pieces covering [0, n), in parallel when `work` is large.

    `work` is the number of element computations the whole call does; the caller's thread
    claims pieces too ([Note: claiming pieces]), then waits for the pieces others claimed.
    With config.thread_pool off (an extra: [Note: the core and its extras] in config.py),
    every call is one run(0, n) on the calling thread.
    """
    threads = config.num_threads  # the calling thread included
    if not config.thread_pool or work < config.parallel_threshold or threads == 1 or n < 2:
        run(0, n)
        return
    grain = max(1, n * GRAIN_WORK // work)  # iterations of the outer loop a piece runs at least
    job = _Job(run, pieces(n, threads, grain))
    _pool.submit(job.work, min(threads, len(job.pieces)) - 1)
    job.work()
    job.done.wait()
    if job.error is not None:
        raise job.error


# -- the pool ----------------------------------------------------------------------------------


class _Pool:
    """Daemon threads that call the functions `submit` hands them, each thread started when
    a call first needs it ([Note: a pool of our own])."""

    def __init__(self) -> None:
        self._ready = threading.Condition(threading.Lock())  # guards the two fields below
        self._pending: deque[Callable[[], None]] = deque()  # handed over, not yet taken
        self._threads = 0  # started so far

    def submit(self, fn: Callable[[], None], copies: int) -> None:
        """Have `copies` pool threads call fn() (which must not raise: _Job.work does not)."""
        with self._ready:
            while self._threads < copies:
                threading.Thread(
                    target=self._serve, name=f"minitorch-{self._threads + 1}", daemon=True
                ).start()
                self._threads += 1
            self._pending.extend([fn] * copies)
            self._ready.notify(copies)

    def _serve(self) -> None:
        """A pool thread's life: wait for a function, call it, wait for the next."""
        while True:
            with self._ready:
                while not self._pending:
                    self._ready.wait()
                fn = self._pending.popleft()
            fn()


_pool = _Pool()


def _new_pool() -> None:
    global _pool
    _pool = _Pool()


# NOTE: a forked child inherits the pool but not its threads (nor, maybe, its lock, if another
# thread held it at the fork); work handed to it would wait forever, so the child gets its own.
os.register_at_fork(after_in_child=_new_pool)
