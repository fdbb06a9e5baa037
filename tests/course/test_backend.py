"""The grader of assignment 5 (`backend`) can fail: the reference (the numpy source backend
under another name) gets full marks, each broken variant (broken/backend_*.py) fails with a
message naming its problem, and the starter's backend says what to write.

Each grade runs in its own process (a registered backend lasts as long as the process); the
grader runs the conformance suite in one more."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from minitorch.course.assignments.backend import CONFORMANCE
from tests.course.grade import grade as run_grade

ROOT = pathlib.Path(__file__).parents[2]


def grade(plugin: str) -> tuple[int, str]:
    run = run_grade("backend", plugin)
    return run.returncode, run.stdout + run.stderr


def test_every_conformance_file_is_a_part():
    files = {path.name for path in (ROOT / "tests" / "conformance").glob("test_*.py")}
    assert set(CONFORMANCE) == files


def test_the_reference_gets_full_marks():
    code, out = grade("minitorch.course.reference.backend")
    assert code == 0 and "score 100/100" in out, out


# each broken variant, and words its report must contain
BROKEN = {
    "backend_ignores_strides.py": "test_layout[ignores_strides-transposed-float32]",
    "backend_wrong_reduction.py": "row=(1.0, nan, 2.0) got np.float32(2.0), want np.float32(nan)",
}


@pytest.mark.parametrize("variant", sorted(BROKEN))
def test_each_broken_variant_fails_naming_its_problem(variant):
    code, out = grade(f"tests/course/broken/{variant}")
    assert code == 1, out
    assert "score 100/100" not in out
    assert BROKEN[variant] in out, out


def test_the_starter_registers_a_backend_that_says_what_to_write():
    # (grading it runs the whole suite to 0/100: 15 s of CI for what this shows)
    check = (
        "from minitorch.compile.hooks import load_plugin\n"
        "load_plugin('minitorch/course/starters/backend.py')\n"
        "from codegen.registry import get_backend\n"
        "get_backend('mine').compile_kernel(type('K', (), {'name': 'kernel0'})(), {})\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert "NotImplementedError: TODO compile_kernel of kernel0" in result.stderr, result.stderr
