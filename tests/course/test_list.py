"""The course's list and its page: six assignments, in course order, each with a starter, a
chapter that ends with it, and its grade command on docs/assignments.md."""

from __future__ import annotations

import subprocess
import sys

from minitorch.course import NAMES, all_assignments
from tests.course.grade import ROOT


def test_list_shows_six_assignments_in_course_order():
    run = subprocess.run(
        [sys.executable, "-m", "minitorch.course", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    listed = [line.split()[1] for line in run.stdout.splitlines() if line[:1].isdigit()]
    assert listed == list(NAMES) and len(listed) == 6


def test_each_assignment_has_its_starter_chapter_and_page_entry():
    page = (ROOT / "docs/assignments.md").read_text()
    chapters = [int(a.chapter[:2]) for a in all_assignments()]
    assert chapters == sorted(chapters)  # in course order
    for a in all_assignments():
        assert (ROOT / a.starter).is_file(), a.starter
        assert f"python -m minitorch.course grade {a.name}" in page, a.name
        chapter = (ROOT / f"docs/{a.chapter}.md").read_text()
        assert "## Assignment" in chapter and a.name in chapter.split("## Assignment")[-1]
        assert sum(p.points for p in a.parts) == 100, a.name
