"""benchmarks/capture_overhead.py runs as a user would run it, in a short version."""

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_capture_overhead_benchmark_prints_its_table():
    # Not a timing test: only that the script runs and reports every (inputs, backend) row.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks/capture_overhead.py"),
            "--inputs",
            "1",
            "3",
            "--repeat",
            "1",
            "--min-time",
            "0.0001",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = re.findall(
        r"^ +(\d+) (eager|inductor) +(?:-?\d+\.\d+ +){4}-?\d+\.\d+x$", result.stdout, re.M
    )
    assert rows == [("1", "eager"), ("1", "inductor"), ("3", "eager"), ("3", "inductor")], (
        result.stdout
    )
    summary = result.stdout.rstrip().splitlines()[-1]
    assert summary.startswith("summary: 1 input: ") and "; 3 inputs: " in summary, summary
