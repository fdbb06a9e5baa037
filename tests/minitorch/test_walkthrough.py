"""The walkthrough CLI: `python -m minitorch.compile script.py` shows every stage."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from minitorch import _logging
from minitorch.compile.walkthrough import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
SINCOS = str(ROOT / "examples" / "sincos.py")
HEADERS = [
    "[graph]",
    "[joint]",
    "[forward]",
    "[backward]",
    "[loop_ir]",
    "[kernels]",
    "[check]",
    "[time]",
]


def test_every_stage_is_shown_and_the_check_passes(capsys):
    assert main([SINCOS]) == 0
    out = capsys.readouterr().out
    positions = [out.index(h) for h in HEADERS]
    assert positions == sorted(positions)  # in pipeline order
    assert "def guard(L, G):" in out  # the guards come with the captured graph
    assert "def inner_fn(index):" in out and "define internal void" in out
    assert "OK   f: values max |eager - compiled|" in out
    assert "max |grad| = 0" in out  # d/dx (sin² + cos²) = 0


def test_one_stage_and_a_dump_dir(capsys, tmp_path):
    assert main([SINCOS, "--stage", "loop_ir", "--dump-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "[loop_ir]" in out and "[graph]" not in out and "[check]" not in out
    dumped = sorted(p.name for p in tmp_path.iterdir())
    assert len(dumped) == 2 and all("loop_ir" in name for name in dumped)  # forward, backward


@pytest.mark.parametrize(
    "backend, source",
    [
        ("llvm", "define internal void"),
        ("numpy", "def kernel0("),
        ("interpreter", "def inner_fn(index):"),
    ],
)
def test_a_code_generator_by_name_shows_its_kernels_under_its_own_name(capsys, backend, source):
    assert main([SINCOS, "--backend", backend, "--stage", "kernels"]) == 0
    out = capsys.readouterr().out
    assert f"1 {backend} kernel(s)" in out and source in out


def test_another_backend(capsys):
    assert main([SINCOS, "--backend", "aot_eager"]) == 0
    out = capsys.readouterr().out
    assert "[joint]" in out and "[loop_ir]" not in out and "OK   f" in out


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (["no/such/script.py"], 2, "no such script"),
        ([SINCOS, "--backend", "nonsense"], 2, "unknown backend"),
    ],
)
def test_bad_arguments_get_a_clear_message(capsys, argv, code, message):
    assert main(argv) == code
    assert message in capsys.readouterr().err


def test_a_broken_script_gets_its_traceback_and_a_non_zero_exit(tmp_path, capsys):
    script = tmp_path / "broken.py"
    script.write_text("import minitorch\nminitorch.ones(3) + minitorch.ones(4)\n")
    assert main([str(script)]) == 1
    err = capsys.readouterr().err
    assert "raised an exception" in err and "ShapeError" in err and "broken.py" in err


def test_nothing_is_recorded_outside_the_walkthrough():
    assert not _logging._recorders


def test_python_dash_m_runs_without_a_runpy_warning():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-W", "error", "-m", "minitorch.compile", SINCOS, "--stage", "graph"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "[graph]" in result.stdout and "RuntimeWarning" not in result.stderr


def test_each_stage_reports_how_long_it_took():
    """A stage's seconds are a duration, no longer than the whole compile of the function."""
    import time

    import minitorch

    with _logging.Recorder() as rec:
        start = time.perf_counter()
        minitorch.compile(lambda x: (x.sin() * 2).sum())(minitorch.randn(4, requires_grad=True))
        total = time.perf_counter() - start
    timed = [a for a in rec.artifacts if a.seconds is not None]
    assert {a.stage for a in timed} >= {"joint", "forward"}
    assert all(0 <= a.seconds <= total for a in timed)
