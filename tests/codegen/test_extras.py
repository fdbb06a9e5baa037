"""The code generator's extras, each off alone and all off (config.core_only()), against eager.

[Note: the core and its extras] in minitorch/config.py: an extra changes how fast (or how
exactly, within numpy's own tolerance) the compiled code runs, never what it computes. So
each program here runs compiled with an extra off, and must give eager's values, dtypes,
gradients and errors; each test also checks that the switch really took the plain path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from codegen_testing import run_compiled, unary_program

import minitorch
import minitorch.nn.functional as F
from codegen import allocator, disk_cache
from codegen.llvm import jit, parallel
from ir.ops_handler import ops
from minitorch import config, nn
from minitorch.testing import assert_close

# Each switch off alone, and all of them off.
SWITCHES = [
    "object_loader",
    "thread_pool",
    "pooled_allocator",
    "exact_trig",
    "disk_cache",
    "core",
]


@pytest.fixture(params=SWITCHES)
def switch(request, tmp_path, monkeypatch):
    """One extra off (or every one: "core"), in a fresh cache directory; all restored after."""
    saved = {name: getattr(config, name) for name in (*config.EXTRAS, "partitioner")}
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    disk_cache.reset()
    minitorch._dynamo.reset()  # nothing compiled with the extras on is reused
    for name in config.EXTRAS:  # the default, whatever MINITORCH_CORE says
        setattr(config, name, True)
    if request.param == "core":
        config.core_only()
    else:
        setattr(config, request.param, False)
    yield request.param
    for name, value in saved.items():
        setattr(config, name, value)
    disk_cache.reset()
    minitorch._dynamo.reset()


def is_off(switch: str, name: str) -> bool:
    return switch in (name, "core")


def check(fn, *inputs):
    """fn compiled against fn eager, on copies of the inputs: values, dtypes, gradients."""
    eager_inputs = [x.detach().clone().requires_grad_(x.requires_grad) for x in inputs]
    compiled_inputs = [x.detach().clone().requires_grad_(x.requires_grad) for x in inputs]
    expected = fn(*eager_inputs)
    got = minitorch.compile(fn)(*compiled_inputs)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert_close(got, expected)
    if expected.requires_grad:
        expected.sum().backward()
        got.sum().backward()
        for x, y in zip(compiled_inputs, eager_inputs, strict=True):
            if y.grad is not None:
                assert_close(x.grad, y.grad)
    return got


def test_sincos(switch):
    def f(x):
        return minitorch.sin(x) ** 2 + minitorch.cos(x)

    # 2^30 and past it: the exact library's domain, or libm's with exact_trig off
    values = np.array([0.5, -3.0, 1e5, 2.0**31, -1e30, 3.4e38, 0.0, -0.0], np.float32)
    check(f, minitorch.tensor(values, requires_grad=True))
    check(f, minitorch.tensor(values.astype(np.float64), requires_grad=True))
    kernels = _kernel_sources()
    if is_off(switch, "exact_trig"):
        assert "llvm.sin" in kernels and "huge" not in kernels
    else:
        assert "minitorch.sin" in kernels


def test_softmax(switch):
    x = minitorch.tensor(np.random.default_rng(0).normal(size=(8, 33)), requires_grad=True)
    check(lambda x: F.softmax(x, dim=-1) * 3.0, x)


def test_matmul_relu(switch):
    rng = np.random.default_rng(1)
    a = minitorch.tensor(rng.normal(size=(7, 5)).astype(np.float32), requires_grad=True)
    b = minitorch.tensor(rng.normal(size=(5, 3)).astype(np.float32), requires_grad=True)
    check(lambda a, b: minitorch.relu(a @ b + 1.0), a, b)


def test_reductions(switch):
    x = minitorch.tensor(np.random.default_rng(2).normal(size=(6, 50)).astype(np.float32))
    check(lambda x: x.sum(dim=1) + x.amax(dim=1), x)
    assert minitorch.compile(lambda x: x.argmax(dim=1))(x).tolist() == x.argmax(dim=1).tolist()
    ints = minitorch.arange(60, dtype=minitorch.int32).reshape(6, 10)
    got = minitorch.compile(lambda t: (t * 3).sum(dim=0))(ints)
    assert got.dtype == (ints * 3).sum(dim=0).dtype
    assert got.tolist() == (ints * 3).sum(dim=0).tolist()


def test_index_errors_are_eagers(switch):
    x = minitorch.arange(10, dtype=minitorch.float32)
    index = minitorch.tensor([1, 12, 3])

    def f(x, index):
        return x[index] * 2

    with pytest.raises(IndexError) as eager:
        f(x, index)
    with pytest.raises(IndexError) as compiled:
        minitorch.compile(f)(x, index)
    assert type(compiled.value) is type(eager.value)


def test_mlp_training_step(switch):
    minitorch.manual_seed(0)
    eager = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    compiled_model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    compiled_model.load_state_dict(eager.state_dict())
    compiled = minitorch.compile(compiled_model)
    x = minitorch.tensor(np.random.default_rng(3).normal(size=(32, 4)).astype(np.float32))
    target = minitorch.tensor(np.arange(32) % 3)
    for model, run in ((eager, eager), (compiled_model, compiled)):
        optimizer = minitorch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            optimizer.zero_grad()
            F.cross_entropy(run(x), target).backward()
            optimizer.step()
    for p, q in zip(compiled_model.parameters(), eager.parameters(), strict=True):
        assert_close(p, q)


def test_a_kernel_above_the_parallel_threshold(switch, monkeypatch):
    n = 2 * config.parallel_threshold
    x = minitorch.tensor(np.linspace(-50, 50, n, dtype=np.float32))
    handed_out = []  # what the kernels handed the pool's threads
    submit = parallel._pool.submit
    monkeypatch.setattr(
        parallel._pool, "submit", lambda fn, copies: handed_out.append(copies) or submit(fn, copies)
    )
    monkeypatch.setattr(config, "num_threads", 2)
    before = allocator.cached_bytes()
    got = check(lambda x: minitorch.exp(x * 0.1) + x, x)
    if is_off(switch, "thread_pool"):
        assert handed_out == []  # every kernel ran whole, on this thread
    else:
        assert handed_out
    if is_off(switch, "pooled_allocator"):
        del got
        assert allocator.cached_bytes() == before  # no block came from (or went back to) it
    loaded_by = {module.loaded_by for module in jit._compiled.values()}
    if is_off(switch, "object_loader"):
        assert loaded_by and all(how.startswith("MCJIT") for how in loaded_by)
    else:
        assert "object_loader" in loaded_by


def test_disk_cache_off_reads_and_writes_nothing(switch, tmp_path):
    check(lambda x: minitorch.tanh(x) * 2, minitorch.tensor(np.ones(5, np.float32)))
    cache = tmp_path / "cache"
    written = [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else []
    if is_off(switch, "disk_cache"):
        assert written == []
        assert not disk_cache.stats and not disk_cache.host_stats
        assert not disk_cache.source_stats and not disk_cache.graph_stats
    else:
        assert written


def _kernel_sources() -> str:
    """The IR text of every module the JIT holds now."""
    return "\n".join(module.source for module in jit._compiled.values())


def test_the_plain_kernel_and_launch(switch):
    """What each extra leaves out of the code: the huge-argument flag and second body
    (exact_trig), the fast pointer read (object_loader), the thread split (thread_pool)."""
    x = np.linspace(-3, 3, 1000).astype(np.float32)
    program = unary_program(lambda v: ops.add(ops.sin(v), ops.cos(v)), x)
    outputs, (kernel,) = run_compiled(program, [x])
    np.testing.assert_allclose(outputs[0], np.sin(x) + np.cos(x), rtol=1e-6, atol=1e-6)
    launch = "\n".join(kernel.call_code({"x": "x", "buf0": "buf0"}, "kernel0").lines)
    if is_off(switch, "exact_trig"):
        assert "huge_seen" not in kernel.source and ".exact" not in kernel.source
        assert len(kernel.source.splitlines()) < 60
    else:
        assert "kernel0.body.exact" in kernel.source
    if is_off(switch, "object_loader"):
        assert "x.ctypes.data" in launch and "id(x)" not in launch
    else:
        assert "___pointer_at(id(x)" in launch
    assert ("___parallel_for" in launch) is not is_off(switch, "thread_pool")


SIN_COS_ALONE = """
import sys
import numpy as np
import minitorch
x = minitorch.tensor(np.array([0.5, -3.0, 1e7, 3e9, -1e20, np.inf], np.float32))
got = minitorch.compile(lambda t: minitorch.sin(t) ** 2 + minitorch.cos(t) ** 2)(x)
want = np.sin(x.numpy()) ** 2 + np.cos(x.numpy()) ** 2
np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
print("codegen.llvm.trig" in sys.modules)
"""


@pytest.mark.parametrize("core", ["1", "0"])
def test_exact_trig_off_never_imports_trig(core, tmp_path):
    """With the core alone, sin and cos are libm's and trig.py (the extra's generator) is not
    even imported; with the extras on, it is (a fresh process: this one has imported it)."""
    done = subprocess.run(
        [sys.executable, "-c", SIN_COS_ALONE],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "MINITORCH_CORE": core, "MINITORCH_CACHE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(core == "0")]
