"""Which backends the conformance suite grades, and the `backend` every test here takes.

    pytest tests/conformance                       # every registered backend
    pytest tests/conformance --backend llvm        # one (repeat, or "llvm,interpreter")
    pytest tests/conformance --backend mine -p my_backend_plugin   # a student's (README.md)

A test that takes `backend` runs once per chosen backend. A test whose other parameters depend
on the backend (an op is graded on the dtypes the backend claims) says so with

    @pytest.mark.backend_cases("op, dtype", op_cases)   # op_cases(backend) -> [(op, dtype), ...]
    def test_op(backend, op, dtype): ...

and gets one case per (backend, *values) pair, with ids like `llvm-sin-float32`.

Every test runs with the checkers on (config.check, MINITORCH_CHECK=1): the loop IR each test
schedules is verified.
"""

from __future__ import annotations

import pytest

from codegen.backend import Backend
from codegen.registry import backend_names, get_backend
from minitorch import config as minitorch_config
from minitorch.device import cuda_is_available
from minitorch.errors import CompileError


@pytest.fixture(autouse=True)
def _checks_on(monkeypatch):
    """config.check: fx's lint after capture and AOT, the loop IR's verify after scheduling."""
    monkeypatch.setattr(minitorch_config, "check", True)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "backend_cases(argnames, cases): parametrize argnames with cases(backend), per backend",
    )
    chosen_backends(config)  # an unknown name fails now, once, as a usage error


def chosen_backends(config: pytest.Config) -> list[Backend]:
    """The backends named by --backend (all registered ones if none was), made on first use."""
    names = [n.strip() for option in config.getoption("backend") for n in option.split(",")]
    names = [n for n in names if n] or backend_names()
    try:
        return [get_backend(name) for name in names]
    except CompileError as error:  # a typo, or a backend of one's own left unregistered
        raise pytest.UsageError(
            f"--backend: {error}. A backend of your own must be registered before the tests "
            "are collected: see tests/conformance/README.md"
        ) from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    backends = chosen_backends(metafunc.config)
    marker = metafunc.definition.get_closest_marker("backend_cases")
    if marker is None:
        metafunc.parametrize(
            "backend", [pytest.param(b, id=b.name, marks=_device_marks(b)) for b in backends]
        )
        return
    argnames, cases = marker.args
    names = ["backend", *(name.strip() for name in argnames.split(","))]
    params = []
    for backend in backends:
        for values in cases(backend):
            values = values if isinstance(values, tuple) else (values,)
            case_id = "-".join([backend.name, *(str(v) for v in values)])
            params.append(pytest.param(backend, *values, id=case_id, marks=_device_marks(backend)))
    metafunc.parametrize(names, params)


def _device_marks(backend: Backend) -> list[pytest.MarkDecorator]:
    """A skip for a backend whose device this machine lacks (the CUDA one without a GPU: its
    kernels are graded here through the grid emulation, `cuda_emulator`)."""
    if backend.device == "cuda" and not cuda_is_available():
        return [pytest.mark.skip(reason=f"{backend.name!r} runs on a GPU; none here")]
    return []
