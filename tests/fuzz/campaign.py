"""A fuzzing campaign: many seeds, one summary, a minimized reproducer per kind of failure.

    summary = fuzz(n=300, seed=0, backends=("eager", "aot_eager", "inductor"))
    print(summary.report())

Failures are grouped by (backend, kind, exception class) and only the first program of each
group is minimized: ten thousand programs may fail a few hundred times for a handful of causes,
and one small reproducer per cause is what a person fixing them needs.
"""

from __future__ import annotations

import functools
import multiprocessing
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from tests.fuzz.generator import generate
from tests.fuzz.minimize import minimize, reproducer
from tests.fuzz.runner import BACKENDS, Failure, Result, run_program


@dataclass
class Summary:
    programs: int = 0
    seconds: float = 0.0
    wrong: Counter = field(default_factory=Counter)  # (backend, kind) -> count
    crashes: Counter = field(default_factory=Counter)  # (backend, exception class) -> count
    fallbacks: Counter = field(default_factory=Counter)  # reason -> count
    first: dict[tuple, Failure] = field(default_factory=dict)  # group -> its first failure
    seeds: dict[tuple, list[int]] = field(default_factory=dict)  # group -> failing seeds
    every: list[tuple[int, Failure]] = field(default_factory=list)  # (seed, failure), in order

    @property
    def failed(self) -> int:
        return sum(self.wrong.values()) + sum(self.crashes.values())

    def add(self, seed: int, failure: Failure) -> None:
        group = (failure.backend, *failure.signature())
        if failure.kind in ("crash", "backend crash"):
            self.crashes[failure.backend, failure.signature()[1]] += 1
        else:
            self.wrong[failure.backend, failure.kind] += 1
        self.first.setdefault(group, failure)
        self.seeds.setdefault(group, []).append(seed)
        self.every.append((seed, failure))

    def listing(self) -> str:
        """One line per failure: seed, backend, call, kind and what differed."""
        return "\n".join(
            f"seed {seed}: {f.backend} call {f.call}: {f.kind}: {f.message}"
            for seed, f in self.every
        )

    def report(self, minimized: list[Failure] = ()) -> str:
        lines = [
            f"{self.programs} programs in {self.seconds:.1f} s: "
            f"{sum(self.wrong.values())} wrong answers, {sum(self.crashes.values())} "
            f"crashes"
        ]
        for title, counter in (("wrong answers", self.wrong), ("crashes", self.crashes)):
            if counter:
                lines.append(f"{title}:")
                lines += [
                    f"  {n:6}  {backend}: {what}" for (backend, what), n in counter.most_common()
                ]
        if self.fallbacks:
            lines.append("fallbacks (frames run eagerly), by reason:")
            lines += [f"  {n:6}  {reason}" for reason, n in self.fallbacks.most_common()]
        for failure in minimized:
            group = (failure.backend, *failure.signature())
            seeds = self.seeds.get(group, [])
            lines += [
                "",
                f"---- {failure.backend}: {failure.kind} {group[2]} "
                f"(seeds {seeds[:8]}{' ...' if len(seeds) > 8 else ''})",
                reproducer(failure),
            ]
        return "\n".join(lines)


def fuzz(
    n: int,
    seed: int = 0,
    backends: tuple[str, ...] = BACKENDS,
    progress: Callable[[Summary], None] | None = None,
    recycle: int | None = None,
) -> Summary:
    """Run programs seed, seed + 1, ..., seed + n - 1 through every backend.

    `recycle`: run them in a child process, replaced after that many programs. The LLVM JIT
    keeps every kernel it compiled, so a long campaign in one process grows by a few
    MB a program; a fresh process every few hundred programs keeps it small.
    """
    summary = Summary()
    start = time.perf_counter()
    for s, result in _results(range(seed, seed + n), backends, recycle):
        summary.programs += 1
        summary.fallbacks.update(result.fallbacks)
        for failure in result.failures:
            summary.add(s, failure)
        summary.seconds = time.perf_counter() - start
        if progress is not None:
            progress(summary)
    return summary


def _results(
    seeds: range, backends: tuple[str, ...], recycle: int | None
) -> Iterator[tuple[int, Result]]:
    run = functools.partial(_run_seed, backends=backends)
    if recycle is None:
        yield from map(run, seeds)
        return
    with multiprocessing.Pool(1, maxtasksperchild=recycle) as pool:
        yield from pool.imap(run, seeds)


def _run_seed(seed: int, backends: tuple[str, ...]) -> tuple[int, Result]:
    return seed, run_program(generate(seed), backends)


def minimize_groups(summary: Summary) -> list[Failure]:
    """One minimized failure per group, in the order the groups were first seen."""
    return [minimize(failure) for failure in summary.first.values()]
