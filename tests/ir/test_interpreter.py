"""The reference interpreter against numpy: strided inputs, registers, reductions, sizes given
as symbols, and its own checks."""

import numpy as np
import pytest
from ir_testing import GraphBuilder, check

import minitorch
import minitorch.dtype as dt
from ir.indexing import Var, index_vars
from ir.interpreter import disagreements, run_kernel, run_reference
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import REDUCTIONS, ops
from ir.scheduler import FusedKernel, Loop
from minitorch.dtype import from_numpy_dtype, int64
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
    return FusedKernel(
        "kernel0", (Loop(reduction_ranges, tuple(nodes)),), ranges, reduction_ranges, ("x",), writes
    )


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
    run_kernel(FusedKernel("k", (Loop((), (node,)),), (2, 3), (), (), ("buf0",)), memory)
    np.testing.assert_array_equal(memory["buf0"], 5.0)
    assert Var("i0") in index_vars("i", 1)


# -- reductions: the interpreter defines every reduction_type ---------------------------------


def _reduce_rows(x: np.ndarray, kind: str) -> np.ndarray:
    """buf0[i] = the `kind` reduction of row i of x, through run_kernel."""
    m, n = x.shape
    dtype = int64 if kind.startswith("arg") else from_numpy_dtype(x.dtype)  # a position
    body = lambda i, r: ops.load("x", n * i[0] + r[0])  # noqa: E731
    node = ComputedBuffer(
        "buf0", Layout.contiguous((m,), dtype), Reduction(dtype, (m,), (n,), kind, body)
    )
    memory = {"x": x, "buf0": np.zeros(m, dtype.np)}
    run_kernel(_kernel([node], ("buf0",), (m,), (n,)), memory)
    return memory["buf0"]


def test_every_reduction_is_defined():
    assert set(REDUCTIONS) == {"sum", "max", "min", "argmax", "argmin"}
    for kind in REDUCTIONS:
        _reduce_rows(np.ones((2, 3)), kind)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["max", "min"])
def test_max_and_min_match_numpy_and_propagate_nan(kind, dtype):
    # NaN wins, as in numpy's max and eager amax; infinities are ordinary values.
    x = rng.standard_normal((5, 7)).astype(dtype)
    x[1, 3] = np.nan
    x[2, 0], x[3, 6] = np.inf, -np.inf
    got = _reduce_rows(x, kind)
    np.testing.assert_array_equal(got, getattr(np, kind)(x, axis=1))
    assert np.isnan(got[1]) and not np.isnan(got[[0, 2, 3, 4]]).any()
    eager = getattr(minitorch, f"a{kind}")(minitorch.tensor(x), 1).numpy()
    np.testing.assert_array_equal(got, eager)  # the op that lowers to it


@pytest.mark.parametrize("kind", ["max", "min"])
def test_max_and_min_of_bools_are_any_and_all(kind):
    x = np.array([[True, False], [False, False], [True, True]])
    np.testing.assert_array_equal(_reduce_rows(x, kind), getattr(np, kind)(x, axis=1))


@pytest.mark.parametrize("kind", ["argmax", "argmin"])
@pytest.mark.parametrize(
    "x",
    [
        np.array(
            [
                [1.0, 3.0, 3.0],
                [np.nan, 2.0, np.nan],
                [-np.inf, -np.inf, -np.inf],
                [0.0, -0.0, 5.0],
                [2.0, np.nan, -1.0],
            ]
        ),  # ties, NaN first and in the middle
        np.array([[7, -3, 7], [np.iinfo(np.int64).min, 0, np.iinfo(np.int64).min]]),
        np.array([[False, True, True], [False, False, False]]),
    ],
    ids=["float64", "int64", "bool"],
)
def test_arg_reductions_give_the_first_extreme_and_the_first_nan(kind, x):
    got = _reduce_rows(x, kind)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, getattr(np, kind)(x, axis=1))
    if x.dtype != np.bool_:  # (eager refuses the argmax of bools, as PyTorch does)
        eager = getattr(minitorch, kind)(minitorch.tensor(x), 1).numpy()
        np.testing.assert_array_equal(got, eager)


def test_reductions_over_no_terms_give_their_identity():
    x = np.zeros((3, 0))
    assert _reduce_rows(x, "sum").tolist() == [0.0] * 3
    assert _reduce_rows(x, "max").tolist() == [-np.inf] * 3
    assert _reduce_rows(x, "min").tolist() == [np.inf] * 3


def test_an_unknown_reduction_is_an_error():
    with pytest.raises(CompileError, match="no reduction 'prod'"):
        _reduce_rows(np.ones((2, 2)), "prod")


# -- size symbols ----------------------------------------------------------------------------


def symbolic_kernel() -> FusedKernel:
    """x: (s0, 4) -> buf0 = sin of x's rows in reverse order; ranges and indices mention s0."""
    s0 = Var("s0")
    layout = Layout((s0, 4), (4, 1), dt.float64)
    flipped = lambda i: ops.sin(ops.load("x", (s0 - 1 - i[0]) * 4 + i[1]))  # noqa: E731
    node = ComputedBuffer("buf0", layout, Pointwise(dt.float64, (s0, 4), flipped))
    return FusedKernel("kernel0", (Loop((), (node,)),), (s0, 4), (), ("x",), ("buf0",))


@pytest.mark.parametrize("n", [2, 5])
def test_run_kernel_with_sizes(n):
    x = rng.standard_normal((n, 4))
    memory = {"x": x, "buf0": np.zeros((n, 4))}
    run_kernel(symbolic_kernel(), memory, sizes={"s0": n})
    np.testing.assert_array_equal(memory["buf0"], np.sin(x[::-1]))


def test_a_symbolic_reduction_range():
    s0 = Var("s0")
    body = lambda i, r: ops.load("x", 3 * r[0] + i[0])  # noqa: E731  column sums of (s0, 3)
    data = Reduction(dt.float64, (3,), (s0,), "max", body)
    node = ComputedBuffer("buf0", Layout.contiguous((3,), dt.float64), data)
    x = rng.standard_normal((6, 3))
    memory = {"x": x, "buf0": np.zeros(3)}
    kernel = FusedKernel("k", (Loop((s0,), (node,)),), (3,), (s0,), ("x",), ("buf0",))
    run_kernel(kernel, memory, {"s0": 6})
    np.testing.assert_array_equal(memory["buf0"], x.max(axis=0))


def test_sizes_must_be_given_and_be_size_symbols():
    memory = {"x": np.zeros((2, 4)), "buf0": np.zeros((2, 4))}
    with pytest.raises(CompileError, match=r"needs values for \['s0'\]"):
        run_kernel(symbolic_kernel(), memory)
    with pytest.raises(CompileError, match="not size symbols"):
        run_kernel(symbolic_kernel(), memory, sizes={"s0": 2, "scale": 2})


def test_disagreements_is_the_agreement_rule():
    want = np.array([1.0, np.nan, np.inf, -0.0, 0.0, 1e-40], np.float32)  # 1e-40: subnormal
    assert not disagreements(want.copy(), want).any()
    got = np.array([np.nextafter(np.float32(1), 2), np.nan, np.inf, -0.0, 0.0, 1e-40], np.float32)
    assert disagreements(got, want).tolist() == [True] + [False] * 5
    assert not disagreements(got, want, ulps=1).any()
    swapped = np.array([1.0, 0.0, -np.inf, 0.0, -0.0, np.nan], np.float32)
    assert disagreements(swapped, want, ulps=4).tolist() == [False] + [True] * 5
    with pytest.raises(DTypeError):
        disagreements(want.astype(np.float64), want)
