"""Which device a graph is compiled for, and what happens without a GPU.

Inputs on one device pick that device's code generator (codegen/registry.py); inputs on two,
or a code generator named for another device, are a CompileError inside the compiler, so the
frame runs eagerly (with the reason recorded) and eager's own rules decide.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch
from codegen.registry import DEFAULT_FOR_DEVICE, default_backend
from minitorch import _logging
from minitorch.compile.inductor import _device
from minitorch.device import cuda_is_available
from minitorch.errors import CompileError
from tracer.dynamo import fallback_reasons


class OnGPU(minitorch.Tensor):
    """A host tensor that says it is on "cuda": what `_device` reads, without a GPU."""

    @property
    def device(self) -> minitorch.device:
        return minitorch.device("cuda")


def test_one_device_is_the_graphs_device():
    x, y = minitorch.ones(2), OnGPU._from_array(np.ones(2, np.float32))
    assert _device([x, 2.0, x]) == "cpu" and _device([y, y]) == "cuda"
    assert _device([]) == "cpu"


def test_inputs_on_two_devices_are_a_compile_error():
    x, y = minitorch.ones(2), OnGPU._from_array(np.ones(2, np.float32))
    with pytest.raises(CompileError, match=r"more than one device \(cpu, cuda\)"):
        _device([x, y])


def test_a_code_generator_for_another_device_is_a_compile_error():
    with pytest.raises(
        CompileError,
        match="'cuda' code generator compiles for tensors on 'cuda'; these are on 'cpu'",
    ):
        _device([minitorch.ones(2)], default_backend("cuda"))


def test_each_device_has_a_default_code_generator():
    assert DEFAULT_FOR_DEVICE == {"cpu": "llvm", "cuda": "cuda"}
    backend = default_backend("cuda")
    assert (backend.name, backend.device) == ("cuda", "cuda")


def test_cpu_tensors_compiled_for_the_gpu_run_eagerly_and_say_why():
    def f(x):
        return x.sin() * 2

    compiled = minitorch.compile(f, backend="cuda")
    x = minitorch.randn(5)
    with pytest.warns(UserWarning, match="runs eagerly because .*compiles for tensors on 'cuda'"):
        out = compiled(x)
    np.testing.assert_array_equal(out.numpy(), f(x).numpy())
    assert any("'cuda'" in reason for reason in fallback_reasons(f))


@pytest.mark.skipif(cuda_is_available(), reason="this machine has a GPU")
def test_without_a_gpu_a_compiled_cuda_tensor_is_the_same_device_error():
    @minitorch.compile
    def make(n):
        return minitorch.ones(n, device="cuda") * 2

    with pytest.raises(minitorch.DeviceError, match="'cuda' is not available"):
        make(3)


def test_the_ptx_stage_is_made_only_when_asked_for():
    def f(x):
        return x.cos() + 1

    x = minitorch.randn(8)
    with warnings.catch_warnings(), _logging.Recorder() as plain:
        warnings.simplefilter("error")
        minitorch.compile(f)(x)
    assert "ptx" not in {a.stage for a in plain.artifacts}
    assert not _logging.enabled("ptx")
    minitorch._dynamo.reset()
    with _logging.Recorder(opt_in={"ptx"}) as asked:
        assert _logging.enabled("ptx")
        minitorch.compile(f)(x)
    (ptx,) = [a for a in asked.artifacts if a.stage == "ptx"]
    assert ".visible .entry kernel0(" in ptx.text and ptx.title.endswith(": 1 PTX kernel(s)")
