"""Shared by the capture tests: a backend that counts graphs, and eager-vs-compiled checks."""

from __future__ import annotations

import numpy as np

import minitorch
from tracer.dynamo import optimize


class CountingBackend:
    """A backend that records every graph it is handed and runs it as Python code."""

    def __init__(self) -> None:
        self.graphs = []  # the GraphModules, in the order they were compiled
        self.example_inputs = []  # the example_inputs of each

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        self.example_inputs.append(list(example_inputs))
        return gm.forward

    @property
    def count(self) -> int:
        return len(self.graphs)


def assert_same(actual, expected) -> None:
    """Equal values of the same structure: tensors by value (and dtype), the rest by ==."""
    assert type(actual) is type(expected), (type(actual), type(expected))
    if isinstance(expected, minitorch.Tensor):
        assert actual.shape == expected.shape
        assert actual.dtype is expected.dtype
        assert actual.requires_grad == expected.requires_grad
        np.testing.assert_allclose(
            actual.detach().numpy(), expected.detach().numpy(), rtol=1e-6, atol=1e-6
        )
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    elif isinstance(expected, dict):
        assert list(actual) == list(expected)  # the same keys, in the same order
        for k in expected:
            assert_same(actual[k], expected[k])
    else:
        assert actual == expected


def check_compiled(fn, *args, **kwargs) -> CountingBackend:
    """Compile `fn`, require that it captured without falling back, and compare with eager."""
    from tracer.dynamo import fallback_reasons

    backend = CountingBackend()
    compiled = optimize(fn, backend=backend)
    assert_same(compiled(*args, **kwargs), fn(*args, **kwargs))
    assert fallback_reasons(fn) == []
    return backend


def guard_parts(entry) -> str:
    """The parts of an entry's guard, one a line: what it checks, a tensor's facts one by one
    (its code checks them as one tuple: [Note: a tensor guard is one tuple])."""
    return "\n".join(part.code for part in entry.guard.parts)
