"""Assignment 2's grader: full marks for the reference, and each broken variant failed with a
message that names its problem ([Note: what a grader judges])."""

from __future__ import annotations

import pytest

from tests.course.grade import grade

BROKEN = {
    "tests/course/broken/graph_pass_by_target.py": "differs from eager",
    "tests/course/broken/graph_pass_noop.py": "still computes twice",
    "tests/course/broken/graph_pass_merges_draws.py": "merged the two random draws",
    "tests/course/broken/graph_pass_raw_key.py": "eager gives minitorch.float32",
    "tests/course/broken/graph_pass_no_kwargs.py": "x.sum() and x.sum(dim=0)",
    "tests/course/broken/graph_pass_merges_rand_like.py": "two rand_like(x): two draws",
    "minitorch/course/starters/graph_pass.py": "write merge_repeats",
}


def test_the_reference_gets_full_marks():
    run = grade("graph_pass", "minitorch.course.reference.graph_pass")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "score 100/100" in run.stdout


@pytest.mark.parametrize("plugin", BROKEN)
def test_a_broken_pass_fails_and_is_told_why(plugin):
    run = grade("graph_pass", plugin)
    assert run.returncode == 1, run.stdout + run.stderr
    assert BROKEN[plugin] in run.stdout, run.stdout
