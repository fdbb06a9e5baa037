"""Random straight-line programs: the compiled function equals the eager one, on every Python.

Hypothesis writes small functions in the subset this issue captures (operators, in-place
operators, methods, minitorch functions, shape reads, tuples), compiles each with the eager
backend, and compares; every program must be captured whole.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from tests.tracer.dynamo.helpers import CountingBackend, assert_same
from tracer.dynamo import fallback_reasons, optimize

pytestmark = pytest.mark.capture

# Each line reads and writes the tensors a, b (same shape) and may read n (an int argument).
LINES = [
    "a = a + b",
    "a = a - b * 2",
    "b = b * a",
    "a = -a",
    "a = a ** 2",
    "b = 1.5 - b",
    "a += b",
    "b *= n",
    "a -= 1",
    "b /= 4",
    "a = a.sin()",
    "b = b.cos()",
    "a = minitorch.exp(minitorch.neg(a * a))",
    "b = minitorch.add(b, a, alpha=n)",
    "a = a * a.shape[0]",
    "b = b + len(b.shape)",
    "a, b = b, a",
    "a = a.reshape(a.shape[0], -1)",
    "b = b.reshape(b.shape)",
    "n = n + a.ndim",
    "t = (a, n)",
    "a = t[0] * t[1]",
]


def make_program(lines: list[str], returns: str) -> object:
    body = "\n".join(f"    {line}" for line in lines)
    source = f"def program(a, b, n):\n    t = (a, n)\n{body}\n    return {returns}\n"
    namespace = {"minitorch": minitorch}
    exec(compile(source, "<random program>", "exec"), namespace)  # noqa: S102
    return namespace["program"]


@settings(max_examples=40, deadline=None)
@given(
    lines=st.lists(st.sampled_from(LINES), min_size=1, max_size=8),
    returns=st.sampled_from(["a", "(a, b)", "(a, (b, n))", "a.sum(dim=0)", "n"]),
    shape=st.sampled_from([(3,), (2, 3)]),
    n=st.integers(1, 3),
)
def test_random_programs_match_eager(lines, returns, shape, n):
    program = make_program(lines, returns)
    a, b = minitorch.randn(*shape), minitorch.randn(*shape)
    backend = CountingBackend()
    compiled = optimize(program, backend=backend)
    # Each run gets its own copies: in-place lines mutate their inputs.
    try:
        expected = program(a.clone(), b.clone(), n)
    except minitorch.MinitorchError as e:  # an invalid program (a += b that would grow a)
        with pytest.raises(type(e)):
            compiled(a.clone(), b.clone(), n)
        return
    mine, theirs = (a.clone(), b.clone()), (a.clone(), b.clone())
    assert_same(compiled(*mine, n), expected)
    program(*theirs, n)
    assert_same(mine, theirs)  # `a += b` on an input: written back into the caller's tensor
    mutates = any(op in line for line in lines for op in ("+=", "-=", "*=", "/="))
    reasons = fallback_reasons(program)
    # only a write into a view (after a reshape), or a view of a written input that is
    # returned ([Note: output aliasing]), still runs eagerly
    assert reasons == [] or (
        mutates and ("mutates it" in reasons[0] or "mutates in place" in reasons[0])
    )
    # same guards: the cache hits
    assert_same(compiled(b.clone(), a.clone(), n), program(b.clone(), a.clone(), n))
    assert backend.count <= 1
