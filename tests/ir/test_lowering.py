"""Lowering fx graphs to loop IR: every op against numpy, broadcasting, outputs, dead code."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_testing import GraphBuilder, Node, check, lower_and_schedule

from ir.lowering import LOWERINGS, lower_graph
from ir.nodes import Reduction
from minitorch.errors import CompileError
from minitorch.ops import OPS

rng = np.random.default_rng(1)


def rand(*shape, dtype=np.float32, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(dtype)


@pytest.mark.parametrize("op", ["sin", "cos", "exp", "neg"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary(op, dtype):
    g = GraphBuilder()
    g.output(g.call(op, g.placeholder("x", rand(3, 5, dtype=dtype))))
    check(g)


def test_log():
    g = GraphBuilder()
    g.output(g.call("log", g.placeholder("x", rand(7, low=0.1, high=5.0))))
    check(g)


@pytest.mark.parametrize("exponent", [2, 3, 0.5, -1, 0, 2.5])
def test_pow(exponent):
    g = GraphBuilder()
    g.output(g.call("pow", g.placeholder("x", rand(11, low=0.5, high=3.0)), exponent))
    check(g, rtol=1e-5)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize(
    "shape_a, shape_b",
    [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 1, 4), (3, 1)), ((), (2, 3))],
)
def test_binary_broadcasting(op, shape_a, shape_b):
    g = GraphBuilder()
    a = g.placeholder("a", rand(*shape_a, low=0.5, high=2.0))
    b = g.placeholder("b", rand(*shape_b, low=0.5, high=2.0))
    g.output(g.call(op, a, b))
    check(g)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_python_numbers_on_either_side(op):
    g = GraphBuilder()
    x = g.placeholder("x", rand(6, low=0.5, high=2.0))
    g.output(g.call(op, x, 3.0), g.call(op, 2.5, x), g.call(op, x, 2))
    check(g)


def test_dtype_promotion_inserts_to_dtype():
    g = GraphBuilder()
    a = g.placeholder("a", rand(2, 3, dtype=np.float32))
    b = g.placeholder("b", rand(3, dtype=np.float64))
    out = g.call("mul", g.call("add", a, b), a)  # float64 * float32 -> float64
    g.output(out, g.call("sum", a, dtype_hint=None) if False else g.call("sin", a))
    program, _ = lower_and_schedule(g)
    assert "ops.to_dtype(tmp0, float64)" in str(program.buffers[0])
    check(g)


@pytest.mark.parametrize(
    "shape, dim, keepdim",
    [
        ((3, 4), None, False),
        ((3, 4), None, True),
        ((3, 4), (0,), False),
        ((3, 4), (1,), True),
        ((2, 3, 4), (0, 2), False),
        ((2, 3, 4), (-1,), True),
        ((2, 3, 4), (1,), False),
        ((5,), (0,), False),
        ((), None, False),
    ],
)
def test_sum(shape, dim, keepdim):
    g = GraphBuilder()
    x = g.placeholder("x", rand(*shape))
    g.output(g.call("sum", g.call("exp", x), dim=dim, keepdim=keepdim))
    (kernel,) = check(g, rtol=1e-5)
    assert len(kernel.nodes) == 1 and isinstance(kernel.nodes[0].data, Reduction)


def test_sum_then_broadcast_back():
    # x - x.sum(1, keepdim=True): the keepdim result broadcasts along dim 1.
    g = GraphBuilder()
    x = g.placeholder("x", rand(4, 6))
    g.output(g.call("sub", x, g.call("sum", x, dim=(1,), keepdim=True)))
    check(g, rtol=1e-5)


@pytest.mark.parametrize(
    "shape, target",
    [((3,), (4, 3)), ((3, 1), (3, 5)), ((1, 1), (2, 3, 4)), ((2, 3), (2, 3)), ((), (3,))],
)
def test_expand(shape, target):
    g = GraphBuilder()
    x = g.placeholder("x", rand(*shape))
    g.output(g.call("sin", g.call("expand", x, target)))
    check(g)


@pytest.mark.parametrize(
    "shape, target",
    [
        ((6,), (2, 3)),
        ((2, 3), (6,)),
        ((2, 3, 4), (6, 4)),
        ((2, 3, 4), (2, 12)),
        ((2, 3), (3, 2)),
        ((4, 6), (2, 2, 3, 2)),
        ((1, 6, 1), (3, 1, 2)),
        ((6,), (6,)),
        ((1,), ()),
        ((), (1, 1)),
    ],
)
def test_reshape(shape, target):
    g = GraphBuilder()
    x = g.placeholder("x", rand(*shape))
    g.output(g.call("reshape", g.call("cos", x), target))
    check(g)


def test_reshape_keeps_shared_dims_and_skips_needless_mod():
    g = GraphBuilder()
    x = g.placeholder("x", rand(2, 3, 4))
    g.output(g.call("reshape", x, (6, 4)))
    program, _ = lower_and_schedule(g)
    # (i0//3, i0 % 3, i1) into x's layout: 12*(i0//3) + 4*(i0 % 3) + i1, which simplifies.
    assert "ops.load('x', 4*i0 + i1)" in str(program.buffers[0])
    g = GraphBuilder()
    x = g.placeholder("x", rand(2, 3, 4))
    g.output(g.call("reshape", x, (24,)))
    program, _ = lower_and_schedule(g)
    assert "ops.load('x', i0)" in str(program.buffers[0])


def test_reshape_of_a_transposed_input_follows_logical_order():
    g = GraphBuilder()
    x = g.placeholder("x", rand(3, 4).T)
    g.output(g.call("reshape", g.call("neg", x), (2, 6)))
    check(g)


def test_chain_of_views_and_ops():
    g = GraphBuilder()
    x = g.placeholder("x", rand(2, 6))
    y = g.placeholder("y", rand(3, 1))
    r = g.call("reshape", x, (3, 4))
    e = g.call("expand", y, (3, 4))
    s = g.call("sum", g.call("mul", g.call("add", r, e), r), dim=(0,))
    g.output(g.call("div", s, 4.0))
    check(g, rtol=1e-5)


# ---- outputs and dead code (when other values are realized: test_inline.py) ----------------


def test_input_as_output_and_duplicate_outputs():
    g = GraphBuilder()
    x = g.placeholder("x", rand(3))
    s = g.call("sin", x)
    g.output(x, s, s)
    program, _ = lower_and_schedule(g)
    assert program.outputs == ("x", "buf0", "buf0")
    check(g)


def test_dead_code_is_dropped():
    g = GraphBuilder()
    x = g.placeholder("x", rand(3))
    g.call("sum", g.call("exp", x))  # nobody reads it
    g.output(g.call("sin", x))
    assert len(lower_graph(g).buffers) == 1


def test_an_op_without_a_lowering_is_a_compile_error():
    g = GraphBuilder()
    x = g.placeholder("x", rand(3))
    g.nodes.append(Node("call_function", "mm", OPS["mm"], (x,), {}, {"val": x.meta["val"]}))
    g.output(g.nodes[-1])
    with pytest.raises(CompileError, match="no lowering for op 'mm'"):
        lower_graph(g)


def test_meta_mismatch_is_a_compile_error():
    g = GraphBuilder()
    x = g.placeholder("x", rand(3, 4))
    s = g.call("sum", x, dim=(1,))
    s.meta["val"] = x.meta["val"]  # claims (3, 4)
    g.output(s)
    with pytest.raises(CompileError, match="lowering of sum"):
        lower_graph(g)


def test_the_op_table_rows_marked_lowered_are_the_lowerings():
    marked = {op for op in OPS.values() if op.lowering == "lowered"}
    assert set(LOWERINGS) == marked, {op.name for op in set(LOWERINGS) ^ marked}


# ---- property: random broadcasting graphs ------------------------------------------------

dims = st.integers(1, 4)


@st.composite
def broadcast_pair(draw):
    out = draw(st.lists(dims, min_size=0, max_size=3))

    def squeeze(shape):
        keep = draw(st.integers(0, len(shape)))
        return [1 if draw(st.booleans()) else n for n in shape[len(shape) - keep :]]

    return tuple(squeeze(out)), tuple(squeeze(out))


@settings(max_examples=60, deadline=None)
@given(broadcast_pair(), st.sampled_from(["add", "sub", "mul", "div"]), st.booleans())
def test_random_broadcasting(shapes, op, reduce):
    g = GraphBuilder()
    a = g.placeholder("a", rand(*shapes[0], low=0.5, high=2.0))
    b = g.placeholder("b", rand(*shapes[1], low=0.5, high=2.0))
    out = g.call("exp", g.call(op, g.call("sin", a), b))
    g.output(g.call("sum", out, dim=(0,)) if reduce and g.value[out].ndim else out)
    check(g, rtol=1e-5)
