"""The code cache filled from several threads at once ([Note: the cache and threads] in
tracer/dynamo/cache.py): one entry per distinct compile, never one per thread, each thread's
values its own, and explain()'s private caches private to the thread that runs it."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from tests.test_threads import THREADS, run_threads
from tests.tracer.dynamo.helpers import CountingBackend, assert_same
from tracer.dynamo import cache_entries, fallback_reasons, optimize, recompile_reasons

pytestmark = pytest.mark.capture


def scale_and_sum(x, y):
    return (x * 2 + y).sum()


def with_a_break(x):
    y = x.sin()
    print(end="")  # a graph break: a resume function runs the rest
    return y * x.shape[0]


def test_threads_missing_together_compile_one_entry():
    """Every thread's first call misses at once: one compiles, the others wait for it and
    use its entry (without the lock, each would add its own)."""
    backend = CountingBackend()
    compiled = optimize(scale_and_sum, backend=backend)
    x, y = minitorch.randn(3, 4), minitorch.randn(3, 4)

    def work(i: int) -> None:
        for _ in range(20):
            assert_same(compiled(x, y), scale_and_sum(x, y))

    run_threads(work)
    assert len(cache_entries(scale_and_sum)) == 1
    assert backend.count == 1 and recompile_reasons(scale_and_sum) == []


def test_each_thread_its_own_shape():
    """Static shapes, one per thread, all compiled at once: one entry per shape, each call
    answered by the entry for its own shape."""
    compiled = optimize(scale_and_sum, backend=CountingBackend(), dynamic=False)
    inputs = [(minitorch.randn(i + 2, 3), minitorch.randn(i + 2, 3)) for i in range(THREADS)]

    def work(i: int) -> None:
        for _ in range(20):
            assert_same(compiled(*inputs[i]), scale_and_sum(*inputs[i]))

    run_threads(work)
    assert len(cache_entries(scale_and_sum)) == THREADS
    assert len(recompile_reasons(scale_and_sum)) == THREADS - 1
    assert fallback_reasons(scale_and_sum) == []


def test_graph_breaks_and_resume_functions_from_several_threads():
    compiled = optimize(with_a_break, backend=CountingBackend(), dynamic=False)
    inputs = [minitorch.randn(i + 2) for i in range(THREADS)]

    def work(i: int) -> None:
        for _ in range(10):
            assert_same(compiled(inputs[i]), with_a_break(inputs[i]))

    run_threads(work)
    assert len(cache_entries(with_a_break)) == THREADS


def test_explain_in_one_thread_while_another_compiles():
    """explain() compiles into private caches: only for its own thread. Another thread's
    compiles at the same time go to the shared caches, and explain() reports none of them."""
    x = minitorch.randn(3, 4)
    shared = optimize(scale_and_sum, backend=CountingBackend(), dynamic=False)
    explained = []

    def work(i: int) -> None:
        if i == 0:
            for _ in range(5):
                explained.append(minitorch._dynamo.explain(with_a_break)(x))
        else:
            for n in range(2, 7):
                y = minitorch.randn(n, 4)
                np.testing.assert_allclose(
                    shared(y, y).item(), scale_and_sum(y, y).item(), rtol=1e-5
                )

    run_threads(work, n=2)
    assert len(cache_entries(scale_and_sum)) == 5  # none lost into explain's private table
    assert cache_entries(with_a_break) == []  # explain's entries stayed private
    assert all(out.graph_count == 2 and out.graph_break_count == 1 for out in explained)
