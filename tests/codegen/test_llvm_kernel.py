"""LLVM kernels built from hand-made loop IR, against ir/interpreter.py and numpy."""

import numpy as np
import pytest
from codegen_testing import (
    BACKEND,
    computed,
    input_buffer,
    load,
    run_both,
    run_compiled,
    unary_program,
)

import minitorch.dtype as dt
from codegen.llvm.kernel import LLVMOps, _reduces_across_outputs
from ir.nodes import ComputedBuffer, Layout, LoweredProgram, Reduction
from ir.ops_handler import ops
from ir.scheduler import FusedKernel, Loop, schedule
from minitorch import config
from minitorch.errors import CompileError, DTypeError, MinitorchError

RNG = np.random.default_rng(7)
DTYPES = [np.float32, np.float64]
RTOL = {np.float32: 1e-5, np.float64: 1e-12}  # a few ulp after a few ops


def assert_close(got, expected, dtype):
    np.testing.assert_allclose(got, expected, rtol=RTOL[dtype], atol=RTOL[dtype])


def reduction(name, dtype, ranges, reduction_ranges, inner_fn, reduction_type="sum"):
    data = Reduction(dtype, ranges, reduction_ranges, reduction_type, inner_fn)
    return ComputedBuffer(name, Layout.contiguous(ranges, dtype), data)


# -- pointwise ---------------------------------------------------------------------------------


def sincos_program(array: np.ndarray) -> LoweredProgram:
    """sin(x)**2 + cos(x)**2 as Inductor lowers it: three buffers, the first two local."""
    x = input_buffer("x", array)
    dtype, n = x.layout.dtype, array.shape
    buf0 = computed("buf0", dtype, n, lambda index: ops.sin(load(x, index)))
    buf1 = computed("buf1", dtype, n, lambda index: ops.cos(load(x, index)))
    buf2 = computed(
        "buf2",
        dtype,
        n,
        lambda index: ops.add(ops.pow(load(buf0, index), 2), ops.pow(load(buf1, index), 2)),
    )
    return LoweredProgram((x,), (buf0, buf1, buf2), ("buf2",))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 7, 4096, 1_000_003])
def test_fused_pointwise_with_local_nodes_matches_interpreter(n, dtype):
    x = RNG.uniform(-50, 50, n).astype(dtype)
    program = sincos_program(x)
    (kernel,) = schedule(program)
    assert kernel.writes == ("buf2",)  # buf0 and buf1 live in registers only
    (got,), (expected,) = run_both(program, [x])
    assert_close(got, expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 7, 4096, 1_000_003])
