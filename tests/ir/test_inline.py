"""When lowering inlines a pointwise value and when it stores it ([Note: inlining])."""

import numpy as np
import pytest
from ir_testing import GraphBuilder, check, lower_and_schedule

import minitorch
from ir.inline import MAX_CALLS, body_cost
from ir.interpreter import run_reference
from ir.lowering import MAX_INLINE_DEPTH
from ir.nodes import Pointwise
from minitorch.errors import IndexOutOfRangeError

rng = np.random.default_rng(13)


def rand(*shape):
    return rng.uniform(-2.0, 2.0, shape).astype(np.float32)


def stored_pointwise(program, kernels):
    """The pointwise buffers some kernel writes that are not graph outputs."""
    return [
        name
        for k in kernels
        for name in k.writes
        if name not in program.outputs and isinstance(program.buffer(name).data, Pointwise)
    ]


def test_single_use_pointwise_is_inlined():
    g = GraphBuilder()
    x = g.placeholder("x", rand(8))
    g.output(g.call("exp", g.call("mul", g.call("sin", x), 2.0)))
    program, _ = lower_and_schedule(g)
    assert len(program.buffers) == 1
    assert program.outputs == ("buf0",)


def test_cheap_shared_value_is_recomputed_by_each_reader():
    # d = x - mean(x) feeds a reduction and a pointwise loop, as in layer_norm
    g = GraphBuilder()
    x = g.placeholder("x", rand(6, 10))
    d = g.call("sub", x, g.call("div", g.call("sum", x, dim=(1,), keepdim=True), 10.0))
    var = g.call("sum", g.call("mul", d, d), dim=(1,), keepdim=True)
    g.output(g.call("div", d, g.call("add", var, 1.0)))
    kernels = check(g, rtol=1e-5)
    program, _ = lower_and_schedule(g)
    assert stored_pointwise(program, kernels) == []
    assert len(program.buffers) == 3 and len(kernels) == 1  # a loop per sum, then d / ..


def test_costly_shared_value_is_realized():
    g = GraphBuilder()
    x = g.placeholder("x", rand(6, 10))
    s = g.call("sin", g.call("cos", g.call("sin", g.call("cos", x))))  # 4 transcendentals
    g.output(g.call("div", s, g.call("sum", s, dim=(1,), keepdim=True)))
    kernels = check(g, rtol=1e-5)
    program, _ = lower_and_schedule(g)
    assert stored_pointwise(program, kernels) == ["buf0"]


def test_exp_read_by_the_sum_and_the_normalisation_is_recomputed():
    g = GraphBuilder()
    x = g.placeholder("x", rand(6, 10))
    e = g.call("exp", g.call("sub", x, g.call("amax", x, dim=(1,), keepdim=True)))
    g.output(g.call("div", e, g.call("sum", e, dim=(1,), keepdim=True)))
    kernels = check(g, rtol=1e-5)
    program, _ = lower_and_schedule(g)
    assert stored_pointwise(program, kernels) == [] and len(kernels) == 1


def test_outputs_are_realized_and_shared_values_inlined_into_them():
    g = GraphBuilder()
    x = g.placeholder("x", rand(8))
    s = g.call("sin", x)  # two readers, cheap: inlined into both
    t = g.call("add", s, g.call("cos", x))  # an output: realized
    g.output(g.call("mul", s, t), t)
    program, kernels = lower_and_schedule(g)
    assert len(program.buffers) == 2 and program.outputs == ("buf1", "buf0")
    assert all("ops.sin" in str(b.data) for b in program.buffers)
    check(g)


