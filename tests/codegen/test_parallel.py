"""Splitting [0, n) into chunks, and running them on the persistent pool."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.llvm import parallel
from codegen.llvm.parallel import parallel_for, pieces
from minitorch import config

pytestmark = pytest.mark.extras("thread_pool")


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


def _on_both_threads(run):
    """`run`, made to run on the caller and on one pool thread: each thread's first piece
    waits for the other's. (Pure Python holds the GIL, and one thread could otherwise claim
    every piece before the other runs at all.)"""
    started, both_started = set(), threading.Barrier(2, timeout=10)

    def run_on_both(start, end):
        if threading.get_ident() not in started:
            started.add(threading.get_ident())
            both_started.wait()
        run(start, end)

    return run_on_both


def test_large_work_is_split_across_threads(monkeypatch):
    monkeypatch.setattr(config, "num_threads", 2)
    calls = []
    parallel_for(_on_both_threads(_record(calls)), 1000, work=config.parallel_threshold * 1000)
    assert sorted((start, end) for start, end, _ in calls) == list(pieces(1000, 2))
    assert len({thread for _, _, thread in calls}) == 2  # the caller ran pieces itself


def test_the_caller_does_not_wait_for_a_pool_thread_that_is_busy(monkeypatch):
    # A pool thread that wakes up late (here: busy until the call is over) claims nothing,
    # and the call returns without it: the caller ran every piece.
    monkeypatch.setattr(config, "num_threads", 2)
    release = threading.Event()
    parallel._pool.submit(lambda: release.wait(10), max(1, parallel._pool._threads))  # all
    try:
        calls = []
        parallel_for(_record(calls), 1000, work=config.parallel_threshold * 1000)
        assert sorted((start, end) for start, end, _ in calls) == list(pieces(1000, 2))
        assert {thread for _, _, thread in calls} == {threading.get_ident()}
    finally:
        release.set()


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


def _finishes(target, *args, seconds=30):
    """Run target(*args) on a thread of its own: whether it returned in time (a deadlock
    fails the test instead of hanging it)."""
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    thread.join(seconds)
    return not thread.is_alive()


def test_an_exception_on_a_pool_thread_is_raised_in_the_caller(monkeypatch):
    monkeypatch.setattr(config, "num_threads", 2)
    caller = threading.get_ident()

    def run(start, end):
        if threading.get_ident() != caller:
            raise ValueError("failed on a pool thread")

    with pytest.raises(ValueError, match="failed on a pool thread"):
        parallel_for(_on_both_threads(run), 1000, work=config.parallel_threshold * 1000)
    calls = []  # the pool thread survived it
    parallel_for(_on_both_threads(_record(calls)), 1000, work=config.parallel_threshold * 1000)
    assert len({thread for _, _, thread in calls}) == 2


def test_two_threads_calling_at_once_each_get_their_own_pieces(monkeypatch):
    monkeypatch.setattr(config, "num_threads", 2)
    results = {}

    def caller(name, n):
        for _ in range(50):
            calls = []
            parallel_for(_record(calls), n, work=config.parallel_threshold * n)
            results.setdefault(name, []).append(sorted((s, e) for s, e, _ in calls))

    threads = [
        threading.Thread(target=caller, args=(name, n), daemon=True)
        for name, n in (("a", 1000), ("b", 777))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads)
    assert results == {"a": [list(pieces(1000, 2))] * 50, "b": [list(pieces(777, 2))] * 50}


def test_a_parallel_for_inside_a_piece_finishes(monkeypatch):
    # A piece that splits work of its own (on the caller or on a pool thread, all of them
    # busy) still finishes: every caller runs the pieces nobody else claimed.
    monkeypatch.setattr(config, "num_threads", 2)
    inner = []

    def outer(start, end):
        parallel_for(_record(inner), 100, work=config.parallel_threshold * 100)

    assert _finishes(parallel_for, outer, 10, config.parallel_threshold * 10)
    runs = len(pieces(10, 2))
    assert sorted((s, e) for s, e, _ in inner) == sorted(list(pieces(100, 2)) * runs)


def test_the_pool_starts_its_threads_at_the_first_split():
    # The pool costs a process nothing until a kernel is big enough to split; its threads
    # are daemons, which do not keep the process alive.
    code = """if True:
        import threading
        from codegen.llvm.parallel import parallel_for
        from minitorch import config
        config.num_threads = 3
        before = threading.active_count()
        parallel_for(lambda start, end: None, 10, work=0)
        small = threading.active_count()
        parallel_for(lambda start, end: None, 10, work=config.parallel_threshold * 10)
        pool = [t for t in threading.enumerate() if t is not threading.main_thread()]
        print(before, small, len(pool), all(t.daemon for t in pool))
    """
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "MINITORCH_CORE": "0"},
        timeout=120,
        check=True,
    ).stdout
    assert out.split() == ["1", "1", "2", "True"]
