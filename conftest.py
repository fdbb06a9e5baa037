"""Test-wide setup: the repository root is importable, each test starts with empty caches,
the kernel cache on disk lives in a temporary folder, and the conformance suite's `--backend`
option.

`--backend NAME` lives here because pytest reads command-line options only from the top
conftest (and plugins): `pytest tests/conformance --backend llvm` and `pytest --backend llvm`
both need it before any test directory's conftest is seen. tests/conformance/conftest.py uses it.
"""

import pytest


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


@pytest.fixture(autouse=True, scope="session")
def _kernel_cache_in_a_temporary_folder(tmp_path_factory):
    """Tests never write the user's ~/.cache: this process and the ones it starts (through
    the environment) keep compiled code in a folder of their own."""
    from minitorch import config

    folder = str(tmp_path_factory.mktemp("kernel-cache"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(config, "cache_dir", folder)
        patch.setenv("MINITORCH_CACHE_DIR", folder)
        yield folder