def test_value_used_twice_by_one_node_is_realized_before_it_grows():
    # y = sin(y * y), 40 times: inlined all the way, the first link would run 2**40 times
    g = GraphBuilder()
    y = g.placeholder("x", rand(5))
    for _ in range(40):
        y = g.call("sin", g.call("mul", y, y))
    g.output(y)
    program, kernels = lower_and_schedule(g)
    assert 40 // 4 <= len(program.buffers) < 40
    assert all(body_cost(b.data.inner_fn, 1).calls <= 2 * MAX_CALLS for b in program.buffers)
    assert len(kernels) == 1 and len(kernels[0].writes) == 1
    check(g, rtol=1e-5)


def test_long_chains_are_cut_but_still_fused():
    g = GraphBuilder()
    y = g.placeholder("x", rand(5))
    for _ in range(1000):
        y = g.call("sin", y)
    g.output(y)
    program, kernels = lower_and_schedule(g)
    assert len(program.buffers) == 1000 // (MAX_INLINE_DEPTH + 1) + 1
    assert len(kernels) == 1 and len(kernels[0].writes) == 1
    check(g)


def test_shared_view_of_a_buffer_is_not_copied():
    g = GraphBuilder()
    x = g.placeholder("x", rand(3, 1))
    view = g.call("expand", g.call("reshape", x, (1, 3)), (4, 3))  # two users, but only a load
    g.output(g.call("add", g.call("sin", view), g.call("cos", view)))
    program, _ = lower_and_schedule(g)
    assert len(program.buffers) == 1
    assert "ops.load('x', i1)" in str(program.buffers[0])
    check(g)


def test_identical_buffers_are_computed_once():
    g = GraphBuilder()
    x = g.placeholder("x", rand(4, 5))
    a = g.call("sum", x, dim=(1,), keepdim=True)
    b = g.call("sum", x, dim=(1,), keepdim=True)  # the same sum again: the same buffer
    g.output(g.call("sub", g.call("sub", x, a), b))
    program, _ = lower_and_schedule(g)
    assert len(program.buffers) == 2
    check(g, rtol=1e-5)


@pytest.mark.parametrize("op, kwargs", [("sin", {}), ("sum", {"dim": (1,)})])
def test_two_equal_outputs_keep_their_own_memory(op, kwargs):
    g = GraphBuilder()
    x = g.placeholder("x", rand(4, 3))
    g.output(g.call(op, x, **kwargs), g.call(op, x, **kwargs))
    program, _ = lower_and_schedule(g)
    assert program.outputs == ("buf0", "buf1")
    a, b = run_reference(program, None, g.inputs)
    assert not np.shares_memory(a, b)


@pytest.mark.parametrize("backend", ["interpreter", "llvm"])
def test_an_index_checked_value_read_at_chosen_elements_still_raises(backend):
    # x[i] checks every i; x[i][j] reads x[i] only where j points, which skips the bad 7
    def f(x, i, j):
        return x[i][j] * 2

    x, j = minitorch.randn(5, 3), minitorch.tensor(np.array([0, 1]))
    bad = minitorch.tensor(np.array([0, 1, 7]))
    with pytest.raises(IndexOutOfRangeError):
        f(x, bad, j)
    with pytest.raises(IndexOutOfRangeError):
        minitorch.compile(f, backend=backend)(x, bad, j)
    good = minitorch.tensor(np.array([0, 1, 4]))
    got = minitorch.compile(f, backend=backend)(x, good, j)
    np.testing.assert_array_equal(got.numpy(), f(x, good, j).numpy())


@pytest.mark.parametrize("backend", ["interpreter", "llvm"])
def test_a_dropout_mask_inlined_into_two_readers_is_the_eager_mask(backend):
    def f(x):
        kept = minitorch.nn.functional.dropout(x, 0.5, training=True)  # read by sum and div
        return kept / (kept.sum(dim=1, keepdim=True) + 1.0)

    x = minitorch.tensor(rand(6, 50) + 3.0)
    compiled = minitorch.compile(f, backend=backend)
    minitorch.manual_seed(5)
    compiled(x)  # the first call compiles
    minitorch.manual_seed(7)
    want = f(x)
    minitorch.manual_seed(7)
    got = compiled(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
