"""Test-wide setup: the repository root is importable, and each test starts with empty caches."""

import pytest


@pytest.fixture(autouse=True)
def _fresh_compile_caches():
    yield
    try:
        from tracer.dynamo import reset
    except ImportError:  # capture not built yet
        return
    reset()
