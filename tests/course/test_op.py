"""The grader of assignment 1 (`op`) can fail: the reference gets full marks, the starter and
each broken variant (broken/op_*.py) fail, with a message naming the problem.

Each grade runs in its own process: a plugin's registrations (a row of the op table, a Tensor
method) last as long as the process."""

from __future__ import annotations

import pytest

from tests.course.grade import grade as run_grade


def grade(plugin: str) -> tuple[int, str]:
    run = run_grade("op", plugin)
    return run.returncode, run.stdout + run.stderr


def test_the_reference_gets_full_marks():
    code, out = grade("minitorch.course.reference.op")
    assert code == 0 and "score 100/100" in out, out


def test_the_starter_runs_and_fails_naming_its_todo():
    code, out = grade("minitorch/course/starters/op.py")
    assert code == 1, out
    assert "NotImplementedError: TODO softplus kernel" in out, out


# each broken variant, and words its first failure must contain
BROKEN = {
    "op_wrong_gradient.py": "the gradient of softplus",
    "op_no_method.py": "Tensor.softplus does not exist",
    "op_lowering_disagrees.py": "compiled softplus(x) * 2 + 1 against eager",
    "op_extern.py": "not one fused kernel",
    "op_composite.py": "softplus' derivative is sigmoid(beta x)",
}


@pytest.mark.parametrize("variant", sorted(BROKEN))
def test_each_broken_variant_fails_naming_its_problem(variant):
    code, out = grade(f"tests/course/broken/{variant}")
    assert code == 1, out
    assert "score 100/100" not in out
    assert BROKEN[variant] in out, out
