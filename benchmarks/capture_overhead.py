"""Per-call cost of a compiled function on a cache hit vs the eager function, on tiny tensors.

    python benchmarks/capture_overhead.py [--inputs 1 20] [--size 4] [--repeat 7] [--min-time 0.1]

The function adds its n inputs and a constant, one add per input: `x0 + x1 + ... + 1.0`. On
4-element tensors each kernel takes well under a microsecond, so every time below is Python
overhead. For each n and each backend it times, after the first call has compiled:

    eager     f(*xs): n minitorch ops through the dispatcher
    compiled  torch.compile(f, backend)(*xs): a cache hit, the whole call
    guard     the cache entry's guard alone, on the frame's locals (the guard check)
    run       the entry's transformed code alone: call the backend's graph, rebuild the result
              ("eager" backend: the captured graph run op by op, i.e. capture costs nothing
              but the guard and the dispatch; "inductor": the compiled kernel's launch)

What compiled spends beyond guard + run is binding the arguments into a frame and the cache
lookup (eval_frame.py), a few microseconds; it is not printed, since a difference of best times
can come out negative on a noisy machine.

Each time is the best of --repeat rounds of a loop long enough (--min-time) to trust the clock,
per call, as `timeit` reports it; the rounds alternate between the four callables, so a slow
spell of the machine falls on every column alike.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from timing import seconds_per_call  # benchmarks/timing.py, beside this script

import minitorch as torch
from tracer.dynamo import cache_entries

BACKENDS = ("eager", "inductor")


def make_adder(n: int) -> Callable:
    """`def add_n(x0, ..., x{n-1}): return x0 + ... + x{n-1} + 1.0`, a fresh code object each call.

    NOTE: written with exec because n varies; plain named parameters (not *xs) keep the call on
    the binder's fast path, as for most user functions. A fresh code object per backend gives
    each compiled function a cache of its own, so one entry is looked up, not two.
    """
    params = [f"x{i}" for i in range(n)]
    source = f"def add_{n}({', '.join(params)}):\n    return {' + '.join(params)} + 1.0\n"
    namespace: dict = {}
    exec(compile(source, f"<add_{n}>", "exec"), namespace)  # noqa: S102 - our own source
    return namespace[f"add_{n}"]


def measure(n: int, size: int, backend: str, repeat: int, min_time: float) -> dict[str, float]:
    """Seconds per call of eager, compiled, guard and run for `n` inputs of `size` elements."""
    torch.manual_seed(0)
    xs = [torch.rand(size) for _ in range(n)]
    fn = make_adder(n)
    compiled = torch.compile(fn, backend=backend)
    np.testing.assert_allclose(compiled(*xs).numpy(), fn(*xs).numpy(), rtol=1e-6)

    entries = cache_entries(fn)
    if len(entries) != 1 or entries[0].transformed is None:
        raise RuntimeError(
            f"add_{n} with backend {backend!r} was not captured into one cache "
            f"entry ({len(entries)} entries): this would time the wrong thing"
        )
    entry = entries[0]
    f_locals = {f"x{i}": x for i, x in enumerate(xs)}  # the frame view eval_frame.py builds
    f_globals = fn.__globals__
    if not entry.guard(f_locals, f_globals):
        raise RuntimeError(f"the guard of add_{n} fails on its own inputs")
    run = entry.transformed.fn

    t_eager, t_compiled, t_guard, t_run = seconds_per_call(
        [
            lambda: fn(*xs),
            lambda: compiled(*xs),
            lambda: entry.guard(f_locals, f_globals),
            lambda: run(f_locals, f_globals),
        ],
        repeat,
        min_time,
    )
    if len(cache_entries(fn)) != 1:
        raise RuntimeError(f"add_{n} recompiled while being timed: the calls were not all hits")
    return {"eager": t_eager, "compiled": t_compiled, "guard": t_guard, "run": t_run}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, nargs="+", default=[1, 20], help="tensor inputs")
    parser.add_argument("--size", type=int, default=4, help="elements per tensor")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.1, help="seconds per timed loop")
    args = parser.parse_args()

    print(
        f"cache-hit cost of torch.compile(f) vs f, f = x0 + ... + x(n-1) + 1.0, "
        f"{args.size}-element float32 inputs, best of {args.repeat}, microseconds per call"
    )
    columns = ("eager", "compiled", "guard", "run")
    print(
        f"{'inputs':>6} {'backend':<9}"
        + "".join(f"{c:>10}" for c in columns)
        + f"{'compiled/eager':>16}"
    )
    results = {}
    for n in args.inputs:
        for backend in BACKENDS:
            t = measure(n, args.size, backend, args.repeat, args.min_time)
            results[n, backend] = t
            print(
                f"{n:>6} {backend:<9}"
                + "".join(f"{t[c] * 1e6:10.2f}" for c in columns)
                + f"{t['compiled'] / t['eager']:15.2f}x",
                flush=True,
            )

    parts = []
    for n in args.inputs:
        capture, inductor = results[n, "eager"], results[n, "inductor"]
        parts.append(
            f"{n} input{'s' if n != 1 else ''}: a hit costs "
            f"{(capture['compiled'] - capture['eager']) * 1e6:+.1f} us over eager for "
            f"capture alone (guard {capture['guard'] * 1e6:.1f} us), "
            f"{(inductor['compiled'] - inductor['eager']) * 1e6:+.1f} us with inductor "
            f"(launch {inductor['run'] * 1e6:.1f} us)"
        )
    print("summary: " + "; ".join(parts))


if __name__ == "__main__":
    main()
