"""Assignment 5, `backend`: a CPU backend, graded by the conformance suite and by training.

    python -m minitorch.course grade backend --plugin my_backend.py

The student writes a code generator (a `codegen.backend.Backend`, [Note: writing a backend])
and registers it (`codegen.registry.register_backend`). Every backend the plugins registered
is graded:

    one part per file of tests/conformance   the backend conformance suite, run by pytest in
                                             a process of its own (`--backend NAME -p PLUGIN`,
                                             tests/conformance/README.md), one case per test
    an MLP, compiled and trained             `minitorch.compile(model, backend=NAME)` trains a
                                             classifier (Linear, GELU, LayerNorm, cross
                                             entropy, Adam) as eager mode does, on batches of
                                             two sizes, with kernels of the backend's own

[Note: the conformance suite, from the grader]
The suite is the grade: it is run once per submission (for every part), whole, and its JUnit
report is split by file. `CONFORMANCE` names its files and their points, and
tests/course/test_backend.py checks that it names every file of tests/conformance, so a new
file of the suite is graded here too. The whole suite takes a few seconds on the numpy
backend, so CI grades the reference and the broken variants with it in full; a slow
student's backend takes what it takes.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import tempfile
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import numpy as np

from minitorch.course.grading import Assignment, Case, CaseFailed, Part, Submission

# the files of tests/conformance, and their points; the MLP part takes the rest of 100
CONFORMANCE = {
    "test_ops.py": 20,
    "test_layouts.py": 10,
    "test_reductions.py": 15,
    "test_multi_loop.py": 10,
    "test_symbolic_sizes.py": 10,
    "test_random_graphs.py": 10,
    "test_training.py": 10,
}
ROOT = pathlib.Path(__file__).resolve().parents[3]  # the repository: tests/conformance is here
SUITE = ROOT / "tests" / "conformance"


def _names(submission: Submission) -> list[str]:
    """The backends the plugins registered (grading.REGISTRIES["backends"])."""
    names = submission.names("backends")
    if not names:
        raise CaseFailed(
            "your plugin registered no backend: end it with "
            "codegen.registry.register_backend(MyBackend()) (see the starter, "
            "minitorch/course/starters/backend.py)"
        )
    return names


# ---- the conformance suite ---------------------------------------------------------------

# (backends, plugins) -> conformance file -> [(test id, failure or "")]: one run per submission
_RUNS: dict[tuple, dict[str, list[tuple[str, str]]] | CaseFailed] = {}


def _pytest_plugins(plugins: list[str]) -> tuple[list[str], list[str]]:
    """Each plugin as pytest's `-p` takes it (a module name), and the folders to put on the
    path for those that are files."""
    names, paths = [], []
    for plugin in plugins:
        path = pathlib.Path(plugin)
        if plugin.endswith(".py") or path.is_file():
            names.append(path.stem)
            paths.append(str(path.resolve().parent))
        else:
            names.append(plugin)
    return names, paths


def _command(names: list[str], plugins: list[str]) -> list[str]:
    modules, _ = _pytest_plugins(plugins)
    command = ["-m", "pytest", "tests/conformance", "--backend", ",".join(names)]
    return command + [a for module in modules for a in ("-p", module)]


def run_conformance(submission: Submission) -> dict[str, list[tuple[str, str]]]:
    """The suite's outcome for the submission's backends: per file, each test's id and its
    failure message ("" if it passed)."""
    names = _names(submission)
    key = (tuple(names), tuple(submission.plugins))
    if key not in _RUNS:
        try:
            _RUNS[key] = _run_suite(names, submission.plugins)
        except CaseFailed as failure:
            _RUNS[key] = failure  # every part fails with it, and the suite runs once
    if isinstance(_RUNS[key], CaseFailed):
        raise _RUNS[key]
    return _RUNS[key]


def _run_suite(names: list[str], plugins: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Run pytest on tests/conformance for the backends `names`, with the plugins loaded."""
    if not SUITE.is_dir():
        raise CaseFailed(f"the conformance suite is not at {SUITE}: grade in a clone")
    _, paths = _pytest_plugins(plugins)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*paths, str(ROOT), env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as scratch:
        report = pathlib.Path(scratch) / "report.xml"
        command = [sys.executable, *_command(names, plugins)]
        command += ["-q", "-p", "no:cacheprovider", f"--junitxml={report}"]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        if not report.exists():
            raise CaseFailed(
                f"the conformance suite did not run:\n{(done.stdout + done.stderr)[-1500:]}"
            )
        outcomes: dict[str, list[tuple[str, str]]] = {name: [] for name in CONFORMANCE}
        for case in ET.parse(report).getroot().iter("testcase"):
            file = case.get("classname", "").rsplit(".", 1)[-1] + ".py"
            outcomes.setdefault(file, []).append((case.get("name", "?"), _failure(case)))
    return outcomes


def _failure(case: ET.Element) -> str:
    """A testcase's failure, error or skip: its message, in a few lines; "" if it passed."""
    for kind in ("failure", "error", "skipped"):
        found = case.find(kind)
        if found is not None:
            text = found.get("message") or found.text or ""
            lines = [line for line in text.strip().splitlines() if line.strip()]
            return f"{kind}: " + "\n    ".join(lines[:10])
    return ""


