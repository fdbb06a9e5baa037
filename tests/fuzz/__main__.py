"""`python -m tests.fuzz --n 10000 --seed 0 --backends eager,aot_eager,inductor` (`make fuzz`).

Prints progress as it goes, then the summary: programs, wrong answers and crashes by backend
and kind, fallbacks by reason, the time, and one minimized reproducer per kind of failure.
Exits with status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import sys

from tests.fuzz.campaign import Summary, fuzz, minimize_groups
from tests.fuzz.runner import BACKENDS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--n", type=int, default=1000, help="how many programs")
    parser.add_argument("--seed", type=int, default=0, help="the first program's seed")
    parser.add_argument(
        "--backends", default=",".join(BACKENDS), help="comma-separated backend names"
    )
    parser.add_argument(
        "--recycle",
        type=int,
        default=250,
        help="programs per child process (0: all in this process)",
    )
    parser.add_argument(
        "--list", action="store_true", help="also list every failure, one line each"
    )
    parser.add_argument(
        "--no-minimize",
        action="store_true",
        help="print the failures' programs as found, unshrunk (faster)",
    )
    parser.add_argument(
        "--containers",
        action="store_true",
        help="fuzz Python containers instead (container_runner.py; "
        "backends eager,inductor unless --backends is given)",
    )
    parser.add_argument(
        "--frozen-arguments",
        action="store_true",
        help="with --containers: programs never change the caller's list "
        "and dict (to look past argument-mutation failures)",
    )
    args = parser.parse_args(argv)
    if args.containers:
        from tests.fuzz.container_runner import main as containers_main

        return containers_main(args, argv)
    backends = tuple(b for b in args.backends.split(",") if b)

    def progress(summary: Summary) -> None:
        if summary.programs % 100 == 0 or summary.programs == args.n:
            print(
                f"{summary.programs}/{args.n} programs, {summary.failed} failures, "
                f"{sum(summary.fallbacks.values())} fallbacks, {summary.seconds:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    summary = fuzz(args.n, args.seed, backends, progress, args.recycle or None)
    failures = list(summary.first.values()) if args.no_minimize else minimize_groups(summary)
    if args.list:
        print(summary.listing())
    print(summary.report(failures))
    return 1 if summary.failed else 0


if __name__ == "__main__":
    sys.exit(main())
