"""`python -m minitorch.course list | grade NAME [--plugin MODULE]... | start NAME DIR`."""

from __future__ import annotations

import argparse
import sys

from minitorch.course import NAMES, all_assignments, assignment


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minitorch.course", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="the assignments, in course order")
    grade = commands.add_parser("grade", help="grade an assignment: a score per part")
    grade.add_argument("name", choices=NAMES)
    grade.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module name or .py file that registers your work (repeatable)",
    )
    start = commands.add_parser("start", help="a student's copy of the repository")
    start.add_argument("name", choices=NAMES)
    start.add_argument("dir")
    args = parser.parse_args(argv)

    if args.command == "list":
        for k, a in enumerate(all_assignments(), 1):
            how = "extend, or rebuild with `start`" if a.hollows else "extend"
            print(f"{k}. {a.name:<12} {a.title}  (~{a.minutes} min, docs/{a.chapter}.md)")
            print(f"   {'':<12} {how}; hook: {a.hook}")
            print(f"   {'':<12} starter: {a.starter}")
        return 0
    if args.command == "start":
        from minitorch.course.hollow import start_copy

        print(start_copy(assignment(args.name), args.dir))
        return 0
    from minitorch.course.grading import grade as run_grade
    from minitorch.course.grading import load_plugins

    chosen = assignment(args.name)
    submission = load_plugins(args.plugin)
    report = run_grade(chosen, submission)
    print(report.text())
    return 0 if report.full_marks else 1


if __name__ == "__main__":
    sys.exit(main())
