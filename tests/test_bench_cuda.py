"""`make bench-cuda` (benchmarks/bench_cuda.py): the GPU benchmark skips cleanly without a GPU,
and with one (where a GPU is lent) runs end to end on small inputs.

No timing is asserted (speed is what the command reports). Without a GPU the command must say
why in one line and exit 0; on a GPU, its tiny run compares every implementation with numpy
before timing (exit 1 otherwise) and prints a row per case. The table's bandwidth arithmetic
is checked here on made-up times.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import minitorch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))  # the benchmarks import their neighbours

import bench_cuda  # noqa: E402

NO_GPU = "needs a CUDA GPU and cupy (the benchmark launches on one)"


def run_benchmark(*args: str) -> subprocess.CompletedProcess:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_cuda.py"), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env={**os.environ, "PYTHONPATH": path},
    )


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="a GPU is here: the tiny run runs")
def test_skips_in_one_line_without_a_gpu():
    result = run_benchmark()
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.fullmatch(
        r"bench_cuda: skipped, no GPU to run on \((cupy is not installed|cupy "
        r"sees no CUDA GPU).*; minitorch.cuda.is_available\(\) is False\)\n",
        result.stdout,
    ), result.stdout
    assert result.stderr == ""


def test_bandwidth_is_ours_over_the_copys():
    # sincos on 1e7 floats reads 40 MB and writes 40 MB, as the copy of its input does: in 1.2x
    # the copy's time, it runs at 1/1.2 of the copy's bandwidth, above the goal of 80%.
    sincos = bench_cuda.CASES[0]
    times = dict(zip(bench_cuda.COLUMNS, [0.04, 0.5, 0.096, 0.3, 0.048]))  # ms
    row = bench_cuda.Row(sincos, moved=80_000_000, copied=80_000_000, ms=times)
    assert row.of_copy == pytest.approx(1 / 1.2)
    assert bench_cuda.table_row(row) == (
        "| sincos 1e7 | 0.04 | 0.5 | 0.096 | 0.3 | 0.048 | 2.00 | 1667 | 83% | ≥ 80% | pass |"
    )
    row.ms["minitorch.compile"] = 0.055
    assert bench_cuda.table_row(row).endswith("| 73% | ≥ 80% | **FAIL** |")


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=NO_GPU)
def test_tiny_run_on_a_gpu():
    result = run_benchmark("--tiny")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert re.search(r"^Device: .+ \(compute capability \d+\.\d+\); cupy ", out, re.M), out
    number = r"\d[\d.e+-]*"
    rows = re.findall(
        rf"^\| (.+?) \|(?: {number} \|){{7}} \d+% \| (?:≥ 80%|—) \| "
        r"(?:pass|\*\*FAIL\*\*|—) \|$",
        out,
        re.M,
    )
    assert rows == [case.title for case in bench_cuda.CASES], out
