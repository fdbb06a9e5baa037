"""Timing shared by the benchmarks: rounds that alternate between the timed callables.

Two summaries of the same design: `seconds_per_call` (the best round, for a ratio of two
callables) and `median_seconds_per_call` (the median round, for a table of many, as
benchmarks/bench.py prints).
"""

from __future__ import annotations

import math
import statistics
import time
import timeit
from collections.abc import Callable


def seconds_per_call(fns: list[Callable], repeat: int, min_time: float) -> list[float]:
    """Best per-call time of each fn over `repeat` rounds, each a loop of calls taking >= min_time.

    NOTE: the rounds alternate between the fns, so that a slow spell of the machine (a
    virtual machine's clock, another process) falls on both sides of a ratio alike.
    """
    timers, numbers = [], []
    for fn in fns:
        fn()  # warm up: the meta cache, page faults, lazy imports
        timer, number = timeit.Timer(fn), 1
        while timer.timeit(number) < min_time:
            number *= 2
        timers.append(timer)
        numbers.append(number)
    best = [math.inf] * len(fns)
    for _ in range(repeat):
        for i, (timer, number) in enumerate(zip(timers, numbers)):
            best[i] = min(best[i], timer.timeit(number) / number)
    return best


def median_seconds_per_call(
    fns: dict[str, Callable],
    rounds: int,
    min_sample: float,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Median per-call time of each fn over `rounds` rounds; each round takes one sample of every
    fn, starting one fn later than the round before.

    A sample is a loop of calls long enough (>= min_sample) to trust the clock: one call of a
    40 ms kernel, a thousand of a 15 us one. The rotating order puts each fn first, and after
    each other fn, equally often, so that neither a slow spell of the machine nor what the fn
    before left in the caches favours one fn; the median then drops the spells that hit a few
    samples (a best-of would keep the one lucky sample instead).

    `clock` reads the time at the start and the end of each sample: a GPU benchmark passes one
    that first waits for the GPU (benchmarks/bench_cuda.py), since a launch returns before its
    kernel has run.
    """
    timers, numbers = {}, {}
    for name, fn in fns.items():
        # timeit turns the garbage collector off while it times
        timer = timeit.Timer(fn, timer=clock)
        once = max(timer.timeit(1), 1e-9)  # warmed up by the caller: this is a steady call
        timers[name], numbers[name] = timer, max(1, math.ceil(min_sample / once))
    names = list(fns)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        start = r % len(names)
        for name in names[start:] + names[:start]:
            samples[name].append(timers[name].timeit(numbers[name]) / numbers[name])
    return {name: statistics.median(times) for name, times in samples.items()}
