"""`python -m tests.tracer.dynamo.cpython`: grade every case and print the counts.

Per module and in total: PASS / FALLBACK-OK / WRONG / ERROR and the pass rate, then one line
per case that is not PASS (its grade and what differed or why it broke). `--inductor` also
runs the cases marked `inductor=True` with backend="inductor"; `-k TEXT` keeps the cases whose
module or name contains TEXT. Exits with status 1 when a case is WRONG or ERROR.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections import Counter

from tests.tracer.dynamo.cpython.harness import ERROR, GRADES, PASS, WRONG, compare, run_case
from tracer.dynamo import reset

MODULES = (
    "test_dict",
    "test_list",
    "test_tuple_set",
    "test_builtins_iter",
    "test_functools_itertools",
    "test_operator_strings",
    "test_aliasing",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.tracer.dynamo.cpython", description=__doc__
    )
    parser.add_argument("--inductor", action="store_true", help="also the inductor subset")
    parser.add_argument("-k", default="", help="only cases whose module or name has this")
    args = parser.parse_args(argv)
    totals: Counter = Counter()
    notes = []
    for name in MODULES:
        module = importlib.import_module(f"tests.tracer.dynamo.cpython.{name}")
        counts: Counter = Counter()
        for case in module.cases:
            if args.k and args.k not in f"{name}.{case.name}":
                continue
            reset()
            outcome = run_case(case)
            if outcome.grade in (PASS, "FALLBACK-OK") and args.inductor and case.inductor:
                outcome = compare(case, "inductor") or outcome
            counts[outcome.grade] += 1
            if outcome.grade != PASS:
                known = " (known: xfail)" if case.wrong or case.fallback else ""
                notes.append(f"  {outcome.grade:11} {name}.{case.name}{known}: {outcome.detail}")
        totals += counts
        print(_line(name, counts))
    print(_line("total", totals))
    print("\n".join(notes))
    return 1 if totals[WRONG] or totals[ERROR] else 0


def _line(name: str, counts: Counter) -> str:
    n = sum(counts.values())
    rate = 100.0 * counts[PASS] / n if n else 0.0
    parts = "  ".join(f"{grade} {counts[grade]:3}" for grade in GRADES)
    return f"{name:26} {parts}  pass rate {rate:5.1f}% of {n}"


if __name__ == "__main__":
    sys.exit(main())
