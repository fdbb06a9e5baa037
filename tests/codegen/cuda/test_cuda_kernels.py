"""CUDA kernels with no GPU: the PTX of each kind of kernel (ptxas checks it, see
ptxas_plugin.py), and its grid emulation against the reference interpreter.

The conformance suite grades the emulation on every op, layout and reduction
(`pytest tests/conformance --backend cuda_emulator`); these tests pin what is particular to
the GPU: which strategy and launch a kernel gets, what its PTX holds, grids smaller than the
work (grid-stride loops), huge sin arguments, and sizes known only at run time.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from codegen.cuda import launch
from codegen.cuda.emulate import CudaEmulatorBackend
from codegen.cuda.kernel import generate_kernel
from codegen.cuda.launch import BLOCK_PER_ROW, THREAD_PER_ROW, launch_plan
from ir.indexing import Const, Var
from ir.nodes import InputBuffer, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import ops
from ir.scheduler import schedule
from minitorch.dtype import float32, float64, int64
from minitorch.errors import IndexOutOfRangeError
from tests.conformance.kernels import (
    assert_agrees,
    compile_program,
    computed,
    contiguous,
    execute,
    input_buffer,
    load,
    reduction,
    run_backend,
    run_reference,
)
from tracer.dynamo import fallback_reasons

BACKEND = CudaEmulatorBackend()


def _check(
    program: LoweredProgram, inputs: dict[str, np.ndarray], ulps: float = 0, sums: bool = False
) -> list:
    """The emulated kernels agree with the interpreter (within `ulps`; or, with `sums`, to
    float rounding: a sum's order is the block's, not numpy's); gives the compiled kernels."""
    expected = run_reference(program, inputs)
    compiled = compile_program(BACKEND, program)
    got = execute(compiled, program, inputs, expected)
    if sums:
        for name, want in expected.items():
            tolerance = 1e-5 if want.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(got[name], want, rtol=tolerance, atol=tolerance)
    else:
        assert_agrees(got, expected, ulps=ulps)
    return [kernel for _, kernel in compiled]


def _softmax(x) -> LoweredProgram:
    """max, sum of exp(x - max), exp(x - max) / sum along dim 1: one kernel of three loops."""
    rows, n = x.layout.size
    dtype = x.layout.dtype
    m = computed("buf0", reduction(x, (1,), True, "max"))
    exp = lambda i: ops.exp(ops.sub(load(x, i), load(m, (i[0], Const(0)))))  # noqa: E731
    s = computed("buf1", Reduction(dtype, (rows, 1), (n,), "sum", lambda i, r: exp((i[0], r[0]))))
    out = computed(
        "buf2", Pointwise(dtype, (rows, n), lambda i: ops.div(exp(i), load(s, (i[0], Const(0)))))
    )
    return LoweredProgram((x,), (m, s, out), ("buf2",))


def _layernorm(x) -> LoweredProgram:
    """(x - mean) * rsqrt(mean of squares + eps) along dim 1: sums, a row step after each."""
    rows, n = x.layout.size
    dtype = x.layout.dtype
    per_row = lambda buffer, i: load(buffer, (i[0], Const(0)))  # noqa: E731
    by_n = lambda buffer: Pointwise(
        dtype,
        (rows, 1),
        lambda i: ops.mul(  # noqa: E731
            per_row(buffer, i), ops.constant(1 / n, dtype)
        ),
    )
    total = computed("buf0", reduction(x, (1,), True, "sum"))
    mean = computed("buf1", by_n(total))
    centered = lambda i: ops.sub(load(x, i), per_row(mean, i))  # noqa: E731
    squares = computed(
        "buf2",
        Reduction(dtype, (rows, 1), (n,), "sum", lambda i, r: ops.square(centered((i[0], r[0])))),
    )
    variance = computed("buf3", by_n(squares))
    out = computed(
        "buf4",
        Pointwise(
            dtype,
            (rows, n),
            lambda i: ops.mul(
                centered(i), ops.rsqrt(ops.add(per_row(variance, i), ops.constant(1e-5, dtype)))
            ),
        ),
    )
    return LoweredProgram((x,), (total, mean, squares, variance, out), ("buf4",))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_and_layernorm_are_one_block_per_row_kernel(dtype: str):
    array = np.random.default_rng(0).standard_normal((37, 300)).astype(dtype)
    array[3, 7] = np.nan
    array[5, :] = -np.inf
    for build in (_softmax, _layernorm):
        x = input_buffer("x", array)
        (kernel,) = _check(build(x), {"x": array}, sums=True)
        assert kernel.plan == launch.LaunchPlan(BLOCK_PER_ROW, 256, (37, 1))
        assert kernel.plan.grid() == (37, 1, 1)
        for instruction in ("shfl.sync.bfly.b32", "bar.sync", ".shared", "ld.global"):
            assert instruction in kernel.ptx, instruction


@pytest.mark.parametrize(
    "reduction_type, dtype",
    [
        (reduction_type, dtype)
        for reduction_type in ("sum", "max", "min", "argmax", "argmin")
        for dtype in ("float32", "float64", "int32", "int64", "bool")
        if (reduction_type, dtype) != ("sum", "bool")  # not a loop-IR reduction of bools
    ],
)
def test_row_reductions_in_a_block(reduction_type: str, dtype: str):
    """Rows longer than the block (strided threads) and shorter (idle ones); ties and NaN."""
    rng = np.random.default_rng(1)
    for n in (700, 5):
        array = (
            rng.integers(-3, 4, (9, n)) if dtype != "bool" else rng.integers(0, 2, (9, n))
        ).astype(dtype)
        if dtype.startswith("float"):
            array[2, 650 % n] = np.nan
        x = input_buffer("x", array)
        program = LoweredProgram(
            (x,), (computed("buf0", reduction(x, (1,), False, reduction_type)),), ("buf0",)
        )
        (kernel,) = _check(program, {"x": array}, ulps=n * 2.0)
        assert kernel.plan.strategy == BLOCK_PER_ROW


def test_column_sums_are_one_thread_per_output():
    array = np.random.default_rng(2).standard_normal((50, 333)).astype(np.float32)
    x = input_buffer("x", array)
    program = LoweredProgram((x,), (computed("buf0", reduction(x, (0,), False, "sum")),), ("buf0",))
    (kernel,) = _check(program, {"x": array}, sums=True)
    assert kernel.plan == launch.LaunchPlan(THREAD_PER_ROW, 256, (333,))
    assert kernel.plan.grid() == (2, 1, 1)


def test_pointwise_trig_with_huge_arguments_and_several_blocks():
    array = np.random.default_rng(3).uniform(-10, 10, 5000).astype(np.float64)
    array[:4] = [1e300, -3e30, np.inf, np.nan]
    x = input_buffer("x", array)
    out = computed(
        "buf0",
        Pointwise(float64, (5000,), lambda i: ops.mul(ops.sin(load(x, i)), ops.cos(load(x, i)))),
    )
    (kernel,) = _check(LoweredProgram((x,), (out,), ("buf0",)), {"x": array}, ulps=8)
    assert kernel.plan == launch.LaunchPlan(THREAD_PER_ROW, 256, (5000,))
    assert kernel.plan.grid() == (20, 1, 1)
    assert ".extern" not in kernel.ptx  # the exact path is in the module: nothing to link


def test_rand_and_integer_and_bool_ops():
    """rand (its bits are eager mode's), int32 arithmetic and comparisons, a bool where."""
    array = np.arange(-50, 50, dtype=np.int32)
    x = input_buffer("x", array)

    def body(i):
        value = load(x, i)
        uniform = ops.rand(ops.constant(7, int64), ops.index_expr(i[0], int64))
        positive = ops.lt(ops.constant(0, x.layout.dtype), value)
        scaled = ops.mul(ops.to_dtype(value, float64), uniform)
        return ops.where(positive, scaled, ops.to_dtype(ops.mul(value, value), float64))

    out = computed("buf0", Pointwise(float64, (100,), body))
    _check(LoweredProgram((x,), (out,), ("buf0",)), {"x": array})


@pytest.mark.parametrize("build", [_softmax, _layernorm])
def test_grids_smaller_than_the_work(monkeypatch: pytest.MonkeyPatch, build):
    """With at most 2 blocks, each block strides over rows (and threads over elements)."""
    monkeypatch.setattr(launch, "MAX_GRID", 2)
    array = np.random.default_rng(4).standard_normal((11, 40)).astype(np.float32)
    (kernel,) = _check(build(input_buffer("x", array)), {"x": array}, sums=True)
    assert kernel.plan.grid() == (2, 1, 1)
    flat = array.reshape(-1)
    x = input_buffer("x", flat)
    out = computed("buf0", Pointwise(float32, flat.shape, lambda i: ops.exp(load(x, i))))
    (kernel,) = _check(LoweredProgram((x,), (out,), ("buf0",)), {"x": flat}, ulps=4)
    assert kernel.plan.grid() == (2, 1, 1)


def test_symbolic_sizes():
    """One kernel over (s0, s1), launched at several sizes: the grid follows them."""
    rng = np.random.default_rng(5)
    symbolic = _softmax(InputBuffer("x", contiguous((Var("s0"), Var("s1")), float32)))
    compiled = compile_program(BACKEND, symbolic, ("s0", "s1"))
    (kernel,) = [k for _, k in compiled]
    assert kernel.plan.block_dim == launch.BLOCK_DIM  # the row length is not known
    for rows, n in ((2, 3), (40, 513), (3, 2)):
        array = rng.standard_normal((rows, n)).astype(np.float32)
        concrete = _softmax(input_buffer("x", array))
        expected = run_reference(concrete, {"x": array})
        got = execute(compiled, concrete, {"x": array}, expected, {"s0": rows, "s1": n})
        np.testing.assert_allclose(got["buf2"], expected["buf2"], rtol=1e-5, atol=1e-6)
        assert kernel.plan.grid({"s0": rows, "s1": n}) == (rows, 1, 1)


def test_an_index_out_of_bounds_is_reported():
    table = input_buffer("table", np.arange(10.0))
    indices = input_buffer("indices", np.array([1, 12, 3], np.int64))
    out = computed(
        "buf0",
        Pointwise(
            float64,
            (3,),
            lambda i: ops.load(
                "table", Var(ops.indirect_indexing(load(indices, i), 10, False).name)
            ),
        ),
    )
    program = LoweredProgram((table, indices), (out,), ("buf0",))
    with pytest.raises(IndexOutOfRangeError):
        run_backend(
            BACKEND,
            program,
            {"table": np.arange(10.0), "indices": np.array([1, 12, 3], np.int64)},
            {},
        )


def test_the_gpu_kernel_takes_global_pointers_and_reads_its_indices():
    array = np.ones((4, 64), np.float32)
    (kernel,) = schedule(_softmax(input_buffer("x", array)))
    text = str(generate_kernel(kernel, _softmax(input_buffer("x", array)).dtypes()))
    assert 'define ptx_kernel void @"kernel0"(ptr addrspace(1) noalias %"x.global"' in text
    assert "llvm.nvvm.read.ptx.sreg.tid.x" in text
    emulated = str(
        generate_kernel(kernel, _softmax(input_buffer("x", array)).dtypes(), emulated=True)
    )
    assert "nvvm" not in emulated and 'i64 %"grid_dim"' in emulated


def test_launch_plans():
    """Small known sizes get small blocks (whole warps); unknown ones the default."""
    x = input_buffer("x", np.empty((3, 10), np.float32))
    (pointwise,) = schedule(
        LoweredProgram(
            (x,),
            (computed("buf0", Pointwise(float32, (3, 10), lambda i: ops.exp(load(x, i)))),),
            ("buf0",),
        )
    )
    assert launch_plan(pointwise) == launch.LaunchPlan(THREAD_PER_ROW, 32, (3, 10))
    assert launch_plan(pointwise).grid() == (1, 1, 1)
    (rows,) = schedule(
        LoweredProgram((x,), (computed("buf0", reduction(x, (1,), False, "sum")),), ("buf0",))
    )
    assert launch_plan(rows) == launch.LaunchPlan(BLOCK_PER_ROW, 32, (3,))


@pytest.mark.parametrize("name", ["sincos", "gelu", "softmax", "layernorm"])
def test_whole_graphs_forward_and_backward(name: str):
    """The issue's four workloads compiled with the emulator, gradients included: the same
    values as eager mode, and the PTX of every kernel made (ptxas_plugin.py assembles it)."""
    functions = {
        "sincos": lambda x: minitorch.sin(x) ** 2 + minitorch.cos(x) ** 2,
        "gelu": lambda x: F.gelu(x),
        "softmax": lambda x: F.softmax(x, dim=-1),
        "layernorm": lambda x: F.layer_norm(x, (x.shape[-1],)),
    }
    function = functions[name]
    weights = minitorch.from_numpy(
        np.random.default_rng(6).standard_normal((33, 70)).astype(np.float32)
    )
    compiled = minitorch.compile(function, backend="cuda_emulator")
    results = []
    for run in (function, compiled):
        x = minitorch.from_numpy(
            np.random.default_rng(7).standard_normal((33, 70)).astype(np.float32) * 3
        ).requires_grad_()
        (run(x) * weights).sum().backward()
        results.append((run(x).detach().numpy(), x.grad.numpy()))
    assert fallback_reasons(compiled) == []
    for eager, compiled in zip(*results, strict=True):
        np.testing.assert_allclose(compiled, eager, rtol=1e-4, atol=1e-5)


def test_a_float_cast_to_an_integer_saturates_as_the_gpus_conversion_does():
    """NaN gives 0 and floats beyond the integer's range its largest or smallest value (PTX's
    cvt.rzi, and so cupy's casts); a NaN the optimizer sees ahead of time still gives 0, where
    LLVM's fptosi alone made it poison and the kernel stored nothing."""
    special = [np.nan, np.inf, -np.inf, 1e20, -1e20, 3.7, -3.7, 2.0**31, -(2.0**31)]
    x = minitorch.tensor(np.array(special * 150, np.float32))  # vector loops and their tails
    as_ints = minitorch.compile(lambda x: ((x * 1).long(), (x * 1).int()), backend="cuda_emulator")(
        x
    )
    top64, top32 = 2**63 - 1, 2**31 - 1
    assert as_ints[0].numpy()[:9].tolist() == [
        0,
        top64,
        -top64 - 1,
        top64,
        -top64 - 1,
        3,
        -3,
        2**31,
        -(2**31),
    ]
    assert as_ints[1].numpy()[:9].tolist() == [
        0,
        top32,
        -top32 - 1,
        top32,
        -top32 - 1,
        3,
        -3,
        top32,
        -top32 - 1,
    ]
    for values in as_ints:  # every repeat alike
        np.testing.assert_array_equal(
            values.numpy().reshape(150, 9), np.tile(values.numpy()[:9], (150, 1))
        )
    nan_is_zero = minitorch.compile(
        lambda x: (x + float("nan")).long() == 0, backend="cuda_emulator"
    )(minitorch.ones(1000))
    assert nan_is_zero.numpy().all()
