"""Every capture test starts and ends with empty code caches (tracer.dynamo.reset)."""

from __future__ import annotations

import pytest

from tracer.dynamo import reset


@pytest.fixture(autouse=True)
def _fresh_caches():
    reset()  # a function may be compiled by several tests: each starts from nothing
    yield
    reset()
