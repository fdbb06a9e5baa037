"""Splitting [0, n) into chunks, and running them on the persistent pool."""

import os
import signal
import threading
import time

from hypothesis import given
from hypothesis import strategies as st

from codegen.llvm.parallel import chunks, parallel_for
from minitorch import config


@given(st.integers(1, 10_000), st.integers(1, 64))
def test_chunks_cover_the_range_in_order_without_empty_pieces(n, parts):
    pieces = chunks(n, parts)
    assert pieces[0][0] == 0 and pieces[-1][1] == n
    assert all(end == next_start for (_, end), (next_start, _) in zip(pieces, pieces[1:]))
    assert all(end > start for start, end in pieces)
    assert len(pieces) == min(n, parts)
    sizes = [end - start for start, end in pieces]
    assert max(sizes) - min(sizes) <= 1


def test_chunks_example():
    assert chunks(10, 3) == [(0, 4), (4, 7), (7, 10)]


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
    calls = []
    parallel_for(_record(calls), 1000, work=config.parallel_threshold)
    assert sorted((start, end) for start, end, _ in calls) == [(0, 500), (500, 1000)]
    assert len({thread for _, _, thread in calls}) == 2  # the caller ran one chunk itself


def test_a_worker_exception_reaches_the_caller(monkeypatch):
    monkeypatch.setattr(config, "num_threads", 2)

    def run(start, end):
        if start > 0:
            raise ValueError("chunk failed")

    try:
        parallel_for(run, 10, work=config.parallel_threshold)
    except ValueError as error:
        assert "chunk failed" in str(error)
    else:
        raise AssertionError("the worker's exception was lost")


def test_a_forked_child_gets_a_working_pool(monkeypatch):
    monkeypatch.setattr(config, "num_threads", 2)
    parallel_for(lambda start, end: None, 10, work=config.parallel_threshold)  # start the pool
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if a parallel run completes
        calls = []
        parallel_for(_record(calls), 10, work=config.parallel_threshold)
        os._exit(0 if len(calls) == 2 else 1)
    for _ in range(500):  # a child stuck waiting for threads it does not have: fail, not hang
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("the forked child's parallel_for never finished")
