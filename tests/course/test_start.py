"""`python -m minitorch.course start`: the hollowed copies fail their grader until the region
is rebuilt, and pass once it is ([Note: hollowed assignments]); a wrong rebuild fails."""

from __future__ import annotations

import re

import pytest

from minitorch.course.hollow import hollow
from tests.course.grade import ROOT, grade, start

REGIONS = {"partitioner": "tracer/aot/partition.py", "fusion": "ir/scheduler.py"}
# A wrong rebuild of each region: the grader must fail it, naming the problem.
WRONG = {
    "partitioner": ("    return list(joint.primals)\n", "would compute rng_state again"),
    "fusion": ("    return None\n", "differs from eager"),
}


def _region(text: str, name: str) -> str:
    return re.search(
        rf"# course: begin {name}[^\n]*\n(.*?)[ \t]*# course: end {name}", text, re.DOTALL
    ).group(1)


@pytest.mark.parametrize("name", REGIONS)
def test_hollowing_replaces_exactly_the_marked_region(name):
    text = (ROOT / REGIONS[name]).read_text()
    hollowed = hollow(text, name)
    assert "raise NotImplementedError" in _region(hollowed, name)
    before, after = text.split(f"# course: begin {name}")[0], text.split(f"# course: end {name}")[1]
    assert hollowed.startswith(before) and hollowed.endswith(after)
    compile(hollowed, REGIONS[name], "exec")  # still Python


@pytest.mark.parametrize("name", REGIONS)
def test_a_hollowed_copy_fails_until_rebuilt(name, tmp_path):
    copy = tmp_path / "student"
    run = start(name, copy)
    assert run.returncode == 0, run.stderr
    assert REGIONS[name] in run.stdout
    hollowed = grade(name, cwd=copy)
    assert hollowed.returncode == 1 and "this region is yours to write" in hollowed.stdout

    path = copy / REGIONS[name]
    body, message = WRONG[name]
    path.write_text(path.read_text().replace(_region(path.read_text(), name), body))
    wrong = grade(name, cwd=copy)
    assert wrong.returncode == 1 and message in wrong.stdout, wrong.stdout

    reference = _region((ROOT / REGIONS[name]).read_text(), name)
    path.write_text(path.read_text().replace(body, reference, 1))
    rebuilt = grade(name, cwd=copy)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
