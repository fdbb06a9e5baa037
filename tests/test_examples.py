"""The example scripts and benchmarks run as a user would run them, in short versions."""

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_script(path: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(ROOT / path), *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)


def test_train_mlp_learns_the_spirals():
    # A short run (about 2 s): 500 points, 15 epochs, and a lower bar than the full run's 95%.
    result = run_script("examples/train_mlp.py", "--epochs", "15", "--points", "500",
                        "--threshold", "0.85")
    assert result.returncode == 0, result.stdout + result.stderr
    epochs = re.findall(r"^epoch +(\d+)  loss (\S+)  accuracy +(\S+)%$", result.stdout, re.M)
    assert [int(e) for e, _, _ in epochs] == list(range(1, 16))  # one progress line per epoch
    losses = [float(loss) for _, loss, _ in epochs]
    assert losses[-1] < 0.5 * losses[0], losses  # the loss falls
    assert float(epochs[-1][2]) >= 85.0
    final = re.search(r"^test accuracy (\S+)% on 1000 fresh points \(threshold 85%\): PASS$",
                      result.stdout, re.M)
    assert final and float(final[1]) >= 85.0, result.stdout


def test_train_mlp_fails_loudly_below_its_threshold():
    result = run_script("examples/train_mlp.py", "--epochs", "1", "--points", "64",
                        "--threshold", "1.01")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("(threshold 101%): FAIL")


def test_eager_overhead_benchmark_prints_its_table():
    # Not a timing test: only that the script runs and reports every op at both sizes.
    result = run_script("benchmarks/eager_overhead.py", "--sizes", "16", "100",
                        "--repeat", "1", "--min-time", "0.0001")
    assert result.returncode == 0, result.stdout + result.stderr
    for op in ("x + y", "sin", "exp", "sum", "reshape"):
        rows = re.findall(rf"^{re.escape(op)} +(16|100) +\S+ .s +\S+ .s +\S+x$",
                          result.stdout, re.M)
        assert rows == ["16", "100"], (op, result.stdout)
    assert result.stdout.count("geomean") == 2
