"""A warp per row, and launch plans as a hook (codegen/cuda/launch.py): the warp's kernels on
the grid emulation against the reference interpreter, their grid and PTX (ptxas_plugin.py
assembles it), and what register_launch_plan does with plans of one's own."""

from __future__ import annotations

import re

import numpy as np
import pytest

from codegen.cuda import launch, rows
from codegen.cuda.launch import BLOCK_PER_ROW, WARP_PER_ROW, LaunchPlan, launch_plan
from codegen.cuda.probe import probe
from ir.indexing import Var
from ir.nodes import InputBuffer, LoweredProgram
from ir.scheduler import schedule
from minitorch.dtype import float32
from minitorch.errors import CompileError
from tests.codegen.cuda.test_cuda_kernels import BACKEND, _check, _layernorm, _softmax
from tests.conformance.kernels import (
    compile_program,
    computed,
    contiguous,
    execute,
    input_buffer,
    reduction,
    run_reference,
)


@pytest.fixture
def warps():
    """Warp per row turned on, for one test."""
    launch.activate_launch_plan(WARP_PER_ROW)
    yield
    launch.activate_launch_plan(WARP_PER_ROW, False)


def _row_reduction(array: np.ndarray, reduction_type: str) -> LoweredProgram:
    x = input_buffer("x", array)
    return LoweredProgram(
        (x,), (computed("buf0", reduction(x, (1,), False, reduction_type)),), ("buf0",)
    )


def _assert_warps_only(kernel) -> None:
    """The PTX of a warp per row: shuffles 16 to 1 lanes apart, no shared memory, no barrier."""
    assert kernel.plan.strategy == WARP_PER_ROW
    assert ".shared" not in kernel.ptx and "bar.sync" not in kernel.ptx
    for distance in (16, 8, 4, 2, 1):
        assert "shfl.sync.bfly.b32" in kernel.ptx and f", {distance}, 31, -1;" in kernel.ptx