def conformance_part(file: str):
    """The cases of one conformance file: one per test the suite ran."""

    def cases(submission: Submission) -> Iterator[Case]:
        outcomes = run_conformance(submission)[file]
        modules, paths = _pytest_plugins(submission.plugins)
        path = f"PYTHONPATH={os.pathsep.join([*paths, '.'])} " if paths else ""
        if not outcomes:
            yield Case(f"{file}: no test ran", _fail(f"no test of tests/conformance/{file} ran"))
        for test, failure in outcomes:
            selected = " ".join(f"-p {m}" for m in modules)
            reproducer = (
                f"{path}python -m pytest tests/conformance/{file} "
                f"--backend {','.join(_names(submission))} {selected} -k '{_keyword(test)}'"
            )
            yield Case(test, _fail(failure) if failure else _ok, reproducer)

    return cases


def _keyword(test: str) -> str:
    """A `-k` expression that selects `test` ("test_op[mine-sin-float32]")."""
    name, _, params = test.partition("[")
    words = [name, *params.rstrip("]").replace("-", " ").split()]
    return " and ".join(w for w in words if w.isidentifier())


def _fail(message: str):
    def run() -> None:
        raise CaseFailed(message)

    return run


def _ok() -> None:
    pass


# ---- compiling and training an MLP ---------------------------------------------------------


def mlp_cases(submission: Submission) -> Iterator[Case]:
    for name in _names(submission):
        yield Case(
            f"{name}: compile(model, backend={name!r}) trains an MLP as eager mode does",
            lambda n=name: _check_training(submission, n),
            _mlp_reproducer(submission, name),
        )


def _mlp_reproducer(submission: Submission, name: str) -> str:
    loads = [f"load_plugin({p!r})" for p in submission.plugins]
    return "\n".join(
        [
            "from minitorch.compile.hooks import load_plugin",
            *loads,
            "from minitorch.course.assignments.backend import train",
            f"print(train({name!r}))  # the losses, compiled",
            "print(train(None))  # eager's",
        ]
    )


def _classifier():
    import minitorch
    from minitorch import nn

    minitorch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(6, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 16), nn.Tanh(),
        nn.Linear(16, 3),
    )  # fmt: skip


def train(backend: str | None, steps: int = 4) -> tuple[list[float], list[np.ndarray]]:
    """Train the classifier on batches of 12 and 7 rows with Adam, compiled with `backend`
    (None: eager); its losses and final parameters."""
    import minitorch
    import minitorch.nn.functional as F

    model = _classifier()
    step = model if backend is None else minitorch.compile(model, backend=backend)
    optimizer = minitorch.optim.Adam(model.parameters(), lr=0.05)
    rng = np.random.default_rng(0)
    losses = []
    for k in range(steps):
        rows = 12 if k % 2 == 0 else 7  # two sizes: the backend compiles for each, or for both
        x = minitorch.tensor(rng.normal(0, 1, (rows, 6)).astype(np.float32))
        y = minitorch.tensor(rng.integers(0, 3, rows))
        optimizer.zero_grad()
        loss = F.cross_entropy(step(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def _check_training(submission: Submission, name: str) -> None:
    from codegen.registry import get_backend
    from minitorch import config
    from tracer.dynamo import reset

    backend = get_backend(name)
    asked: list[str] = []
    original = backend.compile_kernels

    def counting(kernels, sizes=()):
        asked.extend(kernel.name for kernel, _ in kernels)
        return original(kernels, sizes)

    saved = config.graph_cache
    config.graph_cache = False  # [Note: grading compiled code afresh] in assignments/op.py
    backend.compile_kernels = counting
    reset()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "runs eagerly because backend ... failed"
            losses, parameters = train(name)
    finally:
        del backend.compile_kernels
        config.graph_cache = saved
        reset()
    if not asked:
        raise CaseFailed(f"backend {name!r} was never asked for a kernel")
    eager_losses, eager_parameters = train(None)
    if not np.allclose(losses, eager_losses, rtol=1e-4, atol=1e-6):
        raise CaseFailed(f"compiled losses {losses} differ from eager's {eager_losses}")
    for k, (got, want) in enumerate(zip(parameters, eager_parameters, strict=True)):
        if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
            raise CaseFailed(
                f"after training, parameter {k} (shape {list(want.shape)}) differs from "
                f"eager's by up to {np.abs(got - want).max():.3g}"
            )


ASSIGNMENT = Assignment(
    name="backend",
    title="A CPU backend",
    chapter="06-codegen",
    hook="codegen.registry.register_backend",
    starter="minitorch/course/starters/backend.py",
    reference="minitorch.course.reference.backend",
    minutes=240,
    parts=[
        *(
            Part(f"conformance: {file}", points, conformance_part(file))
            for file, points in CONFORMANCE.items()
        ),
        Part("an MLP, compiled and trained", 100 - sum(CONFORMANCE.values()), mlp_cases),
    ],
)
