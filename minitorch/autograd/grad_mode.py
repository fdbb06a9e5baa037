"""Grad mode, per thread: `no_grad()`, `enable_grad()` and `set_grad_enabled(mode)`, as in PyTorch.

    with minitorch.no_grad(): ...           # a block that records nothing
    @minitorch.no_grad                      # a function that records nothing (also no_grad())
    minitorch.set_grad_enabled(False)       # from here on
    with minitorch.set_grad_enabled(training): ...   # inside the block only

[Note: grad mode is per thread]
As in PyTorch, the mode belongs to the thread that sets it, and a new thread starts with grad
enabled. A process-wide flag would let one thread's `no_grad` (an evaluation loop, the engine
running a backward pass, a compiled forward) silently stop another thread from recording its
training step.

The flag is a `contextvars.ContextVar`, not a `threading.local`, for two reasons:
- speed: `is_grad_enabled()` runs on every op that has an input requiring grad, and reading a
  context variable costs about a third of an attribute of a `threading.local` (~10 ns more than
  a module global on CPython 3.11, against ~40 ns);
- asyncio: each task runs in its own copy of the context, so `with no_grad(): await ...` in one
  task does not switch off recording in the tasks that run on the same thread meanwhile.
Each thread starts in an empty context, so it sees the default, True. (Where Python makes new
threads inherit their parent's context, `sys.flags.thread_inherit_context`, the default of
free-threaded 3.14, a thread inherits the mode it was started under.) The dispatch-mode stack
(minitorch/dispatch.py) and the loop-IR ops handler (ir/ops_handler.py) are per thread the
same way.
"""

from __future__ import annotations

import contextvars
import functools

_enabled = contextvars.ContextVar("grad_enabled", default=True)


def is_grad_enabled() -> bool:
    return _enabled.get()


def _set(mode: bool) -> None:
    _enabled.set(bool(mode))


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


class inference_mode(_GradMode):  # noqa: N801 - PyTorch's name
    """`with minitorch.inference_mode():` for code that will never need gradients: as
    no_grad here (PyTorch also skips view and version bookkeeping inside, a speed-up minitorch
    does not need). `inference_mode(False)` leaves the mode as it is; a decorator too."""

    def __new__(cls, mode=True):
        if callable(mode):  # @inference_mode, without parentheses
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self._mode = mode

    def __enter__(self) -> None:
        self._previous = is_grad_enabled()
        if self._mode:
            _set(False)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(self._mode):  # a fresh manager per call, so calls nest
                return fn(*args, **kwargs)

        return wrapper
