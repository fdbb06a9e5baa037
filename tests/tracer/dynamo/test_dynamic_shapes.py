"""Automatic dynamic shapes and the aliasing guard ([Note: dynamic shapes], output_graph.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import config, nn
from minitorch.compile.backends import lookup_backend
from minitorch.compile.inductor import AOTEagerCompiler
from tests.tracer.dynamo.helpers import CountingBackend, assert_same, guard_parts
from tracer.dynamo import cache_entries, optimize, recompile_reasons, reset
from tracer.dynamo.compiler import EAGER


@pytest.fixture(autouse=True)
def empty_caches():
    reset()  # these functions are compiled by more than one test
    yield
    reset()


SIZES = [2, 3, 4, 5, 6]


def no_size_read(x, y):
    return (x.sin() * y + x.cos()).sum(0)


def reads_size(x):
    return x.sum(0) * x.shape[0]


def reads_intermediate_size(x):
    y = x * 2
    return y.reshape(y.shape[0], -1).sum(1) + y.size(0)


def reads_len(x):
    return x.sum(0) * len(x)


def reads_first_dim(x):
    return x.sum(1) * x.size(0)


def _args(n: int):
    return minitorch.randn(n, 3), minitorch.randn(3)


@pytest.mark.parametrize("dynamic, compiles", [(None, 2), (False, len(SIZES)), (True, 1)])
def test_shape_sequence_compiles(dynamic, compiles):
    backend = CountingBackend()
    compiled = optimize(no_size_read, backend=lookup_backend(backend), dynamic=dynamic)
    for n in SIZES:
        args = _args(n)
        assert_same(compiled(*args), no_size_read(*args))
    assert backend.count == compiles == len(cache_entries(no_size_read))


def test_automatic_marks_the_dim_that_changed_only():
    backend = CountingBackend()
    compiled = optimize(no_size_read, backend=lookup_backend(backend))
    compiled(*_args(2))
    compiled(*_args(3))
    source = guard_parts(cache_entries(no_size_read)[0])
    assert "L['x'].shape[0] >= 2" in source and "L['x'].shape[1] == 3" in source
    assert "L['y'].shape == (3,)" in source  # y never changed: still static
    compiled(minitorch.randn(4, 5), minitorch.randn(5))  # dim 1 changes: one more compile
    assert backend.count == 3
    assert "L['x'].shape[1] >= 2" in guard_parts(cache_entries(no_size_read)[0])


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_every_size_equals_eager_with_backward(backend):
    compiled = optimize(no_size_read, backend=lookup_backend(backend))
    for n in SIZES:
        x, y = minitorch.randn(n, 3, requires_grad=True), minitorch.randn(3, requires_grad=True)
        x2, y2 = x.detach().requires_grad_(), y.detach().requires_grad_()
        out, expected = compiled(x, y), no_size_read(x2, y2)
        assert_same(out, expected)
        (out * out).sum().backward()
        (expected * expected).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(y.grad.numpy(), y2.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert len(cache_entries(no_size_read)) == 2


def test_specialising_backend_compiles_once_per_shape_inside_one_entry():
    calls = []

    class Counting(AOTEagerCompiler):  # traces at concrete sizes: one version per shape
        def version(self, gm, inputs, dynamic_dims):
            calls.append([tuple(t.shape) for t in inputs])
            return super().version(gm, inputs, dynamic_dims)

    compiled = optimize(no_size_read, backend=Counting(), dynamic=True)
    for n in [2, 3, 2, 3]:
        args = _args(n)
        assert_same(compiled(*args), no_size_read(*args))
    assert len(cache_entries(no_size_read)) == 1
    assert calls == [[(2, 3), (3,)], [(3, 3), (3,)]]  # one per shape, cached


@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("fn", [reads_size, reads_intermediate_size, reads_len])
def test_code_that_reads_a_size_is_specialised(fn, dynamic):
    backend = CountingBackend()
    compiled = optimize(fn, backend=lookup_backend(backend), dynamic=dynamic)
    for n in SIZES:
        x = minitorch.randn(n, 3)
        assert_same(compiled(x), fn(x))
    assert backend.count == len(SIZES)  # the size is a constant in each graph
    assert f"L['x'].shape == ({SIZES[-1]}, 3)" in guard_parts(cache_entries(fn)[0])


def test_only_the_dims_read_are_specialised():
    compiled = optimize(reads_first_dim, backend=EAGER, dynamic=True)
    for m in [2, 3, 4]:
        x = minitorch.randn(5, m)
        assert_same(compiled(x), reads_first_dim(x))
    assert len(cache_entries(reads_first_dim)) == 1
    source = guard_parts(cache_entries(reads_first_dim)[0])
    assert "L['x'].shape[0] == 5" in source and "L['x'].shape[1] >= 2" in source


def test_sizes_0_and_1_stay_specialised():
    backend = CountingBackend()
    compiled = optimize(no_size_read, backend=lookup_backend(backend), dynamic=True)
    for n in [3, 1, 4, 0, 1]:
        args = _args(n)
        assert_same(compiled(*args), no_size_read(*args))
    assert backend.count == 3  # dynamic (>= 2), then 1, then 0
    assert (
        recompile_reasons(no_size_read)[0] == "L['x'].shape[0] >= 2 failed: L['x'].shape[0] was 1"
    )


def test_broadcast_size_one_is_not_taken_for_a_dynamic_dim():
    def add(x, y):
        return x + y

    compiled = optimize(add, backend=EAGER, dynamic=True)
    R = minitorch.randn
    for x, y in [(R(3), R(3)), (R(4), R(1))]:
        assert_same(compiled(x, y), add(x, y))
    assert len(cache_entries(add)) == 2


def test_non_contiguous_input_keeps_its_stride_guard():
    compiled = optimize(no_size_read, backend=EAGER, dynamic=True)
    for n in [2, 4]:
        x, y = minitorch.randn(3, n).T, minitorch.randn(3)
        assert_same(compiled(x, y), no_size_read(x, y))
    assert "L['x'].stride() == (1, 2)" in guard_parts(cache_entries(no_size_read)[-1])


def test_parameters_stay_static_under_dynamic_true():
    model = nn.Linear(3, 2)
    compiled = optimize(model.forward, backend=AOTEagerCompiler(), dynamic=True)
    for n in [2, 5]:
        x = minitorch.randn(n, 3)
        assert_same(compiled(x), model(x))
    (entry,) = cache_entries(model.forward)
    assert ".weight.shape == (2, 3)" in guard_parts(entry)
    assert "L['input'].shape[0] >= 2" in guard_parts(entry)


def test_recompile_log_names_the_dynamic_dim(monkeypatch, capsys):
    monkeypatch.setattr(config, "logs", config.parse_logs("recompiles"))
    compiled = optimize(no_size_read, backend=EAGER)
    compiled(*_args(2))
    compiled(*_args(3))
    err = capsys.readouterr().err
    assert "now dynamic: L['x'].shape[0] (2 -> 3)" in err
    assert recompile_reasons(no_size_read) == [
        "L['x'].shape == (2, 3) failed: L['x'].shape was minitorch.Size([3, 3])"
    ]


# ---- the aliasing guard ------------------------------------------------------------------------


def axpy(x, y):
    return x * 2 + y


def test_aliasing_guard_distinct_then_same():
    backend = CountingBackend()
    compiled = optimize(axpy, backend=lookup_backend(backend))
    a, b = minitorch.randn(3), minitorch.randn(3)
    assert_same(compiled(a, b), axpy(a, b))
    assert_same(compiled(b, a), axpy(b, a))  # still distinct: a hit
    assert backend.count == 1
    assert_same(compiled(a, a), axpy(a, a))
    assert backend.count == 2
    assert recompile_reasons(axpy) == [
        "___alias_pattern((L['x'], L['y'],)) == (0, 1) failed: L['x'] and L['y'] were distinct "
        "tensors while tracing and are the same now"
    ]


def test_aliasing_guard_same_then_distinct():
    compiled = optimize(axpy, backend=EAGER)
    a, b = minitorch.randn(3), minitorch.randn(3)
    compiled(a, a)
    assert_same(compiled(a, b), axpy(a, b))
    assert "were the same tensor while tracing and are distinct now" in recompile_reasons(axpy)[0]


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_an_input_whose_dim_became_dynamic_may_come_back_with_another_rank(backend):
    """x and y's dim 0 became dynamic; then y is 0-d: it has no dim 0 to be dynamic."""
    compiled = optimize(lambda x, y: x + y, backend=lookup_backend(backend))
    for x_shape, y_shape in [((3,), (3,)), ((5,), (5,)), ((4,), ()), ((), ())]:
        x, y = minitorch.randn(*x_shape), minitorch.randn(*y_shape)
        assert_same(compiled(x, y), x + y)


def last_piece(x):
    return minitorch.split(x, 2, 1)[-1] * 2 + x.chunk(2, 1)[0].sum()


def test_the_number_of_pieces_of_split_is_guarded():
    # 4 columns split in 2 pieces, 5 columns in 3 (found by tests/fuzz): the sizes are guarded
    compiled = optimize(last_piece, backend=EAGER)
    for n in (3, 4, 5, 6):
        x = minitorch.randn(2, n)
        assert_same(compiled(x), last_piece(x))
