"""The grader of assignment 6 (`launch`) can fail: the reference (the tree's warp per row,
turned on) gets full marks; the starter and each broken variant (broken/launch_*.py) fail,
with a message naming the problem.

Each grade runs in its own process: a plugin's registrations last as long as the process."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from codegen.cuda import ptxas

ROOT = pathlib.Path(__file__).parents[2]


def grade(plugin: str) -> tuple[int, str]:
    result = subprocess.run(
        [sys.executable, "-m", "minitorch.course", "grade", "launch", "--plugin", plugin],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result.returncode, result.stdout + result.stderr


def test_the_reference_gets_full_marks():
    code, out = grade("minitorch.course.reference.launch")
    if ptxas.find_ptxas() is None:  # the ptxas part gives no marks, and says why
        assert code == 1 and "score 85/100" in out and "ptxas is not installed" in out, out
    else:
        assert code == 0 and "score 100/100" in out, out


def test_the_starter_runs_and_fails_naming_its_todo():
    code, out = grade("minitorch/course/starters/launch.py")
    assert code == 1 and "score 0/100" in out, out
    assert "NotImplementedError: TODO choose" in out, out


# each broken variant, and words its first failures must contain
BROKEN = {
    "launch_short_grid.py": ["a warp per row needs ceil(37 / 8) = 5 blocks", "not 4"],
    "launch_half_warp.py": ["differs from the interpreter", "never [16]"],
    "launch_shared.py": ["its PTX has shared memory (.shared)"],
    "launch_device_rows.py": ["on the GPU, row 0 is run by 256 threads"],
    "launch_device_store.py": ["on the GPU, row 1 has its value stored 0 times"],
}


@pytest.mark.parametrize("variant", sorted(BROKEN))
def test_each_broken_variant_fails_naming_its_problem(variant):
    code, out = grade(f"tests/course/broken/{variant}")
    assert code == 1, out
    assert "score 100/100" not in out
    for words in BROKEN[variant]:
        assert words in out, out
