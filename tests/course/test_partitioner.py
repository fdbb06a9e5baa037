"""Assignment 3's grader: the reference (min-cut, registered as a plugin) and the tree's own
"default" get full marks; broken partitioners fail, told why."""

from __future__ import annotations

import pytest

from tests.course.grade import grade

BROKEN = {
    "tests/course/broken/partitioner_primals_only.py": "would compute rng_state again",
    "tests/course/broken/partitioner_everything.py": "never read there",
    "minitorch/course/starters/partitioner.py": "write my_partitioner",
}


@pytest.mark.parametrize("plugins", [("minitorch.course.reference.partitioner",), ()])
def test_the_reference_and_the_tree_get_full_marks(plugins):
    run = grade("partitioner", *plugins)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "score 100/100" in run.stdout


@pytest.mark.parametrize("plugin", BROKEN)
def test_a_broken_partitioner_fails_and_is_told_why(plugin):
    run = grade("partitioner", plugin)
    assert run.returncode == 1, run.stdout + run.stderr
    assert BROKEN[plugin] in run.stdout, run.stdout
