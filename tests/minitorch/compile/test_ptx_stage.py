"""The `ptx` stage: every graph's kernels also made as PTX, on a machine with no GPU
([Note: compile-only PTX] in minitorch/compile/ptx.py)."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from codegen.cuda import backend as cuda_backend
from codegen.registry import get_backend
from minitorch import _logging, config
from minitorch.compile.inductor import compile_graph
from minitorch.compile.walkthrough import main
from minitorch.errors import CompileError
from tracer.aot import make_fx

ROOT = pathlib.Path(__file__).resolve().parents[3]
SINCOS = str(ROOT / "examples" / "sincos.py")


@pytest.fixture(autouse=True)
def fresh_frames():
    minitorch._dynamo.reset()  # every test compiles its functions anew, so the stage is made
    yield
    minitorch._dynamo.reset()


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def _ptx_artifacts(fn, *inputs) -> tuple[list[_logging.Artifact], object]:
    with _logging.Recorder(opt_in={"ptx"}) as rec:
        out = minitorch.compile(fn)(*inputs)
    return [a for a in rec.artifacts if a.stage == "ptx"], out


def test_the_walkthrough_shows_the_ptx_stage_beside_the_others_and_checks_pass(capsys):
    assert main([SINCOS, "--device", "cuda"]) == 0
    out = capsys.readouterr().out
    headers = re.findall(r"^\[(\w+)\] ", out, re.M)
    assert headers.count("ptx") == 2  # forward and backward
    assert headers.index("ptx") > headers.index("kernels") > headers.index("loop_ir")
    assert "OK   f: values" in out and re.search(r"^  ptx +\S+ ms$", out, re.M)


def test_stage_ptx_alone_asks_for_it_and_without_it_there_is_none(capsys):
    assert main([SINCOS, "--stage", "ptx"]) == 0
    out = capsys.readouterr().out
    assert re.findall(r"^\[(\w+)\]", out, re.M) == ["ptx", "ptx"]
    assert out.count(".visible .entry kernel0(") == 2
    assert main([SINCOS]) == 0
    assert "[ptx]" not in capsys.readouterr().out  # a second compile only when asked for


def test_minitorch_logs_ptx_prints_it(monkeypatch, capsys):
    monkeypatch.setattr(config, "logs", {"ptx"})
    minitorch.compile(lambda x: x.exp() * 3)(minitorch.randn(6))
    err = capsys.readouterr().err
    assert "[minitorch ptx] " in err and ".target sm_80" in err and "ld.global" in err
    assert "ptx" in _logging.NAMES


def test_a_kernel_of_a_dtype_the_cuda_backend_lacks_is_listed_not_fatal(monkeypatch):
    monkeypatch.setattr(get_backend("cuda"), "dtypes", frozenset({"float32"}))
    x = minitorch.randn(5, dtype=minitorch.float64)
    (ptx,), out = _ptx_artifacts(lambda x: x.sin() + 1, x)
    np.testing.assert_allclose(out.numpy(), np.sin(x.numpy()) + 1, rtol=1e-12)  # the CPU's run
    assert ptx.title.endswith(": 0 of 1 PTX kernel(s)")
    assert ptx.text == "// kernel0: not generated: cuda has no float64 kernels"


def test_a_kernel_the_generator_refuses_is_named_with_why_and_the_others_are_made(monkeypatch):
    generate = cuda_backend.generate_kernel

    def refusing(kernel, dtypes, sizes=()):
        if kernel.name == "kernel1":
            raise CompileError("no PTX for this one")
        return generate(kernel, dtypes, sizes)

    monkeypatch.setattr(cuda_backend, "generate_kernel", refusing)
    inputs = [
        t.requires_grad_() for t in (minitorch.randn(4, 8), minitorch.ones(8), minitorch.zeros(8))
    ]
    ptx, out = _ptx_artifacts(layer_norm, *inputs)
    np.testing.assert_allclose(
        out.detach().numpy(), layer_norm(*inputs).detach().numpy(), rtol=1e-6, atol=1e-6
    )
    forward = ptx[0]  # three kernels, the middle one refused
    assert forward.title.endswith(": 2 of 3 PTX kernel(s)"), forward.title
    assert forward.text.startswith("// kernel1: not generated: CompileError: no PTX for this one\n")
    assert re.findall(r"^\.visible \.entry (\w+)\(", forward.text, re.M) == [
        "part0_kernel0",
        "part1_kernel2",
    ]


def test_a_graph_compiled_for_the_gpu_records_its_own_ptx_compiled_once(monkeypatch):
    compile_ptx, calls = cuda_backend.compile_ptx, []
    monkeypatch.setattr(
        cuda_backend, "compile_ptx", lambda sources: calls.append(sources) or compile_ptx(sources)
    )
    gm = make_fx(lambda x: (x.sin() * x.cos(),))(minitorch.randn(64))
    with _logging.Recorder(opt_in={"ptx"}) as rec:
        compiled = compile_graph(gm, get_backend("cuda"))  # never run: no GPU here
    (ptx,) = [a.text for a in rec.artifacts if a.stage == "ptx"]
    assert len(calls) == 1 and ptx == compiled.kernels[0].module_source