def test_off_by_default_and_asked_first_once_on():
    array = np.ones((37, 40), np.float32)
    (kernel,) = schedule(_softmax(input_buffer("x", array)))
    assert launch_plan(kernel).strategy == BLOCK_PER_ROW
    names = [p.name for p in launch.launch_plans(active_only=False)]
    assert names == [WARP_PER_ROW, launch.THREAD_PER_ROW, BLOCK_PER_ROW]
    assert launch.launch_plan_identity()[0].endswith(":off")
    launch.activate_launch_plan(WARP_PER_ROW)
    try:
        assert launch_plan(kernel) == LaunchPlan(WARP_PER_ROW, 256, (37, 1))
        assert launch_plan(kernel).grid() == (5, 1, 1)  # 8 rows a block
        assert not launch.launch_plan_identity()[0].endswith(":off")
    finally:
        launch.activate_launch_plan(WARP_PER_ROW, False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_and_layernorm_a_warp_per_row(warps, dtype: str):
    """Rows shorter than a warp, longer, not a multiple of it; NaN and a row of -inf."""
    rng = np.random.default_rng(0)
    for shape in ((37, 100), (5, 7), (9, 33), (3, 256)):
        array = rng.standard_normal(shape).astype(dtype)
        array[1, 3] = np.nan
        array[2, :] = -np.inf
        for build in (_softmax, _layernorm):
            (kernel,) = _check(build(input_buffer("x", array)), {"x": array}, sums=True)
            _assert_warps_only(kernel)
            warps_per_block = min(launch.WARPS_PER_BLOCK, shape[0])
            assert kernel.plan.block_dim == 32 * warps_per_block
            assert kernel.plan.grid() == (-(-shape[0] // warps_per_block), 1, 1)


@pytest.mark.parametrize(
    "reduction_type, dtype",
    [
        (reduction_type, dtype)
        for reduction_type in ("sum", "max", "argmax", "argmin")
        for dtype in ("float32", "int32", "int64", "bool")
        if (reduction_type, dtype) != ("sum", "bool")
    ],
)
def test_row_reductions_a_warp_per_row(warps, reduction_type: str, dtype: str):
    """Each lane's own elements, then the butterfly: (value, position) pairs too, ties and NaN."""
    rng = np.random.default_rng(1)
    for n in (45, 5):
        array = rng.integers(-3, 4, (11, n)).astype(dtype)
        if dtype.startswith("float"):
            array[2, 40 % n] = np.nan
        (kernel,) = _check(_row_reduction(array, reduction_type), {"x": array}, ulps=n * 2.0)
        _assert_warps_only(kernel)


def test_long_or_unknown_rows_stay_a_block_per_row(warps):
    long = np.zeros((4, launch.WARP_ROWS + 1), np.float32)
    (kernel,) = schedule(_softmax(input_buffer("x", long)))
    assert launch_plan(kernel).strategy == BLOCK_PER_ROW
    symbolic = _softmax(InputBuffer("x", contiguous((4, Var("s0")), float32)))
    (kernel,) = schedule(symbolic)
    assert launch_plan(kernel, ("s0",)).strategy == BLOCK_PER_ROW
    x = input_buffer("x", long.T.copy())  # columns of 4: short, but a column sum
    column_sums = LoweredProgram(
        (x,), (computed("buf0", reduction(x, (0,), False, "sum")),), ("buf0",)
    )
    (kernel,) = schedule(column_sums)
    assert launch_plan(kernel).strategy == launch.THREAD_PER_ROW


def test_rows_known_at_run_time_and_grids_smaller_than_the_rows(warps, monkeypatch):
    """s0 rows of 24: 8 warps a block, a grid of ceil(s0 / 8); with at most 2 blocks each warp
    strides over several rows."""
    rng = np.random.default_rng(5)
    symbolic = _softmax(InputBuffer("x", contiguous((Var("s0"), 24), float32)))
    (kernel,) = [k for _, k in compile_program(BACKEND, symbolic, ("s0",))]
    assert kernel.plan.block_dim == 256
    compiled = [(schedule(symbolic)[0], kernel)]
    for count, grid in ((3, 1), (50, 7), (50, 2)):
        if grid == 2:
            monkeypatch.setattr(launch, "MAX_GRID", 2)
        array = rng.standard_normal((count, 24)).astype(np.float32)
        concrete = _softmax(input_buffer("x", array))
        expected = run_reference(concrete, {"x": array})
        got = execute(compiled, concrete, {"x": array}, expected, {"s0": count})
        np.testing.assert_allclose(got["buf2"], expected["buf2"], rtol=1e-5, atol=1e-6)
        assert kernel.plan.grid({"s0": count}) == (grid, 1, 1)


# ---- the hook ---------------------------------------------------------------------------------


@pytest.fixture
def registered():
    """Names registered by a test, unregistered after it."""
    names: list[str] = []
    yield names
    for name in names:
        launch.unregister_launch_plan(name)


def test_a_plan_of_ones_own_is_asked_first_and_may_reuse_a_strategy(registered):
    """Small blocks for every row reduction, with block per row's code: no strategy of its own."""
    array = np.random.default_rng(2).standard_normal((6, 300)).astype(np.float32)

    def small_blocks(kernel, sizes):
        if kernel.reduction_ranges:
            return LaunchPlan(BLOCK_PER_ROW, 64, kernel.ranges)
        return None

    launch.register_launch_plan("small_blocks", small_blocks)
    registered.append("small_blocks")
    (kernel,) = _check(_softmax(input_buffer("x", array)), {"x": array}, sums=True)
    assert kernel.plan == LaunchPlan(BLOCK_PER_ROW, 64, (6, 1))
    assert launch.launch_plan_identity()[0].startswith("small_blocks:")


def test_a_strategy_of_ones_own_runs_its_code(registered):
    """A strategy registered with blocks and emit: the tree's warp per row, as another name."""

    def choose(kernel, sizes):
        plan = launch._warp_per_row(kernel, sizes)
        return plan and LaunchPlan("mine", plan.block_dim, plan.rows)

    launch.register_launch_plan(
        "mine", choose, blocks=launch._a_warp_per_row, emit=rows.warp_per_row
    )
    registered.append("mine")
    array = np.random.default_rng(3).standard_normal((13, 50)).astype(np.float32)
    (kernel,) = _check(_layernorm(input_buffer("x", array)), {"x": array}, sums=True)
    assert kernel.plan.strategy == "mine" and ".shared" not in kernel.ptx


@pytest.mark.parametrize(
    "returned, words",
    [
        (lambda k: "warps", "returned 'warps', not a LaunchPlan or None"),
        (lambda k: LaunchPlan(BLOCK_PER_ROW, 48, k.ranges), "a block of 48 threads"),
        (lambda k: LaunchPlan(BLOCK_PER_ROW, 64, (3,)), "gave rows (3,)"),
        (lambda k: LaunchPlan("nowhere", 64, k.ranges), "no launch strategy 'nowhere'"),
        (lambda k: 1 / 0, "launch plan 'bad' failed on kernel0: ZeroDivisionError"),
    ],
)
def test_a_bad_plan_is_a_compile_error_naming_it(registered, returned, words):
    launch.register_launch_plan("bad", lambda kernel, sizes: returned(kernel))
    registered.append("bad")
    (kernel,) = schedule(_row_reduction(np.ones((4, 8), np.float32), "sum"))
    with pytest.raises(CompileError, match=re.escape(words)):
        launch_plan(kernel)


def test_registering_checks_its_arguments(registered):
    with pytest.raises(CompileError, match="already registered"):
        launch.register_launch_plan(BLOCK_PER_ROW, lambda k, s: None)
    with pytest.raises(CompileError, match="needs both blocks and emit"):
        launch.register_launch_plan("half", lambda k, s: None, blocks=lambda p, n: n)
    with pytest.raises(CompileError, match="no launch plan named 'nope'"):
        launch.activate_launch_plan("nope")


def test_the_identity_is_the_name_and_a_digest_of_the_source(registered):
    before = launch.launch_plan_identity()
    assert before == launch.launch_plan_identity()  # the same every time (no addresses)
    assert all(len(entry.split(":")[1]) == 16 for entry in before)
    launch.register_launch_plan("none", lambda kernel, sizes: None)
    registered.append("none")
    assert launch.launch_plan_identity()[1:] == before
    assert launch.launch_plan_identity()[0].startswith("none:")


# ---- the probe: the GPU's own index code, thread by thread ------------------------------------


@pytest.mark.parametrize("strategy", [WARP_PER_ROW, BLOCK_PER_ROW])
def test_the_probe_sees_who_takes_each_row_on_the_gpu(strategy, monkeypatch):
    """Every row run by one warp (or one block), its elements walked once, its value stored
    once; with the grid capped at 2 blocks too (grid-stride loops)."""
    launch.activate_launch_plan(WARP_PER_ROW, strategy == WARP_PER_ROW)
    try:
        for shape, max_grid in (((37, 45), None), ((37, 5), 2), ((2, 33), None)):
            if max_grid:
                monkeypatch.setattr(launch, "MAX_GRID", max_grid)
            (kernel,) = schedule(_softmax(input_buffer("x", np.zeros(shape, np.float32))))
            seen = probe(kernel)
            assert seen.plan.strategy == strategy
            threads = 32 if strategy == WARP_PER_ROW else seen.plan.block_dim
            assert (seen.visits == threads).all() and (seen.lanes == 0xFFFFFFFF).all()
            assert (seen.elements == 1).all() and (seen.stores == 1).all()
            assert seen.one_warp().all() == (threads == 32)
    finally:
        launch.activate_launch_plan(WARP_PER_ROW, False)


def test_the_probe_of_thread_per_row_and_of_rows_at_run_time():
    x = input_buffer("x", np.zeros((300, 7), np.float32))
    column_sums = LoweredProgram(
        (x,), (computed("buf0", reduction(x, (0,), False, "sum")),), ("buf0",)
    )
    (kernel,) = schedule(column_sums)
    seen = probe(kernel)
    assert seen.plan.strategy == launch.THREAD_PER_ROW and seen.grid == 1
    assert (seen.visits == 1).all() and (seen.elements == 1).all() and (seen.stores == 1).all()
    symbolic = _softmax(InputBuffer("x", contiguous((Var("s0"), 24), float32)))
    (kernel,) = schedule(symbolic)
    seen = probe(kernel, {"s0": 70})
    assert seen.visits.shape == (70,) and (seen.stores == 1).all() and (seen.elements == 1).all()
