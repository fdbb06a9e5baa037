"""The example scripts and benchmarks run as a user would run them, in short versions."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_script(path: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(ROOT / path), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def test_train_mlp_learns_the_spirals():
    # A short run (about 2 s): 500 points, 15 epochs, and a lower bar than the full run's 95%.
    result = run_script(
        "examples/train_mlp.py", "--epochs", "15", "--points", "500", "--threshold", "0.85"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    epochs = re.findall(r"^epoch +(\d+)  loss (\S+)  accuracy +(\S+)%$", result.stdout, re.M)
    assert [int(e) for e, _, _ in epochs] == list(range(1, 16))  # one progress line per epoch
    losses = [float(loss) for _, loss, _ in epochs]
    assert losses[-1] < 0.5 * losses[0], losses  # the loss falls
    assert float(epochs[-1][2]) >= 85.0
    final = re.search(
        r"^test accuracy (\S+)% on 1000 fresh points \(threshold 85%\): PASS$", result.stdout, re.M
    )
    assert final and float(final[1]) >= 85.0, result.stdout


def test_train_mlp_fails_loudly_below_its_threshold():
    result = run_script(
        "examples/train_mlp.py", "--epochs", "1", "--points", "64", "--threshold", "1.01"
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("(threshold 101%): FAIL")


def test_eager_overhead_benchmark_prints_its_table():
    # Not a timing test: only that the script runs and reports every op at both sizes.
    result = run_script(
        "benchmarks/eager_overhead.py",
        "--sizes",
        "16",
        "100",
        "--repeat",
        "1",
        "--min-time",
        "0.0001",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for op in ("x + y", "sin", "exp", "sum", "reshape"):
        rows = re.findall(
            rf"^{re.escape(op)} +(16|100) +\S+ .s +\S+ .s +\S+x$", result.stdout, re.M
        )
        assert rows == ["16", "100"], (op, result.stdout)
    assert result.stdout.count("geomean") == 2


def test_gpt_example_trains_and_samples():
    # A short run (a few seconds): the loss falls from about ln(vocabulary) and a sample prints.
    result = run_script(
        "examples/gpt.py",
        "--steps",
        "40",
        "--block-size",
        "16",
        "--layers",
        "1",
        "--embd",
        "32",
        "--sample",
        "40",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "runs eagerly" not in result.stderr, result.stderr  # no frame fell back
    losses = [float(x) for x in re.findall(r"^step +\d+  loss (\S+)$", result.stdout, re.M)]
    assert len(losses) == 40
    assert sum(losses[-5:]) < 0.8 * sum(losses[:5]), losses
    sample = re.search(r"^sample: (.*)$", result.stdout, re.M)
    assert sample and len(sample[1]) == 41, result.stdout  # the start character, then 40


def test_cnn_example_learns_the_lines():
    result = run_script("examples/cnn.py", "--epochs", "2", "--images", "256", "--threshold", "0.8")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "runs eagerly" not in result.stderr, result.stderr  # no frame fell back
    epochs = re.findall(r"^epoch +(\d+)  loss (\S+)  accuracy +(\S+)%$", result.stdout, re.M)
    assert [int(e) for e, _, _ in epochs] == [1, 2]
    assert re.search(r"\(threshold 80%\): PASS$", result.stdout, re.M), result.stdout


def test_train_step_benchmark_prints_its_table():
    # Not a timing test: every workload runs, compiled, as one graph.
    result = run_script("benchmarks/train_step.py", "--repeat", "1", "--min-time", "0.0001")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = re.findall(r"^(.+?) +\S+ms +\S+ms +\S+x +(\d+) +(\d+)$", result.stdout, re.M)
    assert [name for name, _, _ in rows] == [
        "mlp",
        "mnist",
        "gpt",
        "resnet",
        "softmax max[0]",
        "softmax .values",
        "softmax amax",
    ], result.stdout
    assert all((graphs, breaks) == ("1", "0") for _, graphs, breaks in rows), result.stdout


FUSED_EXAMPLES = ["sincos", "gelu", "softmax", "layernorm"]


@pytest.mark.parametrize("name", FUSED_EXAMPLES[1:])
def test_fused_examples_agree_with_numpy(name):
    result = run_script(f"examples/{name}.py")
    assert result.returncode == 0, result.stdout + result.stderr
    errors = re.findall(r"^largest \|.*\|: (\S+)$", result.stdout, re.M)
    assert len(errors) >= 2 and all(float(e) < 1e-4 for e in errors), result.stdout


@pytest.mark.parametrize("name", FUSED_EXAMPLES)
def test_compile_only_prints_the_ptx_of_every_forward_and_backward_kernel(name):
    # No GPU here, and no cupy: the script runs on the CPU, its kernels are also made as PTX.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "minitorch.compile",
            f"examples/{name}.py",
            "--device",
            "cuda",
            "--stage",
            "ptx",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    sections = re.split(r"^=+\n\[ptx\] ", result.stdout, flags=re.M)[1:]
    titles = [section.splitlines()[0] for section in sections]
    assert [", forward" in t for t in titles] == [True, False], titles
    assert ", backward: " in titles[1], titles
    for title, section in zip(titles, sections, strict=True):
        count = re.search(r": (\d+) PTX kernel\(s\)", title)
        assert count, title  # "k of n": some kernel was not generated
        assert ".target sm_80" in section and "not generated" not in section
        assert len(re.findall(r"^\.visible \.entry ", section, re.M)) == int(count[1]), section
