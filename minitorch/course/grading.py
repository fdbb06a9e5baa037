"""How an assignment is graded: parts of cases, a score per part, the first failure shown.

    assignment = Assignment("graph_pass", "A graph pass on the fx IR", chapter=2, ...,
                            parts=[Part("equal to eager", 40, equal_cases), ...])
    report = grade(assignment, plugins=["my_pass.py"])
    print(report.text())                  # a score per part, the first failing case of each
    report.full_marks                     # what `python -m minitorch.course grade` exits by

[Note: what a grader judges]
A grader judges invariants, never today's rules: a correct extension that the in-tree one
would not have written gets full marks. So a graph pass is graded by equivalence (values,
gradients and errors equal eager's on real models and generated programs, with the pass in
the pipeline) plus a check that it did what its assignment asks; a partitioner by what any
partitioner must keep; a fusion policy by correctness on every backend plus kernel counts on
named workloads. Each part is a list of cases; a part's score is its points times the share
of its cases that passed, and the first case that failed is printed with a reproducer: the
few lines that show it, to paste into a file.

A grader is only worth something if it can fail: CI grades each assignment's reference (full
marks) and deliberately broken variants of it (tests/course/broken/), and checks that each is
failed with a message naming its problem.

The student's work arrives as plugins: modules or files that call the hooks
(`register_graph_pass`, `register_partitioner`, ...) when imported. `Submission` is what the
plugins registered, found by comparing the registries before and after loading them. A
hollowed assignment (`course start`) has no plugin: its grader grades the repository's own
implementation, the one the student rebuilt.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field


class CaseFailed(AssertionError):
    """A case's verdict: what is wrong, in words, and the lines that show it."""

    def __init__(self, message: str, reproducer: str = "") -> None:
        super().__init__(message)
        self.reproducer = reproducer


@dataclass
class Case:
    """One check: `run()` returns if it holds and raises (CaseFailed, or any error) if not."""

    name: str
    run: Callable[[], None]
    reproducer: str = ""  # shown when it fails and the error carries none


@dataclass
class Part:
    """A share of the marks: `points`, earned in proportion to the cases that pass."""

    name: str
    points: int
    cases: Callable[[Submission], Iterable[Case]]  # made when graded: may read the submission


@dataclass
class Assignment:
    """One assignment of docs/assignments.md."""

    name: str  # what `grade NAME` takes
    title: str
    chapter: str  # the chapter it ends: docs/<chapter>.md
    hook: str  # what the student's plugin calls
    starter: str  # the starter file, relative to the repository root
    reference: str  # what `grade NAME --plugin REFERENCE` gives full marks (or "" for the tree)
    minutes: int  # the expected time, for a student who has read the chapter
    parts: list[Part]
    hollows: bool = False  # `course start` hollows the regions marked `course: NAME`


@dataclass
class Submission:
    """What the plugins registered, per registry (names in registration order)."""

    plugins: list[str] = field(default_factory=list)
    registered: dict[str, list[str]] = field(default_factory=dict)

    def names(self, registry: str) -> list[str]:
        return self.registered.get(registry, [])


@dataclass
class PartResult:
    part: Part
    passed: int
    total: int
    failure: str = ""  # the first failing case: its name, message and reproducer

    @property
    def score(self) -> int:
        if self.total == 0 or self.passed == self.total:
            return self.part.points if self.total else 0
        return self.part.points * self.passed // self.total


@dataclass
class Report:
    assignment: Assignment
    results: list[PartResult]
    seconds: float

    @property
    def score(self) -> int:
        return sum(r.score for r in self.results)

    @property
    def total(self) -> int:
        return sum(r.part.points for r in self.results)

    @property
    def full_marks(self) -> bool:
        return self.score == self.total

    def text(self) -> str:
        lines = [f"{self.assignment.name}: {self.assignment.title}"]
        for r in self.results:
            mark = "ok  " if r.score == r.part.points else "FAIL"
            lines.append(
                f"  {mark} {r.part.name:<44} {r.score:>3}/{r.part.points:<3} "
                f"({r.passed}/{r.total} cases)"
            )
        lines.append(f"score {self.score}/{self.total} in {self.seconds:.1f} s")
        for r in self.results:
            if r.failure:
                lines += ["", f"first failure in {r.part.name!r}:", r.failure]
        return "\n".join(lines)


# ---- plugins: the student's registrations ---------------------------------------------------


def _passes() -> list[str]:
    from minitorch.compile.hooks import graph_passes

    return [p.name for p in graph_passes()]


def _partitioners() -> list[str]:
    from minitorch.compile.hooks import partitioners

    return list(partitioners())


def _fusion_policies() -> list[str]:
    from minitorch.compile.hooks import fusion_policies

    return list(fusion_policies())


def _backends() -> list[str]:
    from codegen.registry import backend_names

    return backend_names()


# registry name -> a function listing what is registered in it (names, in order); an
# assignment module adds the registry its hook fills, if it is not one of these.
REGISTRIES: dict[str, Callable[[], list[str]]] = {
    "graph_passes": _passes,
    "partitioners": _partitioners,
    "fusion_policies": _fusion_policies,
    "backends": _backends,
}


def load_plugins(plugins: Iterable[str]) -> Submission:
    """Import each plugin (a module name, or a path to a .py file) and return what it added to
    each registry."""
    from minitorch.compile.hooks import load_plugin

    plugins = list(plugins)
    before = {name: list(listed()) for name, listed in REGISTRIES.items()}
    for plugin in plugins:
        try:
            load_plugin(plugin)
        except Exception as error:
            message = f"plugin {plugin!r} failed to load: {type(error).__name__}: {error}"
            raise SystemExit(message) from error
    after = {name: list(listed()) for name, listed in REGISTRIES.items()}
    added = {name: [n for n in after[name] if n not in before[name]] for name in REGISTRIES}
    return Submission(plugins, {name: names for name, names in added.items() if names})


# ---- grading --------------------------------------------------------------------------------


def grade(assignment: Assignment, submission: Submission) -> Report:
    """Run every part's cases; a part keeps the first failure it saw."""
    start = time.perf_counter()
    results = [_grade_part(part, submission) for part in assignment.parts]
    return Report(assignment, results, time.perf_counter() - start)


def _grade_part(part: Part, submission: Submission) -> PartResult:
    result = PartResult(part, 0, 0)
    for case in _cases(part, submission, result):
        result.total += 1
        try:
            case.run()
        except Exception as error:  # noqa: BLE001 - a student's error is a verdict, not a crash
            if not result.failure:
                result.failure = _describe(case, error)
        else:
            result.passed += 1
    return result


def _cases(part: Part, submission: Submission, result: PartResult) -> Iterator[Case]:
    """The part's cases; a part whose cases cannot even be made fails as one case."""
    try:
        yield from part.cases(submission)
    except Exception as error:  # noqa: BLE001
        result.total += 1
        result.failure = _describe(Case("making the cases", lambda: None), error)


def _describe(case: Case, error: Exception) -> str:
    """The case's name, what went wrong, and how to see it again."""
    if isinstance(error, CaseFailed):
        message, reproducer = str(error), error.reproducer or case.reproducer
    else:
        where = traceback.extract_tb(error.__traceback__)[-1]
        message = (
            f"{type(error).__name__}: {error}\n    (raised at {where.filename}:{where.lineno})"
        )
        reproducer = case.reproducer
    text = f"  case: {case.name}\n  {message}"
    if reproducer:
        text += "\n  to reproduce:\n" + "\n".join(f"    {line}" for line in reproducer.splitlines())
    return text
