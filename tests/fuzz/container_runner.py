"""The container fuzzer's differential run, minimizer and campaign.

    python -m tests.fuzz --containers --n 500            # backends eager and inductor

Each program (containers.py) runs plainly (CPython is the oracle) and through
`minitorch.compile(program, backend=B)`, three times (capture, the cached code, longer
arguments: see CALLS), each call on fresh arguments and a fresh `GL`. What is compared is
what the CPython suite compares (tests/tracer/dynamo/cpython/harness.py): the returned
variables recursively (types, list versus tuple, dict key order, tensors by value), the
caller's `lst` and `d` and the global `GL` after the call, which containers are one object,
and the exception's class. A failure is shrunk by deleting statements while it keeps failing
the same way (a statement CPython then rejects is not deleted), and printed as a script to
paste into an issue.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import minitorch
from tests.fuzz.containers import ContainerProgram, generate_containers, make_args
from tests.fuzz.runner import fallback_class
from tests.tracer.dynamo.cpython.harness import Call, Hang, call, difference, time_limit
from tracer.dynamo.cache import private_caches

BACKENDS = ("eager", "inductor")
TIMEOUT = 60  # seconds for one compiled call: longer is a hang
# Each compiled call and the arguments' variant (containers.make_args): capture, the cached
# code, then longer containers (a guard must fail, or the code must hold for them too).
CALLS = (("first call", 0), ("second call", 0), ("longer arguments", 1))


@dataclass
class ContainerFailure:
    """One program that a backend got wrong, and how."""

    program: ContainerProgram
    backend: str
    kind: str  # "wrong", "crash" (compiled raised, CPython did not) or "hang"
    message: str


def observe(function, namespace: dict, variant: int = 0) -> Call:
    """Call `function` (a program or its compiled form) on fresh arguments and a new GL.

    `namespace` holds the program's global list GL: a new one for every call (so a call's
    GL and what it returned stay as they were), joining the arguments, compared afterwards.
    """
    namespace["GL"] = []
    args = make_args(variant)
    seen = call(function, args)
    seen.args = (*args, namespace["GL"])
    return seen


def run_container_program(
    program: ContainerProgram, backends: tuple[str, ...] = BACKENDS, breaks: list[str] | None = None
) -> list[ContainerFailure]:
    """The first failure of each backend on `program` (an empty list: all agree).

    `breaks`, if given, collects why frames broke or ran eagerly (a fallback is no failure).
    """
    failures = []
    for backend in backends:
        function = program.function()
        expected = [observe(function, function.__globals__, v) for v in (0, 1)]
        with private_caches() as (_, journal), time_limit(TIMEOUT):
            compiled = minitorch.compile(function, backend=backend)
            for attempt, variant in CALLS:
                got = observe(compiled, function.__globals__, variant)
                found = difference(expected[variant], got)
                if found is not None:
                    failures.append(
                        ContainerFailure(
                            program, backend, _kind(expected[variant], got), f"{attempt}: {found}"
                        )
                    )
                    break
        if breaks is not None:
            breaks += [fallback_class(b.reason) for e in journal for b in e.graph_breaks]
            breaks += [
                fallback_class(e.fallback_reason)
                for e in journal
                if e.fallback_reason and not e.graph_breaks
            ]
    return failures


def _raises(program: ContainerProgram) -> bool:
    function = program.function()
    return observe(function, function.__globals__).error is not None


def _kind(expected: Call, got: Call) -> str:
    if isinstance(got.error, Hang):
        return "hang"
    return "crash" if expected.error is None and got.error is not None else "wrong"


def minimize_container(failure: ContainerFailure) -> ContainerFailure:
    """Delete statements, one at a time from the end, while the same kind of failure stays."""
    current = failure
    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(current.program.body))):
            body = current.program.body[:i] + current.program.body[i + 1 :]
            smaller = current.program.with_body(body)
            if _raises(smaller) and not _raises(current.program):
                continue  # deleting it made CPython raise: a different program
            found = [
                f
                for f in run_container_program(smaller, (failure.backend,))
                if f.kind == failure.kind
            ]
            if found:
                current, changed = found[0], True
    return current


def container_reproducer(failure: ContainerFailure) -> str:
    """A script that reproduces the failure on its own."""
    return (
        f"# container fuzzer seed {failure.program.seed}, backend {failure.backend}: "
        f"{failure.kind}\n# {failure.message}\nimport minitorch\n"
        f"from tests.fuzz.containers import make_args\nGL = []\n\n"
        f"{failure.program.source()}\n"
        f"print(program(*make_args()))\nGL.clear()\n"
        f"print(minitorch.compile(program, backend={failure.backend!r})(*make_args()))\n"
    )


@dataclass
class ContainerSummary:
    programs: int = 0
    seconds: float = 0.0
    failures: Counter = field(default_factory=Counter)  # (backend, kind) -> count
    breaks: Counter = field(default_factory=Counter)  # reason -> frames broken or run eagerly
    every: list[ContainerFailure] = field(default_factory=list)

    def report(self, minimized: list[ContainerFailure] = ()) -> str:
        lines = [
            f"{self.programs} container programs in {self.seconds:.1f} s: "
            f"{sum(self.failures.values())} failures"
        ]
        lines += [
            f"  {backend:9} {kind:6} {n}" for (backend, kind), n in sorted(self.failures.items())
        ]
        lines.append(
            f"{sum(self.breaks.values())} graph breaks or fallbacks (not failures), the commonest:"
        )
        lines += [f"  {n:5} {reason}" for reason, n in self.breaks.most_common(8)]
        lines += [
            f"  seed {f.program.seed}: {f.backend}: {f.kind}: {f.message[:200]}" for f in self.every
        ]
        for failure in minimized:
            lines += ["", container_reproducer(failure)]
        return "\n".join(lines)


def fuzz_containers(
    n: int,
    seed: int = 0,
    backends: tuple[str, ...] = BACKENDS,
    progress=None,
    frozen_arguments: bool = False,
) -> ContainerSummary:
    """Run programs seed .. seed + n - 1 and collect every failure."""
    summary = ContainerSummary()
    start = time.perf_counter()
    for s in range(seed, seed + n):
        minitorch._dynamo.reset()
        breaks: list[str] = []
        for failure in run_container_program(
            generate_containers(s, None, frozen_arguments), backends, breaks
        ):
            summary.failures[failure.backend, failure.kind] += 1
            summary.every.append(failure)
        summary.breaks.update(breaks)
        summary.programs += 1
        summary.seconds = time.perf_counter() - start
        if progress is not None:
            progress(summary)
    return summary


def minimize_first_of_each(summary: ContainerSummary, limit: int = 5) -> list[ContainerFailure]:
    """The first failure of each (backend, kind, first words of the message), shrunk."""
    groups: dict[tuple, ContainerFailure] = {}
    for f in summary.every:
        groups.setdefault((f.backend, f.kind, f.message.split(":")[1][:40]), f)
    return [minimize_container(f) for f in list(groups.values())[:limit]]


def main(args, argv: list[str] | None) -> int:
    """`python -m tests.fuzz --containers --n N --seed S [--backends ...] [--no-minimize]`.

    `--frozen-arguments` keeps the caller's list and dict unchanged, to find failures of
    other causes than finding 6 (argument items re-read after the argument was mutated).
    """
    import sys

    given = argv if argv is not None else sys.argv[1:]
    backends = (
        BACKENDS
        if not any(a.startswith("--backends") for a in given)
        else tuple(b for b in args.backends.split(",") if b)
    )

    def progress(summary: ContainerSummary) -> None:
        if summary.programs % 100 == 0 or summary.programs == args.n:
            print(
                f"{summary.programs}/{args.n} container programs, "
                f"{sum(summary.failures.values())} failures, {summary.seconds:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    summary = fuzz_containers(args.n, args.seed, backends, progress, args.frozen_arguments)
    print(summary.report([] if args.no_minimize else minimize_first_of_each(summary)))
    return 1 if summary.every else 0
