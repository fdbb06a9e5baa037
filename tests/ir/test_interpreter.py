"""The reference interpreter against numpy: strided inputs, registers, and its own checks."""

import numpy as np
import pytest
from ir_testing import GraphBuilder, check

import minitorch.dtype as dt
from ir.indexing import Var, index_vars
from ir.interpreter import run_kernel, run_reference
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import ops
from ir.scheduler import FusedKernel
from minitorch.errors import CompileError, DTypeError, ShapeError

rng = np.random.default_rng(0)
BASE = rng.standard_normal((4, 6)).astype(np.float32)

STRIDED_INPUTS = {
    "contiguous": BASE,
    "transposed": BASE.T,  # strides (1, 6)
    "reversed rows": BASE[::-1],  # negative stride
    "reversed, every other column": BASE[:, ::-2],  # stride -2
    "both reversed, transposed": BASE[::-1, ::-1].T,
    "stride 0": np.broadcast_to(BASE[0], (5, 6)),
    "stride 0, size-1 dim": np.broadcast_to(BASE[:1, :, None], (1, 6, 3)),
}


@pytest.mark.parametrize("name", list(STRIDED_INPUTS))
def test_strided_inputs_pointwise(name):
    g = GraphBuilder()
    x = g.placeholder("x", STRIDED_INPUTS[name])
    g.output(g.call("add", g.call("sin", x), g.call("mul", x, 2.0)))
    check(g)


@pytest.mark.parametrize("name", list(STRIDED_INPUTS))
def test_strided_inputs_reshape_and_sum(name):
    array = STRIDED_INPUTS[name]
    g = GraphBuilder()
    x = g.placeholder("x", array)
    flat = g.call("reshape", x, (array.size,))
    g.output(flat, g.call("sum", x, dim=(0,)), g.call("sum", x))
    check(g, rtol=1e-5)


def test_layout_offset_and_hand_built_program():
    # A (2, 3) view of a 12-element buffer: element (0, 0) is at 8, and dim 1 runs backwards.
    memory = np.arange(12, dtype=np.float64)
    layout = Layout((2, 3), (3, -1), dt.float64, offset=8)

    def inner_fn(index):
        return ops.mul(ops.load("a", layout.indexer()(index)), ops.constant(10.0, dt.float64))

    data = Pointwise(dt.float64, (2, 3), inner_fn)
    buf0 = ComputedBuffer("buf0", Layout.contiguous((2, 3), dt.float64), data)
    program = LoweredProgram(
        (InputBuffer("a", Layout((12,), (1,), dt.float64)),), (buf0,), ("buf0",)
    )
    (out,) = run_reference(program, None, [memory])
    np.testing.assert_array_equal(out, 10.0 * np.array([[8, 7, 6], [11, 10, 9]]))


def test_zero_sized():
    g = GraphBuilder()
    x = g.placeholder("x", np.zeros((0, 3), np.float32))
    g.output(g.call("sin", x), g.call("sum", x, dim=(0,)), g.call("reshape", x, (3, 0)))
    check(g)


def _kernel(nodes, writes, ranges, reduction_ranges=()):
    return FusedKernel("kernel0", tuple(nodes), ranges, reduction_ranges, ("x",), writes)


def test_register_values_are_never_stored():
    x = np.arange(4, dtype=np.float32)
    layout = Layout.contiguous((4,), dt.float32)
    sin = ComputedBuffer(
        "buf0", layout, Pointwise(dt.float32, (4,), lambda i: ops.sin(ops.load("x", i[0])))
    )
    double = lambda i: ops.add(ops.load("buf0", i[0]), ops.load("buf0", i[0]))  # noqa: E731
    twice = ComputedBuffer("buf1", layout, Pointwise(dt.float32, (4,), double))
    memory = {"x": x, "buf0": np.full(4, -7.0, np.float32), "buf1": np.zeros(4, np.float32)}
    run_kernel(_kernel([sin, twice], ("buf1",), (4,)), memory)
    np.testing.assert_allclose(memory["buf1"], 2 * np.sin(x))
    np.testing.assert_array_equal(memory["buf0"], -7.0)  # buf0 lived in a register only


