"""`python -m minitorch.course start NAME DIR`: a student's copy of the repository.

[Note: hollowed assignments]
Some assignments rebuild a real piece of the compiler rather than add to it: the default
partitioner, the fusion rule that decides whether a load can be served inside a kernel. The
reference is the repository's own code, marked in place by a comment line `course: begin
NAME` before the region and `course: end NAME` after it (each after a `#`, on a line of its
own, indented as the code: ir/scheduler.py's `why_not` holds one).

`start` copies the repository's files (those git tracks, or every file but virtual
environments and caches when there is no git) to DIR, and in the copy replaces each region the
assignment marks by a `raise NotImplementedError` that says what to rebuild and where to read.
The same grader grades the copy: it fails until the region is rebuilt. An additive assignment's
copy gets its starter file instead, at the top of DIR, to be loaded with `--plugin`.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

from minitorch.course.grading import Assignment

ROOT = pathlib.Path(__file__).resolve().parents[2]
_SKIP = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", "node_modules"}


def start_copy(assignment: Assignment, directory: str) -> str:
    """Write the copy; return what to do next, for the student."""
    target = pathlib.Path(directory).resolve()
    if target.exists() and any(target.iterdir()):
        raise SystemExit(f"{target} is not empty: choose a new folder")
    hollowed = []
    for path in _files():
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        source = ROOT / path
        if assignment.hollows and path.suffix == ".py":
            text = source.read_text()
            new = hollow(text, assignment.name)
            if new != text:
                hollowed.append(str(path))
            destination.write_text(new)
        else:
            shutil.copy2(source, destination)
    grade = f"python -m minitorch.course grade {assignment.name}"
    if assignment.hollows:
        if not hollowed:
            raise SystemExit(f"no region is marked `course: {assignment.name}` in the tree")
        where = ", ".join(hollowed)
        return f"wrote {target}; rebuild the hollowed region in {where}, then, there: {grade}"
    starter = target / pathlib.Path(assignment.starter).name
    shutil.copy2(ROOT / assignment.starter, starter)
    return f"wrote {target}; edit {starter.name}, then, there: {grade} --plugin {starter.name}"


def hollow(text: str, name: str) -> str:
    """`text` with every region marked `course: begin NAME` ... `end NAME` replaced."""
    pattern = re.compile(
        rf"^([ \t]*)# course: begin {re.escape(name)}\n.*?^[ \t]*# course: end {re.escape(name)}\n",
        re.MULTILINE | re.DOTALL,
    )

    def replacement(match: re.Match) -> str:
        indent = match.group(1)
        return (
            f"{indent}# course: begin {name}  (rebuild this region: docs/assignments.md)\n"
            f"{indent}raise NotImplementedError(\n"
            f'{indent}    "assignment {name!s}: this region is yours to write; see "\n'
            f'{indent}    "docs/assignments.md and the note above"\n'
            f"{indent})\n"
            f"{indent}# course: end {name}\n"
        )

    return pattern.sub(replacement, text)


def _files() -> list[pathlib.Path]:
    """The repository's files, relative to its root."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout.decode()
        return [pathlib.Path(p) for p in listed.split("\0") if p and (ROOT / p).is_file()]
    except (OSError, subprocess.SubprocessError):
        return [
            p.relative_to(ROOT)
            for p in ROOT.rglob("*")
            if p.is_file() and not _SKIP.intersection(p.relative_to(ROOT).parts)
        ]
