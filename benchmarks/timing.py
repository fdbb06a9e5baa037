"""Timing shared by the benchmarks: best-of rounds that alternate between the timed callables."""

from __future__ import annotations

import math
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
