"""For every test: `@pytest.mark.extras("thread_pool", ...)` says the test is about those
extras, so they are on for it whatever the configuration (MINITORCH_CORE=1 turns every extra
off: [Note: the core and its extras] in minitorch/config.py), and restored after it."""

import pytest

from minitorch import config


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "extras(*names): the extras the test needs switched on")


@pytest.fixture(autouse=True)
def extras_the_test_is_about(request: pytest.FixtureRequest):
    names = [name for mark in request.node.iter_markers("extras") for name in mark.args]
    saved = {name: getattr(config, name) for name in names}
    for name in names:
        setattr(config, name, True)
    yield
    for name, value in saved.items():
        setattr(config, name, value)
