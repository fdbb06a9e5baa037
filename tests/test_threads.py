"""Threads: compiled functions called and compiled from several threads at once give eager's
answers, and per-thread state (grad mode, dispatch modes, the loop-IR ops handler, fx's tracer)
stays in its thread, as PyTorch's grad mode and modes do.

Every test starts its threads at a `threading.Barrier`, and the interpreter switches threads
every few microseconds instead of every 5 ms, so that they really overlap (a thread started
alone could finish its work in one time slice); each compares with eager run in the test's
own thread. A worker's exception is collected and re-raised by `run_threads`: an
assertion inside a thread would otherwise only print.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

import numpy as np
import pytest

import minitorch
from ir.ops_handler import OpsHandler, current_ops_handler, ops, set_ops_handler
from minitorch.dispatch import DispatchMode, current_mode
from tracer.dynamo.eval_frame import cache_entries, fallback_reasons
from tracer.fx import symbolic_trace

THREADS = 4
BACKENDS = ["eager", "aot_eager", "inductor"]


def run_threads(work: Callable[[int], None], n: int = THREADS) -> None:
    """Run `work(i)` in `n` threads that start together and switch often; re-raise the first
    failure."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def start(i: int) -> None:
        try:
            barrier.wait()
            work(i)
        except BaseException as e:  # noqa: BLE001 - handed to the test's thread below
            errors.append(e)
            barrier.abort()  # do not leave the others waiting for a thread that failed

    threads = [threading.Thread(target=start, args=(i,)) for i in range(n)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    if errors:
        raise errors[0]


def train_step(x, w, b):
    return ((x @ w + b).tanh() * 2).sum()


def loss_and_grads(fn: Callable, xa, wa, ba) -> tuple:
    """The loss and the gradients of w and b, computed by `fn` (eager or compiled)."""
    w = minitorch.tensor(wa, requires_grad=True)
    b = minitorch.tensor(ba, requires_grad=True)
    loss = fn(minitorch.tensor(xa), w, b)
    loss.backward()
    return loss.item(), w.grad.numpy().copy(), b.grad.numpy().copy()


def batches(n: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [
        (
            rng.standard_normal((4, 3)).astype(np.float32),
            rng.standard_normal((3, 5)).astype(np.float32),
            rng.standard_normal(5).astype(np.float32),
        )
        for _ in range(n)
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_compiled_training_function_shared_by_four_threads(backend):
    """4 threads x 250 calls, forward and backward, the first call compiling in all of them at
    once: every loss and gradient is eager's, and the function compiled once."""
    data = batches(8)
    expected = [loss_and_grads(train_step, *d) for d in data]
    compiled = minitorch.compile(train_step, backend=backend)
    wrong = [0] * THREADS

    def work(i: int) -> None:
        for call in range(1000 // THREADS):
            k = (i + call) % len(data)
            loss, gw, gb = loss_and_grads(compiled, *data[k])
            want_loss, want_gw, want_gb = expected[k]
            wrong[i] += not (
                np.isclose(loss, want_loss, rtol=1e-5)
                and np.allclose(gw, want_gw, rtol=1e-5, atol=1e-6)
                and np.allclose(gb, want_gb, rtol=1e-5, atol=1e-6)
            )

    run_threads(work)
    assert sum(wrong) == 0
    assert len(cache_entries(compiled)) == 1  # not one per thread


def _scaled(k: float) -> Callable:
    """A distinct function (its own code object) per thread: x * k, then a reduction."""
    source = f"def f(x, y):\n    return (x.sin() * {k} + y).sum(0) * {k}\n"
    namespace: dict = {}
    exec(compile(source, f"<thread function {k}>", "exec"), namespace)  # noqa: S102
    return namespace["f"]


def _value_and_grad(fn: Callable, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = minitorch.tensor(a, requires_grad=True)
    out = fn(x, minitorch.tensor(a * 0.5))
    out.sum().backward()
    return out.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("backend", ["aot_eager", "inductor", "interpreter"])
def test_threads_compiling_different_functions_get_their_own_values(backend):
    """Each thread compiles its own function for training at the same moment, then recompiles
    it for a second shape: each one returns its own function's values and gradients, never
    another's, and none falls back to eager."""
    functions = [_scaled(k + 2.0) for k in range(THREADS)]
    rng = np.random.default_rng(1)
    inputs = [
        (
            rng.standard_normal((3, 4)).astype(np.float32),
            rng.standard_normal((5, 2)).astype(np.float32),
        )
        for _ in range(THREADS)
    ]

    def work(i: int) -> None:
        compiled = minitorch.compile(functions[i], backend=backend, dynamic=False)
        for _ in range(5):
            for a in inputs[i]:
                got, want = (_value_and_grad(fn, a) for fn in (compiled, functions[i]))
                for g, w in zip(got, want):
                    np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        # compiled, not run eagerly after a compile that another thread's state broke
        assert fallback_reasons(compiled) == []
        assert len(cache_entries(compiled)) == 2  # one per shape

    run_threads(work)


def test_grad_mode_is_per_thread():
    """no_grad in one thread leaves another recording; a new thread starts with grad on."""
    inside = threading.Event()
    checked = threading.Event()
    seen = {}

    def quiet() -> None:
        with minitorch.no_grad():
            inside.set()
            checked.wait(10)
            seen["quiet"] = minitorch.is_grad_enabled()

    def training() -> None:
        inside.wait(10)
        x = minitorch.randn(3, requires_grad=True)
        seen["training"] = minitorch.is_grad_enabled(), (x * 2).requires_grad
        checked.set()

    minitorch.set_grad_enabled(False)  # the test's thread: not inherited by new threads
    try:
        threads = [threading.Thread(target=quiet), threading.Thread(target=training)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not minitorch.is_grad_enabled()
    finally:
        minitorch.set_grad_enabled(True)
    assert seen == {"quiet": False, "training": (True, True)}


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_thread_in_no_grad_while_another_trains(backend):
    """Inference under no_grad and training, of one compiled function, at the same time: the
    inference outputs never require grad, the training gradients are eager's."""
    data = batches(4)
    expected = [loss_and_grads(train_step, *d) for d in data]
    compiled = minitorch.compile(train_step, backend=backend)

    def work(i: int) -> None:
        for call in range(60):
            xa, wa, ba = data[call % len(data)]
            if i % 2:
                with minitorch.no_grad():
                    w = minitorch.tensor(wa, requires_grad=True)
                    out = compiled(minitorch.tensor(xa), w, minitorch.tensor(ba))
                assert not out.requires_grad
                assert np.isclose(out.item(), expected[call % len(data)][0], rtol=1e-5)
            else:
                got = loss_and_grads(compiled, xa, wa, ba)
                for g, want in zip(got, expected[call % len(data)]):
                    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)

    run_threads(work)


class _Counting(DispatchMode):
    """A mode that counts the ops it sees and runs them eagerly."""

    def __init__(self) -> None:
        self.ops = 0

    def run(self, op, args, kwargs, meta):
        self.ops += 1
        return op(*args, **kwargs)  # this mode is off the stack while it runs: eager


def test_a_dispatch_mode_sees_only_its_own_threads_ops():
    """A mode entered in one thread neither records nor alters another thread's eager ops,
    and every thread's stack (and the test's) is empty after."""
    modes = [_Counting() for _ in range(THREADS)]
    x = np.arange(6, dtype=np.float32)

    def work(i: int) -> None:
        assert current_mode() is None  # a new thread starts with no mode
        if i % 2:
            with modes[i]:
                for _ in range(50):
                    minitorch.tensor(x).sin()
            assert current_mode() is None
        else:
            for _ in range(50):
                np.testing.assert_allclose(minitorch.tensor(x).exp().numpy(), np.exp(x), rtol=1e-6)
            assert current_mode() is None

    run_threads(work)
    assert [m.ops for m in modes] == [0, 50, 0, 50]
    assert current_mode() is None


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiling_while_other_threads_run_eager_ops(backend):
    """AOT autograd traces under fake-tensor and tracing modes; eager ops in other threads at
    the same time still compute, and no mode is left behind."""
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)

    def work(i: int) -> None:
        if i == 0:
            for k in range(3):
                f = _scaled(10.0 + k)
                compiled = minitorch.compile(f, backend=backend)
                got, want = (_value_and_grad(fn, x) for fn in (compiled, f))
                for g, w in zip(got, want):
                    np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        else:
            for _ in range(200):
                y = minitorch.tensor(x, requires_grad=True)
                out = (y * 3).sum()
                assert out.grad_fn is not None
                np.testing.assert_allclose(out.item(), 3 * x.sum(), rtol=1e-5, atol=1e-5)
        assert current_mode() is None

    run_threads(work)
    assert current_mode() is None


class _Named(OpsHandler):
    """A handler whose every value is its own name: which handler did `ops` reach?"""

    def __init__(self, name: str) -> None:
        self.name = name

    def sin(self, a):
        return self.name


def test_the_ops_handler_is_per_thread():
    """Two threads inside set_ops_handler at once each reach their own handler; a thread
    outside any block reaches none."""

    def work(i: int) -> None:
        if i == THREADS - 1:
            for _ in range(200):
                with pytest.raises(RuntimeError, match="no ops handler"):
                    current_ops_handler()
            return
        with set_ops_handler(_Named(f"h{i}")):
            for _ in range(200):
                assert ops.sin(None) == f"h{i}"

    run_threads(work)


def test_symbolic_traces_in_several_threads_stay_apart():
    """fx's symbolic_trace patches minitorch's functions and Module while it runs: two threads
    tracing at once each record only their own ops, a thread that traces nothing runs the
    originals, and every original is back after."""
    relu, module_call = minitorch.relu, minitorch.nn.Module.__call__
    layer = minitorch.nn.Linear(3, 2)
    x = minitorch.randn(4, 3)

    def own_ops(i: int) -> Callable:
        name = ["relu", "sigmoid"][i]  # looked up on each call, as user code does
        return lambda y: getattr(minitorch, name)(layer(y)) * (i + 2)

    def work(i: int) -> None:
        for _ in range(20):
            if i < 2:
                gm = symbolic_trace(own_ops(i))
                calls = [n.target for n in gm.graph.nodes if n.op == "call_function"]
                assert [f.__name__ for f in calls] == ["linear", ["relu", "sigmoid"][i], "mul"]
            else:
                out = minitorch.relu(layer(x))  # eager, never a Proxy or a node
                assert isinstance(out, minitorch.Tensor) and out.shape == (4, 2)

    run_threads(work)
    assert minitorch.relu is relu and minitorch.nn.Module.__call__ is module_call


def _chain(x):
    for _ in range(5):
        x = x * 2.0
        x = x + 1.0
    return x


@pytest.mark.parametrize("dynamic", [False, True])
def test_threads_launching_one_compiled_kernel_at_once_keep_their_own_pointers(dynamic):
    """The generated wrapper fills a pointer array per call ([Note: launching a kernel
    cheaply]): threads calling one compiled function at once, each on its own input, each get
    their own answer, never another thread's."""
    compiled = minitorch.compile(_chain, dynamic=dynamic)
    rng = np.random.default_rng(2)
    inputs = [minitorch.tensor(rng.standard_normal(16).astype(np.float32)) for _ in range(THREADS)]
    expected = [_chain(x).numpy() for x in inputs]
    compiled(inputs[0])
    wrong = [0] * THREADS

    def work(i: int) -> None:
        for _ in range(2000):
            wrong[i] += not np.array_equal(compiled(inputs[i]).numpy(), expected[i])

    run_threads(work)
    assert sum(wrong) == 0 and fallback_reasons(compiled) == []
