"""Test-wide setup: the repository root is importable, each test starts with empty caches,
the kernel cache on disk lives in a temporary folder, the conformance suite's `--backend`
option, and ptxas on every PTX the tests generate (the plugin tests/codegen/cuda/ptxas_plugin.py).

`--backend NAME` lives here because pytest reads command-line options only from the top
conftest (and plugins): `pytest tests/conformance --backend llvm` and `pytest --backend llvm`
both need it before any test directory's conftest is seen. tests/conformance/conftest.py uses it.
"""

import os
import shutil
import tempfile

import pytest

# Every PTX the tests generate goes through ptxas at the end of the run (tests/codegen/cuda/).
pytest_plugins = ["tests.codegen.cuda.ptxas_plugin"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        action="append",
        default=[],
        metavar="NAME",
        help="a code generator for tests/conformance to grade (repeat it, or separate names "
        "with commas); default: every backend in codegen.registry.backend_names()",
    )


@pytest.fixture(autouse=True)
def _fresh_compile_caches():
    yield
    try:
        from tracer.dynamo import reset
    except ImportError:  # capture not built yet
        return
    reset()


def pytest_configure(config: pytest.Config) -> None:
    """Tests never write the user's ~/.cache: this process and the ones it starts (through the
    environment) keep compiled code in a temporary folder, removed at the end. Here, not in a
    fixture, because some test modules compile kernels as they are collected."""
    from minitorch import config as minitorch_config

    folder = tempfile.mkdtemp(prefix="minitorch-kernel-cache-")
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    os.environ["MINITORCH_CACHE_DIR"] = minitorch_config.cache_dir = folder
