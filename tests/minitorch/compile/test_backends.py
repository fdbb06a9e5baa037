"""Backends by name: `minitorch._dynamo.register_backend`, `list_backends`, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from codegen import registry
from codegen.interpreter import InterpreterBackend
from minitorch.compile import backends
from minitorch.errors import CompileError


@pytest.fixture(autouse=True)
def private_registries(monkeypatch):
    """Registrations made by a test end with it."""
    monkeypatch.setattr(registry, "_FACTORIES", dict(registry._FACTORIES))
    monkeypatch.setattr(registry, "_MADE", dict(registry._MADE))
    monkeypatch.setattr(backends, "_COMPILERS", dict(backends._COMPILERS))
    minitorch._dynamo.reset()
    yield
    minitorch._dynamo.reset()


def f(x):
    return (x.sin() * x).sum(1)


class Counting(InterpreterBackend):
    """A student's backend: the interpreter, counting what it compiles."""

    name = "counting"
    symbolic_sizes = False  # so every new shape is one more compile

    def __init__(self) -> None:
        self.kernels = 0

    def compile_kernel(self, kernel, dtypes, sizes=()):
        self.kernels += 1
        return super().compile_kernel(kernel, dtypes, sizes)


def test_every_built_in_name_is_listed():
    assert {"eager", "aot_eager", "inductor", "llvm", "interpreter", "numpy"} <= set(
        minitorch._dynamo.list_backends()
    )


def test_a_registered_code_generator_runs_the_whole_pipeline_at_every_size():
    backend = Counting()
    minitorch._dynamo.register_backend("counting", backend)
    assert "counting" in minitorch._dynamo.list_backends()
    compiled = minitorch.compile(f, backend="counting")
    for n in (2, 3, 4, 5):
        x = minitorch.randn(n, 3)
        np.testing.assert_allclose(compiled(x).numpy(), f(x).numpy(), rtol=1e-6)
    assert backend.kernels >= 3  # no size symbols: compiled again per shape, not wrong


def test_a_registered_function_gets_each_captured_graph():
    graphs = []

    def record(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    minitorch._dynamo.register_backend("record", record)
    x = minitorch.randn(2, 3)
    np.testing.assert_allclose(minitorch.compile(f, backend="record")(x).numpy(), f(x).numpy())
    assert len(graphs) == 1


def test_names_are_registered_once_and_looked_up_when_compiling():
    with pytest.raises(CompileError, match="already registered"):
        minitorch._dynamo.register_backend("llvm", Counting())
    with pytest.raises(CompileError, match=r"unknown backend 'nope'; expected one of \["):
        minitorch.compile(f, backend="nope")
    with pytest.raises(CompileError, match="expected a codegen Backend"):
        minitorch._dynamo.register_backend("bad", 42)
