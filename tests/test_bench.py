"""`make bench` (benchmarks/bench.py): its workloads are right and whole, and the command runs.

No timing is asserted here (speed is what the command itself reports): these tests hold that
every workload, on small inputs, gives numpy's values eager and compiled and compiles as one
graph; that the checks the command makes before timing can fail; and that the command runs
end to end, quickly, on a machine without PyTorch.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch

ROOT = Path(__file__).resolve().parent.parent
# The benchmarks are scripts that import their neighbours (`from workloads import ...`), so
# their folder goes on the path, as running one of them puts it.
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench  # noqa: E402
from workloads import WORKLOADS, FunctionWorkload, sincos_numpy  # noqa: E402


@pytest.mark.parametrize("workload", WORKLOADS, ids=[w.name for w in WORKLOADS])
def test_workload_equals_numpy_and_compiles_whole(workload):
    minitorch._dynamo.reset()
    arrays = workload.inputs(np.random.default_rng(0), tiny=True)
    impls = bench.implementations(workload, arrays, torch=None)
    assert list(impls) == ["numpy", "minitorch", "minitorch.compile"]
    assert bench.check(workload, arrays, impls) is None


def test_check_reports_a_value_unlike_numpys():
    workload = WORKLOADS[0]
    arrays = workload.inputs(np.random.default_rng(0), tiny=True)
    impls = bench.implementations(workload, arrays, torch=None)
    run, observe = impls["minitorch.compile"]
    impls["minitorch.compile"] = (lambda: run() + 1e-3, observe)
    problem = bench.check(workload, arrays, impls)
    assert problem is not None and problem.startswith("minitorch.compile differs from numpy")


def test_check_reports_a_graph_break():
    def program(torch):
        def f(x):
            y = torch.sin(x) ** 2
            print(end="")  # not capturable: the graph breaks here
            return y + torch.cos(x) ** 2

        return f

    workload = FunctionWorkload(
        "broken", "sincos with a break", 3.0, program, sincos_numpy, WORKLOADS[0].make_inputs
    )
    arrays = workload.inputs(np.random.default_rng(0), tiny=True)
    problem = bench.check(workload, arrays, bench.implementations(workload, arrays, None))
    assert problem is not None and "does not compile it whole" in problem, problem
    assert "Graph break count: 1" in problem


def test_numpy_training_step_trains():
    # The hand-written backward is checked against minitorch's above; here, that its SGD
    # update lowers the loss, i.e. that it steps against the gradient.
    workload = next(w for w in WORKLOADS if w.name == "mlp")
    run, observe = workload.numpy_implementation(
        workload.inputs(np.random.default_rng(0), tiny=True)
    )
    losses = [observe(run())[0] for _ in range(50)]
    assert losses[-1] < losses[0], losses


def test_bench_runs_quick_without_torch(tmp_path):
    # PyTorch "missing": a package named torch that fails to import shadows the real one.
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('no torch here')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    names = ["sincos", "mlp", "chain"]
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--tiny", "--only", *names],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "torch not installed" in out
    titles = [w.title for w in WORKLOADS if w.name in names]
    number = r"\d[\d.e+-]*"
    # speed: numpy, minitorch, minitorch.compile timed; torch's columns and the ratio empty
    speed = re.findall(
        rf"^\| (.+?) \| {number} \| {number} \| {number} \| — \| — \| — \| ≥ "
        rf"\S+ \| — \|$",
        out,
        re.M,
    )
    assert speed == titles, out
    assert re.search(
        r"^Copy floor for sincos .*: \S+ ms; minitorch.compile / copy floor = "
        rf"{number} \(target ≤ 2: (pass|\*\*FAIL\*\*)\)$",
        out,
        re.M,
    ), out
    # compile times: minitorch's cold and warm measured, torch.compile's empty
    compiles = re.findall(rf"^\| (.+?) \| -?{number} s \| -?{number} ms \| — \| — \|", out, re.M)
    assert compiles == titles, out


def test_partitioners_states_what_each_saves_and_min_cut_saves_no_more(tmp_path):
    env = {**os.environ, "MINITORCH_CACHE_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "partitioners.py"), "--tiny", "--rounds", "2"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = re.findall(
        r"^\| (.+?) \| ([\d,]+) B \((\d+)\) \| ([\d,]+) B \((\d+)\) \| "
        r"[\d.e+-]+ ms \| [\d.e+-]+ ms \|$",
        result.stdout,
        re.M,
    )
    assert [row[0] for row in rows] == [
        "sincos 1e7",
        "gelu (tanh form) 1e7",
        "MLP 784-256-256-10, batch 256",
    ], result.stdout
    for _, default, _, min_cut, _ in rows:
        assert int(min_cut.replace(",", "")) <= int(default.replace(",", ""))
    sincos = rows[0]  # sin and cos saved, or only x: half the bytes
    assert (sincos[2], sincos[4]) == ("2", "1")


def test_first_call_with_the_compiler_imported(tmp_path):
    """`first_call.py --imported` loads the pipeline before its clock starts (the code
    generator included, which a first call would import), and still prints seconds."""
    env = {**os.environ, "MINITORCH_CACHE_DIR": str(tmp_path)}
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "first_call.py"),
        "chain",
        "minitorch",
        "--tiny",
        "--imported",
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    float(result.stdout)
    loads = (
        "import sys; sys.path.insert(0, 'benchmarks'); import first_call; "
        "loaded = lambda: 'codegen.llvm.backend' in sys.modules; print(loaded()); "
        "first_call.load_compiler(); print(loaded())"
    )
    result = subprocess.run(
        [sys.executable, "-c", loads], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.stdout.split() == ["False", "True"], result.stderr


def test_models_table_has_every_workload_and_nothing_wrong():
    # benchmarks/model_steps.py on small shapes, PyTorch left out: every system checked against
    # minitorch eager, then timed once.
    from model_steps import WORKLOADS as MODEL_WORKLOADS

    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "model_steps.py"), "--tiny", "--no-torch"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "WRONG" not in out and "ERROR" not in out, out
    number = r"\d[\d.e+-]*"
    rows = re.findall(rf"^\| (.+?) \| {number} \| {number} \| — \| — \| — \|$", out, re.M)
    assert rows == [w.title for w in MODEL_WORKLOADS], out
