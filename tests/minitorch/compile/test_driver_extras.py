"""The driver's core and its extras ([Note: the driver's extras] in minitorch/compile/inductor.py):
each extra off gives the same values, lowering leaves its graph as traced, and the pass list
stays one screen."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import minitorch
from codegen import disk_cache
from codegen.llvm.backend import LLVMBackend
from minitorch import config
from minitorch.compile import inductor
from tracer.aot import make_fx
from tracer.dynamo import reset


@pytest.fixture(autouse=True)
def empty_caches():
    reset()
    yield
    reset()


@pytest.fixture
def kernel_sizes(monkeypatch):
    """The sizes every LLVM kernel compile takes, one entry per kernel."""
    calls: list[tuple[str, ...]] = []
    original = LLVMBackend.compile_kernels

    def counting(self, kernels, sizes=()):
        calls.extend([tuple(sizes)] * len(kernels))
        return original(self, kernels, sizes)

    monkeypatch.setattr(LLVMBackend, "compile_kernels", counting)
    return calls


def step(x, w):
    return ((x * w.sum(0)).tanh() * x.sum(1, keepdim=True)).t(), (x * x).sum()


def _leaves(seed: int, n: int) -> list:
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, 4)), rng.standard_normal((3, 4))]
    return [minitorch.tensor(a.astype(np.float32), requires_grad=True) for a in arrays]


def _check_against_eager(compiled, sizes=(2, 3, 5, 3)) -> None:
    for n in sizes:
        ours, theirs = _leaves(n, n), _leaves(n, n)
        got, expected = compiled(*ours), step(*theirs)
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(), rtol=1e-5)
            assert g.stride() == e.stride()  # eager's layout: the transposed output too
        sum(o.sum() for o in got).backward()
        sum(o.sum() for o in expected).backward()
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.extras("symbolic_sizes")
def test_with_symbolic_sizes_one_version_serves_every_size(kernel_sizes):
    _check_against_eager(minitorch.compile(step, dynamic=True))
    assert kernel_sizes and all(sizes for sizes in kernel_sizes)  # none compiled static


def log_and_sum(x):
    return x.log() * 1, (x * 2).sum()


@pytest.mark.parametrize("symbolic", [True, False])
def test_a_missing_tangent_is_pruned_not_zero_at_every_size(monkeypatch, kernel_sizes, symbolic):
    """Only the sum's gradient reaches x: eager never computes the log's, whose g / x is
    0 / 0 = NaN at x = 0 if the missing tangent were passed as zeros."""
    monkeypatch.setattr(config, "symbolic_sizes", symbolic)
    compiled = minitorch.compile(log_and_sum, dynamic=True)
    for n in (3, 5, 4):
        x = minitorch.tensor(np.arange(n, dtype=np.float32), requires_grad=True)
        with np.errstate(divide="ignore"):
            _, total = compiled(x)
        total.backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.full(n, 2, np.float32))
    assert all(bool(sizes) == symbolic for sizes in kernel_sizes)


def test_with_symbolic_sizes_off_each_shape_compiles_statically(monkeypatch, kernel_sizes):
    monkeypatch.setattr(config, "symbolic_sizes", False)
    _check_against_eager(minitorch.compile(step, dynamic=True))
    assert kernel_sizes and all(sizes == () for sizes in kernel_sizes)


def test_with_the_graph_cache_off_nothing_is_read_or_written(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(config, "graph_cache", False)
    disk_cache.reset()
    _check_against_eager(minitorch.compile(step), sizes=(3,))
    assert not disk_cache.graph_stats
    assert not list(tmp_path.rglob(f"*{disk_cache.GRAPH_KIND}*"))


def test_every_extra_off_gives_eagers_values_layouts_and_gradients(monkeypatch):
    for name in config.EXTRAS:
        monkeypatch.setattr(config, name, False)
    _check_against_eager(minitorch.compile(step))
    reset()
    _check_against_eager(minitorch.compile(step, dynamic=True))


def test_lowering_leaves_its_graph_as_traced():
    """A rewrite (the transposed product) builds new nodes: the graph compiled is unchanged."""
    a, b = minitorch.randn(3, 5), minitorch.randn(5, 2)
    gm = make_fx(lambda a, b: ((a @ b).t() + 1,))(a, b)
    traced = str(gm.graph)
    (out,) = inductor.compile_graph(gm)(a, b)
    assert str(gm.graph) == traced
    np.testing.assert_allclose(out.numpy(), (a.numpy() @ b.numpy()).T + 1, rtol=1e-5)


def test_the_pass_list_fits_on_one_screen():
    """compile_fx and the three functions it reads through, in run order: a page to read."""
    functions = [inductor.compile_fx, inductor.compile_graph, inductor.lower]
    functions.append(inductor.compile_steps)
    lines = sum(len(inspect.getsource(f).splitlines()) for f in functions)
    assert lines <= 80, lines


def test_the_walkthrough_shows_the_core_and_all_shows_the_extras(capsys):
    """`make demo` compiles with the core alone and says so; --all turns every extra on."""
    from pathlib import Path

    from minitorch.compile.walkthrough import main

    sincos = str(Path(__file__).resolve().parents[3] / "examples" / "sincos.py")
    before = config.extras_on()
    assert main([sincos, "--stage", "kernels"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("extras on: none, the core alone") and "[kernels]" in out
    assert config.extras_on() == before  # restored after the run
    assert main([sincos, "--all", "--stage", "kernels"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"extras on: {', '.join(config.EXTRAS)}\n")
    assert config.extras_on() == before