def test_every_op_matches_interpreter(n, dtype):
    x = RNG.uniform(0.5, 5, n).astype(dtype)
    y = RNG.uniform(-5, 5, n).astype(dtype)
    bx, by = input_buffer("x", x), input_buffer("y", y)
    d = bx.layout.dtype

    def body(index):
        a, b = load(bx, index), load(by, index)
        two = ops.constant(2.0, d)
        top = ops.add(ops.mul(ops.exp(ops.neg(b)), ops.log(a)), ops.pow(a, 1.5))
        bottom = ops.sub(ops.add(ops.pow(ops.sin(b), 2), ops.cos(a)), ops.pow(a, -3))
        return ops.div(top, ops.add(ops.pow(bottom, 2), two))

    program = LoweredProgram((bx, by), (computed("buf0", d, (n,), body),), ("buf0",))
    (got,), (expected,) = run_both(program, [x, y])
    assert_close(got, expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_negative_stride_and_broadcast_inputs(dtype):
    m, n = 33, 65
    base = RNG.standard_normal(4 * m * n).astype(dtype)
    strided = base[: 3 * m * n : 3].reshape(m, n)  # stride (3n, 3)
    reversed_ = base[::-1][: m * n].reshape(m, n)  # stride (-n, -1)
    transposed = base[: m * n].reshape(n, m).T  # stride (1, m)
    row = np.broadcast_to(base[:n], (m, n))  # stride (0, 1)
    column = np.broadcast_to(base[:m, None], (m, n))  # stride (1, 0)
    arrays = [strided, reversed_, transposed, row, column]
    buffers = [input_buffer(f"in{k}", a) for k, a in enumerate(arrays)]
    assert buffers[1].layout.stride == (-n, -1) and buffers[3].layout.stride == (0, 1)
    d = buffers[0].layout.dtype

    def body(index):
        a, b, c, r, col = (load(buffer, index) for buffer in buffers)
        return ops.add(ops.mul(ops.sub(a, b), c), ops.mul(r, ops.exp(col)))

    program = LoweredProgram(tuple(buffers), (computed("buf0", d, (m, n), body),), ("buf0",))
    (got,), (expected,) = run_both(program, arrays)
    a, b, c, r, col = arrays
    assert_close(got, (a - b) * c + r * np.exp(col), dtype)
    assert_close(got, expected, dtype)


def test_index_arithmetic_with_floor_division_and_modulo():
    x = RNG.standard_normal(15).astype(np.float32)
    bx = input_buffer("x", x)

    def body(index):
        (i0,) = index
        return ops.load("x", (i0 // 3) % 5 + 5 * (i0 % 2))  # reads x[0..9] in a zigzag

    program = LoweredProgram((bx,), (computed("buf0", dt.float32, (40,), body),), ("buf0",))
    (got,), (expected,) = run_both(program, [x])
    i = np.arange(40)
    np.testing.assert_array_equal(got, x[(i // 3) % 5 + 5 * (i % 2)])
    np.testing.assert_array_equal(got, expected)


def test_a_later_kernel_reads_an_earlier_one_at_an_offset():
    # buf1[i] = buf0[i + 2]: not the index buf0 stores at, so the scheduler makes two kernels.
    x = RNG.standard_normal(10)
    bx = input_buffer("x", x)
    buf0 = computed("buf0", dt.float64, (10,), lambda index: ops.exp(load(bx, index)))
    buf1 = computed("buf1", dt.float64, (8,), lambda index: ops.load("buf0", index[0] + 2))
    program = LoweredProgram((bx,), (buf0, buf1), ("buf1",))
    (got,), kernels = run_compiled(program, [x])
    assert len(kernels) == 2
    assert_close(got, np.exp(x[2:]), np.float64)


def test_conversions_between_float32_and_float64():
    x = RNG.standard_normal(100).astype(np.float32)
    bx = input_buffer("x", x)

    def body(index):
        wide = ops.to_dtype(load(bx, index), dt.float64)
        return ops.to_dtype(ops.mul(wide, ops.constant(1 / 3, dt.float64)), dt.float32)

    program = LoweredProgram((bx,), (computed("buf0", dt.float32, (100,), body),), ("buf0",))
    (got,), (expected,) = run_both(program, [x])
    np.testing.assert_array_equal(got, (x.astype(np.float64) / 3).astype(np.float32))
    np.testing.assert_array_equal(got, expected)


def test_zero_size_kernel_runs_no_iteration():
    x = np.zeros((0,), np.float32)
    (got,), _ = run_compiled(unary_program(ops.exp, x), [x])
    assert got.shape == (0,)


# -- reductions --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 7, 4096, 1_000_003])
def test_sum_over_everything(n, dtype):
    x = RNG.uniform(-1, 1, n).astype(dtype)
    bx = input_buffer("x", x)
    total = reduction("buf0", bx.layout.dtype, (), (n,), lambda index, r: load(bx, r))
    program = LoweredProgram((bx,), (total,), ("buf0",))
    (got,), (expected,) = run_both(program, [x])
    # Both sum in their own order (LLVM in vector lanes, numpy pairwise): compare against the
    # float64 sum with a tolerance that grows with n.
    exact = np.sum(x.astype(np.float64))
    tolerance = np.finfo(dtype).eps * np.sum(np.abs(x.astype(np.float64))) * 4
    assert got.shape == ()
    assert abs(float(got) - exact) <= tolerance
    assert abs(float(expected) - exact) <= tolerance


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1])
def test_sum_over_one_axis_of_a_2d_input(axis, dtype):
    m, n = 300, 517
    x = RNG.uniform(-1, 1, (m, n)).astype(dtype)
    bx = input_buffer("x", x)
    kept, reduced = ((n,), (m,)) if axis == 0 else ((m,), (n,))

    def body(index, rindex):
        i, r = index[0], rindex[0]
        return load(bx, (r, i) if axis == 0 else (i, r))

    program = LoweredProgram(
        (bx,), (reduction("buf0", bx.layout.dtype, kept, reduced, body),), ("buf0",)
    )
    (got,), (expected,) = run_both(program, [x])
    assert_close(got, np.sum(x.astype(np.float64), axis=axis), dtype)
    assert_close(got, expected, dtype)


def test_sum_over_two_axes():
    x = RNG.uniform(-1, 1, (4, 50, 60))
    bx = input_buffer("x", x)
    body = lambda index, rindex: ops.mul(
        load(bx, (index[0], *rindex)), load(bx, (index[0], *rindex))
    )
    program = LoweredProgram(
        (bx,), (reduction("buf0", dt.float64, (4,), (50, 60), body),), ("buf0",)
    )
    (got,), (expected,) = run_both(program, [x])
    assert_close(got, np.sum(x * x, axis=(1, 2)), np.float64)
    assert_close(got, expected, np.float64)


def test_fused_reductions_where_the_second_loads_the_first():
    # variance of each row: buf0 = sum(x), buf1 = sum((x - buf0/n)^2), one kernel, two loops.
    m, n = 64, 1000
    x = RNG.standard_normal((m, n))
    bx = input_buffer("x", x)
    buf0 = reduction("buf0", dt.float64, (m,), (n,), lambda i, r: load(bx, (i[0], r[0])))

    def squared_deviation(i, r):
        mean = ops.div(ops.load("buf0", i[0]), ops.constant(n, dt.float64))
        return ops.pow(ops.sub(load(bx, (i[0], r[0])), mean), 2)

    buf1 = reduction("buf1", dt.float64, (m,), (n,), squared_deviation)
    program = LoweredProgram((bx,), (buf0, buf1), ("buf1",))
    (kernel,) = schedule(program)
    assert kernel.writes == ("buf1",)
    (got,), (expected,) = run_both(program, [x])
    assert_close(got, np.var(x, axis=1) * n, np.float64)
    assert_close(got, expected, np.float64)


@pytest.mark.parametrize("kind", ["max", "min"])
def test_max_and_min_reductions_propagate_nan_like_numpy(kind):
    x = RNG.standard_normal((5, 999)).astype(np.float32)
    x[3, 500] = np.nan
    bx = input_buffer("x", x)
    node = reduction("buf0", dt.float32, (5,), (999,), lambda i, r: load(bx, (i[0], r[0])), kind)
    (got,), _ = run_compiled(LoweredProgram((bx,), (node,), ("buf0",)), [x])
    np.testing.assert_array_equal(got, getattr(np, kind)(x, axis=1))


def test_empty_reduction_gives_its_start_value():
    x = np.zeros((3, 0))
    bx = input_buffer("x", x)
    node = reduction("buf0", dt.float64, (3,), (0,), lambda i, r: load(bx, (i[0], r[0])))
    (got,), _ = run_compiled(LoweredProgram((bx,), (node,), ("buf0",)), [x])
    np.testing.assert_array_equal(got, np.zeros(3))


# -- reductions across outputs ([Note: reductions across outputs]) ---------------------------


def column_sum_program(x: np.ndarray) -> LoweredProgram:
    bx = input_buffer("x", x)
    m, n = x.shape
    body = lambda i, r: load(bx, (r[0], i[0]))
    return LoweredProgram((bx,), (reduction("buf0", bx.layout.dtype, (n,), (m,), body),), ("buf0",))


def test_which_reductions_swap_their_loops():
    x = np.zeros((50, 70))
    (column_sum,) = schedule(column_sum_program(x))  # loads x[r0, i0]: along the outputs
    assert _reduces_across_outputs(column_sum)
    bx = input_buffer("x", x)
    row_sum = reduction("buf0", dt.float64, (50,), (70,), lambda i, r: load(bx, (i[0], r[0])))
    (kernel,) = schedule(LoweredProgram((bx,), (row_sum,), ("buf0",)))  # along the reduction
    assert not _reduces_across_outputs(kernel)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (300, 5000), (9000, 9)])
def test_column_sums_in_tiles_match_interpreter(shape, dtype):
    # 5000 columns: one full tile of 4096 and a partial one
    x = RNG.uniform(-1, 1, shape).astype(dtype)
    program = column_sum_program(x)
    (got,), (expected,) = run_both(program, [x])
    assert_close(got, np.sum(x.astype(np.float64), axis=0), dtype)
    assert_close(got, expected, dtype)


def test_column_reductions_fused_where_the_second_loads_the_first():
    # BatchNorm1d's statistics: per column, sum(x), then sum((x - mean)^2), in one kernel.
    m, n = 1000, 4100
    x = RNG.standard_normal((m, n))
    bx = input_buffer("x", x)
    buf0 = reduction("buf0", dt.float64, (n,), (m,), lambda i, r: load(bx, (r[0], i[0])))

    def squared_deviation(i, r):
        mean = ops.div(ops.load("buf0", i[0]), ops.constant(m, dt.float64))
        return ops.pow(ops.sub(load(bx, (r[0], i[0])), mean), 2)

    buf1 = reduction("buf1", dt.float64, (n,), (m,), squared_deviation)
    program = LoweredProgram((bx,), (buf0, buf1), ("buf0", "buf1"))
    (kernel,) = schedule(program)
    assert _reduces_across_outputs(kernel)
    (total, squares), expected = run_both(program, [x])
    assert_close(total, x.sum(axis=0), np.float64)
    assert_close(squares, np.var(x, axis=0) * m, np.float64)
    assert_close(squares, expected[1], np.float64)


def test_middle_axis_sum_of_a_3d_input_keeps_outer_loops():
    x = RNG.uniform(-1, 1, (3, 40, 4500)).astype(np.float32)
    bx = input_buffer("x", x)
    body = lambda i, r: load(bx, (i[0], r[0], i[1]))
    node = reduction("buf0", dt.float32, (3, 4500), (40,), body)
    program = LoweredProgram((bx,), (node,), ("buf0",))
    (got,), (expected,) = run_both(program, [x])
    assert_close(got, x.astype(np.float64).sum(axis=1), np.float32)
    assert_close(got, expected, np.float32)


def test_column_max_propagates_nan():
    x = RNG.standard_normal((100, 33)).astype(np.float32)
    x[50, 7] = np.nan
    bx = input_buffer("x", x)
    node = reduction("buf0", dt.float32, (33,), (100,), lambda i, r: load(bx, (r[0], i[0])), "max")
    (got,), _ = run_compiled(LoweredProgram((bx,), (node,), ("buf0",)), [x])
    np.testing.assert_array_equal(got, np.max(x, axis=0))


def test_column_sum_vectorizes():
    (kernel,) = schedule(column_sum_program(np.zeros((64, 64), np.float32)))
    compiled = BACKEND.compile_kernel(kernel, {"x": dt.float32, "buf0": dt.float32})
    assert "lane.body" in compiled.source
    assert "x float>" in compiled.optimized_source


# -- the thread pool ---------------------------------------------------------------------------


def test_threaded_run_equals_single_threaded(monkeypatch):
    x = RNG.standard_normal((1000, 300)).astype(np.float32)
    bx = input_buffer("x", x)
    body = lambda i, r: ops.exp(load(bx, (i[0], r[0])))
    program = LoweredProgram(
        (bx,), (reduction("buf0", dt.float32, (1000,), (300,), body),), ("buf0",)
    )
    monkeypatch.setattr(config, "num_threads", 1)
    (alone,), _ = run_compiled(program, [x])
    monkeypatch.setattr(config, "num_threads", 3)
    monkeypatch.setattr(config, "parallel_threshold", 1)
    (threaded,), _ = run_compiled(program, [x])
    np.testing.assert_array_equal(alone, threaded)


def test_threaded_column_sums_equal_single_threaded(monkeypatch):
    x = RNG.standard_normal((50, 9000)).astype(np.float32)  # split across threads and tiles
    monkeypatch.setattr(config, "num_threads", 1)
    (alone,), _ = run_compiled(column_sum_program(x), [x])
    monkeypatch.setattr(config, "num_threads", 3)
    monkeypatch.setattr(config, "parallel_threshold", 1)
    (threaded,), _ = run_compiled(column_sum_program(x), [x])
    np.testing.assert_array_equal(alone, threaded)


# -- the generated IR --------------------------------------------------------------------------


@pytest.mark.extras("exact_trig")
def test_source_is_the_documented_abi_and_the_optimized_ir_is_vectorized():
    x = np.zeros(4096, np.float32)
    (kernel,) = schedule(sincos_program(x))
    compiled = BACKEND.compile_kernel(
        kernel, {"x": dt.float32, "buf0": dt.float32, "buf1": dt.float32, "buf2": dt.float32}
    )
    source = compiled.source
    assert 'define void @"kernel0"(ptr %"buffers", i64 %"start", i64 %"end")' in source
    assert 'define internal void @"kernel0.body"(ptr noalias %"x", ptr noalias %"buf2"' in source
    assert 'define internal void @"kernel0.body.exact"(ptr noalias %"x"' in source
    # The lines quoted in [Note: the LLVM kernel]:
    assert '%"x[i0]" = load float, ptr %"&x[i0]"' in source
    assert '%"sin" = call float @"minitorch.sin.fast.float"(float %"x[i0]")' in source
    assert '%"sin" = call float @"minitorch.sin.float"(float %"x[i0]")' in source  # the exact one
    assert 'store float %"add", ptr %"&buf2[i0]"' in source
    # buf1's load of x reuses buf0's; sin, cos: registers (once in each body)
    assert source.count("load float") == 2
    assert "x float>" in compiled.optimized_source  # vector registers, e.g. <8 x float>
    assert "@llvm.sin" not in compiled.optimized_source


def test_sum_vectorizes_thanks_to_reassoc():
    x = np.zeros(4096, np.float32)
    bx = input_buffer("x", x)
    node = reduction("buf0", dt.float32, (), (4096,), lambda index, r: load(bx, r))
    (kernel,) = schedule(LoweredProgram((bx,), (node,), ("buf0",)))
    compiled = BACKEND.compile_kernel(kernel, {"x": dt.float32, "buf0": dt.float32})
    assert "fadd reassoc float" in compiled.source
    assert "fadd reassoc <" in compiled.optimized_source


@pytest.mark.parametrize("reduction_type", ["max", "min"])
def test_a_masked_max_vectorizes_and_keeps_nan(reduction_type):
    # [Note: a masked max that vectorizes] in reductions.py: max(acc, where(mask, -inf, x)).
    x = RNG.standard_normal((8, 512)).astype(np.float32)
    mask = (RNG.random((8, 512)) < 0.5).astype(np.float32)
    x[2, 7], mask[2, 7] = np.nan, 1.0  # a NaN the mask keeps: the row's answer is NaN
    x[5, 9], mask[5, 9] = np.nan, 0.0  # one it hides: the row's answer is a number
    bx, bm = input_buffer("x", x), input_buffer("m", mask)
    fill = -np.inf if reduction_type == "max" else np.inf

    def body(i, r):
        hidden = ops.eq(load(bm, (i[0], r[0])), ops.constant(0.0, dt.float32))
        return ops.where(hidden, ops.constant(fill, dt.float32), load(bx, (i[0], r[0])))

    node = reduction("buf0", dt.float32, (8,), (512,), body, reduction_type)
    program = LoweredProgram((bx, bm), (node,), ("buf0",))
    (kernel,) = schedule(program)
    compiled = BACKEND.compile_kernel(
        kernel, {"x": dt.float32, "m": dt.float32, "buf0": dt.float32}
    )
    assert "x float>" in compiled.optimized_source
    (got,), _ = run_compiled(program, [x, mask])
    expected = getattr(np, reduction_type)(np.where(mask == 0, fill, x), axis=1)
    np.testing.assert_array_equal(got, expected)
    assert np.isnan(got[2]) and not np.isnan(got[5])


# -- errors ------------------------------------------------------------------------------------


def test_calling_with_a_wrong_or_missing_buffer_fails_by_name():
    x = np.zeros(8, np.float32)
    (kernel,) = schedule(unary_program(ops.exp, x))
    compiled = BACKEND.compile_kernel(kernel, {"x": dt.float32, "buf0": dt.float32})
    with pytest.raises(DTypeError, match="'x' is float64"):
        compiled({"x": np.zeros(8), "buf0": np.zeros(8, np.float32)})
    with pytest.raises(MinitorchError, match="'buf0'"):
        compiled({"x": x})


def test_mixing_dtypes_without_conversion_is_a_compile_error():
    x = np.zeros(8, np.float32)
    bx = input_buffer("x", x)
    body = lambda index: ops.add(load(bx, index), ops.constant(1.0, dt.float64))
    program = LoweredProgram((bx,), (computed("buf0", dt.float32, (8,), body),), ("buf0",))
    with pytest.raises(CompileError, match="to_dtype"):
        run_compiled(program, [x])


def test_unsupported_dtype_and_reduction_are_named():
    x = np.zeros(8, np.float16)
    (kernel,) = schedule(unary_program(ops.neg, x.astype(np.float32)))
    float16 = dt.DType("float16", np.dtype(np.float16), 2)  # LLVM does not compile it
    with pytest.raises(DTypeError, match="float16"):
        BACKEND.compile_kernel(kernel, {"x": float16, "buf0": float16})
    y = np.zeros((2, 4), np.float32)
    by = input_buffer("y", y)
    node = reduction("buf0", dt.float32, (2,), (4,), lambda i, r: load(by, (i[0], r[0])), "mode")
    with pytest.raises(CompileError, match="'mode'"):
        run_compiled(LoweredProgram((by,), (node,), ("buf0",)), [y])


def test_a_load_of_a_kernel_node_elsewhere_than_its_store_index_is_refused():
    # The scheduler never builds this; a hand-made FusedKernel can, and must fail loudly.
    x = np.zeros(8, np.float32)
    bx = input_buffer("x", x)
    buf0 = computed("buf0", dt.float32, (8,), lambda index: load(bx, index))
    buf1 = computed("buf1", dt.float32, (8,), lambda index: ops.load("buf0", 7 - index[0]))
    kernel = FusedKernel("kernel0", (Loop((), (buf0, buf1)),), (8,), (), ("x",), ("buf1",))
    with pytest.raises(CompileError, match="load of buf0 at"):
        BACKEND.compile_kernel(kernel, {"x": dt.float32, "buf0": dt.float32, "buf1": dt.float32})


def test_an_op_the_backend_lacks_is_a_compile_error_naming_it(monkeypatch):
    monkeypatch.delattr(LLVMOps, "cos")  # as if cos were a new op nobody taught LLVMOps yet
    with pytest.raises(CompileError, match="does not implement ops.cos"):
        run_compiled(unary_program(ops.cos, np.zeros(4, np.float32)), [np.zeros(4, np.float32)])


def test_zero_dimensional_pointwise():
    x = np.array(0.5)
    (got,), (expected,) = run_both(unary_program(ops.log, x), [x])
    assert got.shape == () and float(got) == np.log(0.5) == float(expected)


def test_a_body_computing_the_wrong_dtype_is_a_compile_error():
    x = np.zeros(8, np.float32)
    bx = input_buffer("x", x)
    body = lambda index: ops.to_dtype(load(bx, index), dt.float64)  # declared float32
    program = LoweredProgram((bx,), (computed("buf0", dt.float32, (8,), body),), ("buf0",))
    with pytest.raises(CompileError, match="buf0 computes double, not float32"):
        run_compiled(program, [x])


# -- kernels of several loops over each row ------------------------------------------------------


def row_softmax_program(x: np.ndarray) -> LoweredProgram:
    """max, sum of exp(x - max), exp(x - max) / sum along dim 1: one kernel of three loops."""
    rows, n = x.shape
    bx = input_buffer("x", x)
    row_max = reduction(
        "buf0", dt.float32, (rows, 1), (n,), lambda i, r: load(bx, (i[0], r[0])), "max"
    )
    exp = lambda i0, i1: ops.exp(ops.sub(load(bx, (i0, i1)), ops.load("buf0", i0)))  # noqa: E731
    total = reduction("buf1", dt.float32, (rows, 1), (n,), lambda i, r: exp(i[0], r[0]))
    out = computed(
        "buf2", dt.float32, (rows, n), lambda i: ops.div(exp(i[0], i[1]), ops.load("buf1", i[0]))
    )
    return LoweredProgram((bx,), (row_max, total, out), ("buf2",))


def test_row_softmax_is_one_kernel_whose_loops_all_vectorize():
    x = RNG.standard_normal((16, 256)).astype(np.float32)
    x[3, 5] = np.nan
    program = row_softmax_program(x)
    (kernel,) = schedule(program)
    assert [len(loop.nodes) for loop in kernel.loops] == [1, 1, 1] and kernel.writes == ("buf2",)
    compiled = BACKEND.compile_kernel(kernel, program.dtypes())
    optimized = compiled.optimized_source
    assert "@llvm.maximum.v" in optimized  # the max loop: vector maximums, NaN propagating
    assert "fadd reassoc <" in optimized  # the sum loop: vector partial sums
    assert "store <" in optimized  # the normalising loop: vector stores
    (got,), (expected,) = run_both(program, [x])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_the_loops_of_a_row_stay_loops():
    # [Note: unrolling a row's loops]: unrolled whole, the max loop's 64 vectors of a row would
    # be kept in registers (and the stack) for the next loop instead of loaded again
    x = RNG.standard_normal((8, 1024)).astype(np.float32)
    program = row_softmax_program(x)
    (kernel,) = schedule(program)
    optimized = BACKEND.compile_kernel(kernel, program.dtypes()).optimized_source
    back_edges = [
        line
        for line in optimized.splitlines()
        if line.lstrip().startswith("br i1") and "vector.body" in line and "!llvm.loop" in line
    ]
    assert len(back_edges) == 3
    (got,), (expected,) = run_both(program, [x])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