def test_reduction_reading_a_reduction_of_the_same_kernel():
    # buf1[i] = sum_r x[i, r] * buf0[i], where buf0[i] = sum_r x[i, r]: the register is (n, 1).
    x = rng.standard_normal((3, 5))
    total = lambda i, r: ops.load("x", 5 * i[0] + r[0])  # noqa: E731
    scaled = lambda i, r: ops.mul(total(i, r), ops.load("buf0", i[0]))  # noqa: E731
    layout = Layout.contiguous((3,), dt.float64)
    nodes = [
        ComputedBuffer("buf0", layout, Reduction(dt.float64, (3,), (5,), "sum", total)),
        ComputedBuffer("buf1", layout, Reduction(dt.float64, (3,), (5,), "sum", scaled)),
    ]
    memory = {"x": x, "buf1": np.zeros(3)}
    run_kernel(_kernel(nodes, ("buf1",), (3,), (5,)), memory)
    np.testing.assert_allclose(memory["buf1"], x.sum(1) ** 2)


def test_load_of_a_register_at_another_index_is_an_error():
    layout = Layout.contiguous((4,), dt.float32)
    a = ComputedBuffer("buf0", layout, Pointwise(dt.float32, (4,), lambda i: ops.load("x", i[0])))
    shifted = lambda i: ops.load("buf0", (i[0] + 1) % 4)  # noqa: E731
    b = ComputedBuffer("buf1", layout, Pointwise(dt.float32, (4,), shifted))
    memory = {"x": np.arange(4, dtype=np.float32), "buf1": np.zeros(4, np.float32)}
    with pytest.raises(CompileError, match="load of buf0"):
        run_kernel(_kernel([a, b], ("buf1",), (4,)), memory)


def test_mixed_dtypes_need_to_dtype():
    layout = Layout.contiguous((2,), dt.float64)
    mixed = lambda i: ops.add(ops.load("x", i[0]), ops.constant(1.0, dt.float64))  # noqa: E731
    node = ComputedBuffer("buf0", layout, Pointwise(dt.float64, (2,), mixed))
    memory = {"x": np.ones(2, np.float32), "buf0": np.zeros(2)}
    with pytest.raises(CompileError, match="to_dtype"):
        run_kernel(_kernel([node], ("buf0",), (2,)), memory)
    converted = lambda i: ops.add(  # noqa: E731
        ops.to_dtype(ops.load("x", i[0]), dt.float64), ops.constant(1.0, dt.float64)
    )
    node = ComputedBuffer("buf0", layout, Pointwise(dt.float64, (2,), converted))
    run_kernel(_kernel([node], ("buf0",), (2,)), memory)
    np.testing.assert_array_equal(memory["buf0"], [2.0, 2.0])


def test_declared_dtype_is_checked():
    layout = Layout.contiguous((2,), dt.float64)
    node = ComputedBuffer(
        "buf0", layout, Pointwise(dt.float64, (2,), lambda i: ops.load("x", i[0]))
    )
    memory = {"x": np.ones(2, np.float32), "buf0": np.zeros(2)}
    with pytest.raises(CompileError, match="computes float32"):
        run_kernel(_kernel([node], ("buf0",), (2,)), memory)


def test_inputs_must_match_their_layout():
    program = LoweredProgram((InputBuffer("x", Layout((2, 3), (3, 1), dt.float32)),), (), ("x",))
    good = np.ones((2, 3), np.float32)
    assert run_reference(program, [], [good])[0] is good
    with pytest.raises(ShapeError, match="strides"):
        run_reference(program, [], [np.ones((3, 2), np.float32).T])
    with pytest.raises(ShapeError, match="shape"):
        run_reference(program, [], [np.ones((3, 2), np.float32)])
    with pytest.raises(DTypeError):
        run_reference(program, [], [np.ones((2, 3), np.float64)])
    with pytest.raises(ShapeError, match="inputs"):
        run_reference(program, [], [])


def test_index_vars_broadcast_over_the_iteration_space():
    # An inner_fn that ignores its index still fills every element.
    layout = Layout.contiguous((2, 3), dt.float32)
    node = ComputedBuffer(
        "buf0", layout, Pointwise(dt.float32, (2, 3), lambda i: ops.constant(5, dt.float32))
    )
    memory = {"buf0": np.zeros((2, 3), np.float32)}
    run_kernel(FusedKernel("k", (node,), (2, 3), (), (), ("buf0",)), memory)
    np.testing.assert_array_equal(memory["buf0"], 5.0)
    assert Var("i0") in index_vars("i", 1)
