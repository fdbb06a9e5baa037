"""Lowering the pointwise ops beyond arithmetic: functions, comparisons, selection, conversions.

Every graph runs through the reference interpreter, fused and unfused, against numpy
(ir_testing.check); comparisons must compare in the operands' promoted dtype.
"""

import numpy as np
import pytest
from ir_testing import GraphBuilder, check

import minitorch
from ir.lowering import Extern, extern_reason, lower_graph
from ir.printer import format_inner_fn
from minitorch.dtype import bool_, float32, float64
from tracer.aot import make_fx

rng = np.random.default_rng(3)


def rand(*shape, dtype=np.float32, low=-3.0, high=3.0):
    return rng.uniform(low, high, shape).astype(dtype)


def small_ints(*shape, dtype=np.int64):
    return rng.integers(-2, 3, shape).astype(dtype)


@pytest.mark.parametrize("op", ["abs", "tanh", "sigmoid", "erf"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_functions(op, dtype):
    g = GraphBuilder()
    g.output(g.call(op, g.placeholder("x", rand(4, 5, dtype=dtype))))
    check(g, rtol=1e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("op", ["maximum", "minimum"])
@pytest.mark.parametrize("shape_a, shape_b", [((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3))])
def test_maximum_minimum_broadcast(op, shape_a, shape_b):
    g = GraphBuilder()
    a = g.placeholder("a", rand(*shape_a))
    b = g.placeholder("b", rand(*shape_b))
    g.output(g.call(op, a, b))
    check(g)


def test_maximum_minimum_propagate_nan():
    g = GraphBuilder()
    a = g.placeholder("a", np.array([np.nan, 1.0, 2.0], np.float32))
    b = g.placeholder("b", np.array([0.0, np.nan, 1.0], np.float32))
    g.output(g.call("maximum", a, b), g.call("minimum", a, b))
    check(g)


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le"])
def test_comparisons_give_bools(op):
    g = GraphBuilder()
    a = g.placeholder("a", np.round(rand(3, 4)))  # whole numbers: some equal pairs
    b = g.placeholder("b", np.round(rand(4)))
    nan = g.placeholder("nan", np.array([np.nan, 1.0, np.nan, 0.0], np.float32))
    g.output(g.call(op, a, b), g.call(op, a, 1.0), g.call(op, 0.0, a), g.call(op, nan, nan))
    check(g)


def test_comparisons_convert_to_the_promoted_dtype_not_to_bool():
    # int64 2**24 + 1 < 16777216.5 compares in float32 (as eager does), where it is False;
    # comparing the operands' truth values instead would be wrong for every nonzero pair.
    g = GraphBuilder()
    ints = g.placeholder("ints", np.array([2**24 + 1, 3, -1], np.int64))
    g.output(g.call("lt", ints, 2.5))
    program = lower_graph(g)
    (buffer,) = program.buffers
    body = format_inner_fn(buffer.data.inner_fn, buffer.data.ranges)
    assert "ops.to_dtype(tmp0, float32)" in body and "ops.lt(tmp1, tmp2)" in body
    check(g)


def test_where_with_tensors_and_numbers():
    g = GraphBuilder()
    x = g.placeholder("x", rand(3, 4))
    y = g.placeholder("y", rand(4, dtype=np.float64))
    condition = g.call("lt", x, 0.0)
    g.output(g.call("where", condition, x, y), g.call("where", condition, 0.0, x))
    check(g)


def test_where_of_a_bool_input_condition_broadcast():
    g = GraphBuilder()
    mask = g.placeholder("mask", rng.random((3, 1)) < 0.5)
    x = g.placeholder("x", rand(3, 4))
    g.output(g.call("where", mask, x, 1.5))
    check(g)


def test_relu_and_its_backward_as_aot_autograd_records_them():
    # relu(x) = where(x <= 0, 0, x); its gradient: where(x <= 0, 0.0, grad)
    g = GraphBuilder()
    x = g.placeholder("x", rand(5, 6))
    grad = g.placeholder("grad", rand(5, 6))
    mask = g.call("le", x, 0)
    g.output(g.call("where", mask, 0.0, x), g.call("where", mask, 0.0, grad))
    kernels = check(g)
    assert len(kernels) == 1  # the mask is computed once, in the same loop


@pytest.mark.parametrize("dtype", [float64, bool_, float32])
def test_to_copy_converts(dtype):
    g = GraphBuilder()
    x = g.placeholder("x", np.array([0.0, -1.5, np.nan, 2.0], np.float32))
    g.output(g.call("to_copy", g.call("to_copy", x, dtype=dtype), dtype=float64))
    check(g)


def test_pow_with_a_tensor_exponent_is_not_lowered_but_extern():
    g = GraphBuilder()
    x = g.placeholder("x", rand(3, low=0.5, high=2.0))
    y = g.placeholder("y", rand(3))
    g.output(g.call("pow", x, y))
    with pytest.raises(Extern, match="pow with a tensor exponent"):
        lower_graph(g)


def test_the_lowering_itself_says_which_calls_run_as_extern_kernels():
    x, y = minitorch.rand(3, 3) + 0.5, minitorch.rand(3, 3)
    gm = make_fx(lambda x, y: (x**y, x**2.0, 2.0**y, x @ y))(x, y)
    reasons = [extern_reason(n) for n in gm.graph.nodes if n.op == "call_function"]
    assert "tensor exponent" in reasons[0]
    assert reasons[1:3] == [None, None]
    assert reasons[3] == "minitorch.ops.mm has no lowering"


def test_a_positive_number_to_a_tensor_power_is_an_exp():
    g = GraphBuilder()
    y = g.placeholder("y", rand(6, dtype=np.float64))
    g.output(g.call("pow", 2.0, y), g.call("pow", 0.5, y))
    check(g, rtol=1e-14)
