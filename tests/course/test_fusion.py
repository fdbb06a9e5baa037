"""Assignment 4's grader: the tree's rule (no plugin) gets full marks; broken policies fail,
told why."""

from __future__ import annotations

import pytest

from tests.course.grade import grade

BROKEN = {
    "tests/course/broken/fusion_never.py": "take (3, 1) kernels",
    "tests/course/broken/fusion_unbounded.py": "max_fusion_size=2",
    "minitorch/course/starters/fusion.py": "write my_policy",
}


def test_the_tree_gets_full_marks():
    run = grade("fusion")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "score 100/100" in run.stdout


@pytest.mark.parametrize("plugin", BROKEN)
def test_a_broken_policy_fails_and_is_told_why(plugin):
    run = grade("fusion", plugin)
    assert run.returncode == 1, run.stdout + run.stderr
    assert BROKEN[plugin] in run.stdout, run.stdout
