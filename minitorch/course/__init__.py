"""The course, graded: six assignments, each a hook, a starter, a grader that can fail.

    python -m minitorch.course list                          the assignments, in course order
    python -m minitorch.course grade NAME [--plugin MODULE]  grade NAME: a score per part
    python -m minitorch.course start NAME DIR                a student's copy of the repository

docs/assignments.md is the page a student reads: for each assignment the goal, what to read,
the hook, the starter, the grade command, the expected time and how points are given.

    grading.py      Assignment, Part, Case; loading plugins; grading and the report
                    ([Note: what a grader judges])
    checks.py       the checks graders share: a compiled function against eager (values,
                    gradients, errors), the models and generated programs to run
    hollow.py       `start`: the repository copied, with the regions an assignment marks
                    hollowed ([Note: hollowed assignments])
    assignments/    one module per assignment, in course order: its ASSIGNMENT
    starters/       the file each additive assignment starts from (it runs, and fails)
    reference/      the reference solutions of the additive assignments, as plugins

The course sits above the driver (it compiles with every stage), like minitorch.compile, and
is imported only by `python -m minitorch.course` and the tests.
"""

from __future__ import annotations

import importlib

from minitorch.course.grading import Assignment

# In course order: each is minitorch/course/assignments/<name>.py, ending the chapter it names.
NAMES = ("op", "graph_pass", "partitioner", "fusion", "backend", "launch")


def assignment(name: str) -> Assignment:
    """The assignment called `name`; SystemExit listing the names if there is none."""
    if name not in NAMES:
        raise SystemExit(f"no assignment {name!r}; the assignments are: {', '.join(NAMES)}")
    return importlib.import_module(f"minitorch.course.assignments.{name}").ASSIGNMENT


def all_assignments() -> list[Assignment]:
    """Every assignment, in course order (not `assignments`: that is the subpackage)."""
    return [assignment(name) for name in NAMES]
