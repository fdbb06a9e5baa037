"""Global grad mode: `no_grad()`, `enable_grad()` and `set_grad_enabled(mode)`, as in PyTorch.

    with minitorch.no_grad(): ...           # a block that records nothing
    @minitorch.no_grad                      # a function that records nothing (also no_grad())
    minitorch.set_grad_enabled(False)       # from here on
    with minitorch.set_grad_enabled(training): ...   # inside the block only
"""

from __future__ import annotations

import functools

_grad_enabled = True


def is_grad_enabled() -> bool:
    return _grad_enabled


def _set(mode: bool) -> None:
    global _grad_enabled
    _grad_enabled = bool(mode)


class _GradMode:
    """Sets grad mode inside a `with` block or a decorated function, then restores it."""

    enabled: bool

    def __new__(cls, fn=None):
        # `@no_grad` without parentheses receives the function itself, as PyTorch allows.
        if fn is None:
            return super().__new__(cls)
        return cls()(fn)

    def __enter__(self) -> None:
        self._previous = is_grad_enabled()
        _set(self.enabled)

    def __exit__(self, *exc) -> None:
        _set(self._previous)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():  # a fresh manager per call, so recursive calls nest
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Ops inside record no backward graph: `with minitorch.no_grad(): ...`."""

    enabled = False


class enable_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Turns recording back on inside a no_grad region."""

    enabled = True


class set_grad_enabled:  # noqa: N801 - PyTorch's name
    """Set grad mode now; used in `with`, restore the previous mode when the block ends."""

    def __init__(self, mode: bool) -> None:
        self._previous = is_grad_enabled()
        _set(mode)

    def __enter__(self) -> None:
        pass  # the constructor already set the mode

    def __exit__(self, *exc) -> None:
        _set(self._previous)
