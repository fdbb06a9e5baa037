"""The guard suite: change one thing a compiled function depends on, then compare with eager.

The cases are in test_guard_suite.py and test_guard_suite_objects.py; this module runs them.

Each case compiles a function, calls it, changes one thing the function reads (an argument's
shape or memory, a global, a closure cell, a default, a module attribute, a method of a class,
a function of a module, the grad mode), and calls it again. Both calls are compared with the
function run eagerly on equal, separate inputs: the outputs' values, dtypes, shapes and
requires_grad, and the inputs after the call (in-place writes). A compiled call that reused a
graph traced before the change, under a guard that did not notice it, gives the old answer.

Every case is written so that the change changes eager's answer (checked), so each one can
fail. Run on all three backends: the guard is the backend's business as much as capture's,
since "eager" runs the captured graph and "inductor" runs kernels compiled from it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import numpy as np
import pytest

import minitorch
from tests.tracer.dynamo.helpers import assert_same
from tracer.dynamo import cache_entries, fallback_reasons

BACKENDS = ("eager", "aot_eager", "inductor")


@dataclass
class Case:
    """A function, its arguments, and the one thing to change between two calls."""

    fn: Callable
    inputs: Callable[[], tuple]  # fresh arguments, equal on every call
    change: Callable[[pytest.MonkeyPatch], None] = lambda mp: None  # undone after the test
    after: Callable[[], tuple] | None = None  # the second call's arguments, if they change
    around: Callable[[], AbstractContextManager] = nullcontext  # around the second call


def registry(cases: dict[str, Callable[[], Case]]) -> Callable:
    """A decorator that adds a case factory to `cases`, by its name."""

    def case(factory: Callable[[], Case]) -> Callable[[], Case]:
        cases[factory.__name__] = factory
        return factory

    return case


def data(*shape: int, dtype=np.float32, start: float = 1.0) -> minitorch.Tensor:
    """A tensor with distinct, exactly representable values: start, start + 0.25, ..."""
    n = int(np.prod(shape))
    return minitorch.from_numpy((np.arange(n) * 0.25 + start).astype(dtype).reshape(shape))


def double(x):
    return x * 2


def triple(x):
    return x * 3


def check_case(c: Case, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Call compiled and eager, change the one thing, call both again: the same answers."""
    compiled = minitorch.compile(c.fn, backend=backend)
    after = c.after or c.inputs
    eager_results = []
    for step, (make_inputs, around) in enumerate([(c.inputs, nullcontext), (after, c.around)]):
        if step == 1:
            c.change(monkeypatch)
        compiled_args, eager_args = make_inputs(), make_inputs()
        with around():
            actual = compiled(*compiled_args)
        with around():
            expected = c.fn(*eager_args)
        assert_same(actual, expected)
        assert_same(compiled_args, eager_args)  # the same in-place writes to the inputs
        eager_results.append((expected, eager_args))
    assert _differs(*eager_results), "the change must change eager's answer"
    assert any(e.transformed is not None for e in cache_entries(compiled)), (
        f"nothing was captured: {fallback_reasons(compiled)}"
    )


def _differs(a, b) -> bool:
    try:
        assert_same(a, b)
    except AssertionError:
        return True
    return False
