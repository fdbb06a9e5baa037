"""Every test here runs with the checkers on (MINITORCH_CHECK=1, as CI runs this suite)."""

from __future__ import annotations

import pytest

from minitorch import config


@pytest.fixture(autouse=True)
def _checks_on(monkeypatch):
    """config.check: fx's lint after capture and AOT, the loop IR's verify after scheduling."""
    monkeypatch.setattr(config, "check", True)
