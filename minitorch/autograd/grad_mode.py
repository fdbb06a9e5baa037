"""Global grad mode: `no_grad()` and `enable_grad()`, as context managers and decorators."""

from __future__ import annotations

import functools

_grad_enabled = True


def is_grad_enabled() -> bool:
    return _grad_enabled


def set_grad_enabled(mode: bool) -> None:
    global _grad_enabled
    _grad_enabled = bool(mode)


class _GradMode:
    """Sets grad mode inside a `with` block or a decorated function, then restores it."""

    enabled: bool

    def __enter__(self) -> None:
        self._previous = is_grad_enabled()
        set_grad_enabled(self.enabled)

    def __exit__(self, *exc) -> None:
        set_grad_enabled(self._previous)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Ops inside record no backward graph: `with minitorch.no_grad(): ...`."""

    enabled = False


class enable_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Turns recording back on inside a no_grad region."""

    enabled = True
