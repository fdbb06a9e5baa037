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
    "partitioner": [("    return list(joint.primals)\n", "would compute rng_state again")],
    "fusion": [
        ("    return None\n", "FAIL equal to eager on every backend"),  # loads not there yet
        (  # a load at another element passes when it names the same loop variables
            """\
    where = {node.name: (k, node) for k, other in enumerate(kernel.loops) for node in other.nodes}
    for name, index in loads(buffer, node_index(kernel.ranges, loop.ranges, buffer)):
        if name not in where:
            continue
        producer_position, producer = where[name]
        stored_at = store_index(producer, _index_in(kernel, producer_position, producer))
        if index.free_vars() != stored_at.free_vars():
            return f"it loads {name} at {index}, which this kernel computes at {stored_at}"
        if isinstance(producer.data, Reduction) and producer_position >= position:
            return f"{name} is a reduction of the same loop"
    return None
""",
            "y + y.t() of a stored y",
        ),
    ],
}


def _rewrite(path, name: str, body: str) -> None:
    """Put `body` between the markers of region `name` in the file at `path`."""
    text = path.read_text()
    start = text.index("\n", text.index(f"# course: begin {name}")) + 1
    end = text.rindex("\n", 0, text.index(f"# course: end {name}")) + 1
    path.write_text(text[:start] + body + text[end:])


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
    for body, message in WRONG[name]:
        _rewrite(path, name, body)
        wrong = grade(name, cwd=copy)
        assert wrong.returncode == 1 and message in wrong.stdout, wrong.stdout

    reference = _region((ROOT / REGIONS[name]).read_text(), name)
    _rewrite(path, name, reference)
    rebuilt = grade(name, cwd=copy)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
