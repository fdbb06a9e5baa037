"""Splitting [0, n) into chunks, and running them on the persistent pool."""

import os
import signal
import threading
import time

from hypothesis import given
from hypothesis import strategies as st

from codegen.llvm.parallel import _thread_pool, parallel_for, pieces
from minitorch import config


@given(st.integers(1, 10_000), st.integers(1, 8), st.integers(1, 500))
def test_pieces_cover_the_range_in_order_and_shrink(n, threads, grain):
    cut = pieces(n, threads, grain)
    assert cut[0][0] == 0 and cut[-1][1] == n
    assert all(end == next_start for (_, end), (next_start, _) in zip(cut, cut[1:]))
    sizes = [end - start for start, end in cut]
    assert all(size >= grain for size in sizes[:-1]) and sizes[-1] > 0
    assert sizes == sorted(sizes, reverse=True)[:-1] + sizes[-1:]  # only the last may be small
    assert sizes[0] <= max(grain, n // threads)


def test_pieces_example():
    assert pieces(100, 2, 10) == ((0, 50), (50, 75), (75, 87), (87, 97), (97, 100))


def _record(calls):
    def run(start, end):
        calls.append((start, end, threading.get_ident()))

    return run


def test_small_work_runs_inline_on_the_calling_thread():
    calls = []
    parallel_for(_record(calls), 100, work=100)
    assert calls == [(0, 100, threading.get_ident())]


def test_large_work_is_split_across_threads(monkeypatch):
    monkeypatch.setattr(config, "num_threads", 2)
    calls, both_started = [], threading.Barrier(2, timeout=10)

    def run(start, end):
        # Each thread's first piece waits for the other's: pure Python holds the GIL, and one
        # thread could otherwise claim every piece before the other runs at all.
        if threading.get_ident() not in {thread for _, _, thread in calls}:
            both_started.wait()
        calls.append((start, end, threading.get_ident()))

    parallel_for(run, 1000, work=config.parallel_threshold * 1000)
    assert sorted((start, end) for start, end, _ in calls) == list(pieces(1000, 2))
    assert len({thread for _, _, thread in calls}) == 2  # the caller ran pieces itself


def test_the_caller_does_not_wait_for_a_pool_thread_that_is_busy(monkeypatch):
    # A pool thread that wakes up late (here: busy until the call is over) claims nothing,
    # and the call returns without it: the caller ran every piece.
    monkeypatch.setattr(config, "num_threads", 2)
    release = threading.Event()
    blocker = _thread_pool().submit(release.wait, 10)
    try:
        calls = []
        parallel_for(_record(calls), 1000, work=config.parallel_threshold * 1000)
        assert sorted((start, end) for start, end, _ in calls) == list(pieces(1000, 2))
        assert {thread for _, _, thread in calls} == {threading.get_ident()}
    finally:
        release.set()
        blocker.result()


def test_a_worker_exception_reaches_the_caller(monkeypatch):
    monkeypatch.setattr(config, "num_threads", 2)

    def run(start, end):
        if start > 0:
            raise ValueError("chunk failed")

    try:
        parallel_for(run, 10, work=config.parallel_threshold * 100)
    except ValueError as error:
        assert "chunk failed" in str(error)
    else:
        raise AssertionError("the worker's exception was lost")


def test_a_forked_child_gets_a_working_pool(monkeypatch):
    monkeypatch.setattr(config, "num_threads", 2)
    # start the pool
    parallel_for(lambda start, end: None, 10, work=config.parallel_threshold * 100)
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if a parallel run completes
        calls = []
        parallel_for(_record(calls), 10, work=config.parallel_threshold * 100)
        covered = sorted((start, end) for start, end, _ in calls)
        os._exit(0 if covered == list(pieces(10, 2)) else 1)
    for _ in range(500):  # a child stuck waiting for threads it does not have: fail, not hang
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("the forked child's parallel_for never finished")
