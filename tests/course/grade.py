"""Running the grader as a student does: `python -m minitorch.course grade ...` in a process
of its own (registrations do not leak between grades), from the repository or a copy."""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def grade(name: str, *plugins: str, cwd: pathlib.Path = ROOT) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "minitorch.course", "grade", name]
    for plugin in plugins:
        command += ["--plugin", plugin]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=cwd)


def start(name: str, directory: pathlib.Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "minitorch.course", "start", name, str(directory)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
