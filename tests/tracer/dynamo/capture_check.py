"""Shared by the test_capture_* files: one graph, no break, and compiled equal to eager.

`check_whole(fn, make_args)` calls `make_args()` twice (the same values each time: a seed), runs
`fn` eagerly on one set and compiled (the default backend, the whole pipeline) on the other,
and compares everything eager leaves behind: the outputs, every input (mutations), and the
gradient of every input that requires grad after `backward()` of the outputs' sum. `explain`
of the same call must show one graph and no graph break.
"""

from __future__ import annotations

import numpy as np

import minitorch
from minitorch._dynamo import explain


def _tensors(value) -> list:
    """The tensors inside a value (tuples, lists, named tuples), in order."""
    if isinstance(value, minitorch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return []


def _same(actual, expected, what: str) -> None:
    assert type(actual) is type(expected), (what, type(actual), type(expected))
    assert tuple(actual.shape) == tuple(expected.shape), what
    assert actual.dtype is expected.dtype, what
    np.testing.assert_allclose(
        actual.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=what
    )


def _backward(outputs: list) -> None:
    losses = [t.sum() for t in outputs if t.requires_grad]
    if losses:
        sum(losses[1:], losses[0]).backward()


def check_whole(fn, make_args, backend: str = "inductor") -> None:
    """See the module docstring; `make_args()` returns a tuple of fn's arguments."""
    eager_args, compiled_args, explain_args = make_args(), make_args(), make_args()
    report = explain(fn)(*explain_args)
    assert (report.graph_count, report.graph_break_count) == (1, 0), str(report)
    minitorch._dynamo.reset()
    expected = fn(*eager_args)
    actual = minitorch.compile(fn, backend=backend)(*compiled_args)
    assert type(actual) is type(expected)
    for i, (a, e) in enumerate(zip(_tensors(actual), _tensors(expected), strict=True)):
        _same(a, e, f"output {i}")
    for i, (a, e) in enumerate(zip(_tensors(compiled_args), _tensors(eager_args), strict=True)):
        _same(a, e, f"input {i} after the call")
    _backward(_tensors(expected))
    _backward(_tensors(actual))
    for i, (a, e) in enumerate(zip(_tensors(compiled_args), _tensors(eager_args))):
        assert (a.grad is None) == (e.grad is None), f"grad of input {i}"
        if e.grad is not None:
            _same(a.grad, e.grad, f"grad of input {i}")
