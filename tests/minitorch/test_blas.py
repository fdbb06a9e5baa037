"""minitorch/blas.py: gemm called directly on the operands' strides gives np.matmul's values,
over random shapes, layouts, batch broadcasts and dtypes, with the BLAS found and without it;
and each product's plan says which way it went ([Note: calling BLAS directly])."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch
from minitorch import blas

FOUND = blas.library() is not None
BATCHED = FOUND and bool(blas.library().gemm_batch_strided)
needs_blas = pytest.mark.skipif(not FOUND, reason=f"no BLAS: {blas.missing()}")
needs_batched = pytest.mark.skipif(not BATCHED, reason="this BLAS has no batched gemm")

# how an operand's matrices are laid out (the batch dim, if any, is laid out apart)
LAYOUTS = ["row_major", "transposed", "padded", "padded_transposed", "stepped", "flipped"]
LAYOUTS += ["expanded", "expanded_rows", "unaligned"]
BATCH_LAYOUTS = ["packed", "shared", "flipped", "stepped"]  # shared: stride 0
# `direct` sets the same constants for every example: nothing to reset between them
SHARED_FIXTURE = [HealthCheck.function_scoped_fixture]


@pytest.fixture
def direct(monkeypatch):
    """Every product that can call gemm directly does: 2-D ones too, and batches however few
    OpenBLAS threads there are."""
    monkeypatch.setattr(blas, "DIRECT_GEMM_WORK", 0)
    monkeypatch.setattr(blas.Blas, "num_threads", lambda self: 1)


def _matrices(rng, batch: tuple[int, ...], rows: int, cols: int, layout: str, dtype):
    """An array of shape batch + (rows, cols), its last two dims laid out as `layout` says."""
    shape = (*batch, rows, cols)
    fresh = lambda s: rng.standard_normal(s).astype(dtype)  # noqa: E731
    if layout == "row_major":
        return fresh(shape)
    if layout == "transposed":
        return fresh((*batch, cols, rows)).swapaxes(-1, -2)
    if layout == "padded":  # rows further apart than cols: a slice of columns
        return fresh((*batch, rows, cols + 3))[..., :cols]
    if layout == "padded_transposed":
        return fresh((*batch, cols, rows + 2))[..., :rows].swapaxes(-1, -2)
    if layout == "stepped":  # every other row and column: no BLAS layout
        return fresh((*batch, 2 * rows, 2 * cols))[..., ::2, ::2]
    if layout == "flipped":
        return fresh(shape)[..., ::-1, ::-1]
    if layout == "expanded":  # stride 0 in both matrix dims
        return np.broadcast_to(fresh(batch + (1, 1)), shape)
    if layout == "expanded_rows":  # one row repeated
        return np.broadcast_to(fresh((*batch, 1, cols)), shape)
    if layout == "unaligned":  # a float array one byte off its alignment
        raw = np.zeros(int(np.prod(shape)) * np.dtype(dtype).itemsize + 1, np.uint8)
        x = raw[1:].view(dtype).reshape(shape)
        x[...] = fresh(shape)
        return x
    raise AssertionError(layout)


def _batched(rng, count: int, rows: int, cols: int, layout: str, batch_layout: str, dtype):
    """A (count, rows, cols) operand: matrices laid out as `layout`, the batch dim as
    `batch_layout` says."""
    if batch_layout == "shared":
        return np.broadcast_to(_matrices(rng, (1,), rows, cols, layout, dtype), (count, rows, cols))
    if batch_layout == "flipped":
        return _matrices(rng, (count,), rows, cols, layout, dtype)[::-1]
    if batch_layout == "stepped":
        return _matrices(rng, (2 * count,), rows, cols, layout, dtype)[::2]
    return _matrices(rng, (count,), rows, cols, layout, dtype)


def _check(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """blas.matmul(a, b) against np.matmul: values to float tolerance, dtype, shape, a fresh
    row-major result, the operands untouched."""
    before = a.copy(), b.copy()
    got = blas.matmul(a, b)
    want = np.matmul(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.flags.c_contiguous
    assert not np.shares_memory(got, a) and not np.shares_memory(got, b)
    if want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
    else:
        tol = 1e-4 if want.dtype == np.float32 else 1e-11
        scale = np.sqrt(max(a.shape[-1], 1))  # sums of k products of N(0, 1) values
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True)
    np.testing.assert_array_equal(a, before[0])
    np.testing.assert_array_equal(b, before[1])
    return got


dtypes = st.sampled_from([np.float32, np.float64])


def _copied(layout: str, rows: int, cols: int) -> bool | None:
    """Whether gemm must read a copy of a matrix laid out so; None where either may be right
    (a vector: stepped or flipped, it may still have a BLAS layout)."""
    if layout in ("row_major", "transposed", "padded", "padded_transposed"):
        return False
    if layout == "unaligned" or (rows > 1 and cols > 1):
        return True
    return None


@needs_blas
@settings(max_examples=150, deadline=None, suppress_health_check=SHARED_FIXTURE)
@given(
    n=st.integers(1, 40),
    k=st.integers(1, 40),
    m=st.integers(1, 40),
    left=st.sampled_from(LAYOUTS),
    right=st.sampled_from(LAYOUTS),
    dtype=dtypes,
    seed=st.integers(0, 2**16),
)
def test_gemm_matches_numpy(direct, n, k, m, left, right, dtype, seed):
    rng = np.random.default_rng(seed)
    a = _matrices(rng, (), n, k, left, dtype)
    b = _matrices(rng, (), k, m, right, dtype)
    plan = blas.product_plan(a, b)
    assert plan.route == "gemm", plan
    for read, layout, shape in ((plan.a, left, (n, k)), (plan.b, right, (k, m))):
        copied = _copied(layout, *shape)
        assert copied is None or ("copied" in read) == copied, (read, layout, shape)
    _check(a, b)


@needs_batched
@settings(max_examples=40, deadline=None, suppress_health_check=SHARED_FIXTURE)
@given(
    count=st.integers(2, 4),
    sizes=st.tuples(st.integers(100, 128), st.integers(100, 128), st.integers(101, 128)),
    left=st.sampled_from(LAYOUTS[:6]),
    right=st.sampled_from(LAYOUTS),
    batch_a=st.sampled_from(BATCH_LAYOUTS),
    batch_b=st.sampled_from(BATCH_LAYOUTS),
    dtype=dtypes,
    seed=st.integers(0, 2**16),
)
def test_batched_gemm_matches_numpy(
    direct, count, sizes, left, right, batch_a, batch_b, dtype, seed
):
    """Matrices big enough for OpenBLAS's batched gemm (m*n*k > 100**3), every batch stride:
    packed, 0 (one matrix for the batch), negative, stepped."""
    n, k, m = sizes
    rng = np.random.default_rng(seed)
    a = _batched(rng, count, n, k, left, batch_a, dtype)
    b = _batched(rng, count, k, m, right, batch_b, dtype)
    plan = blas.product_plan(a, b)
    folds = batch_b == "shared" and left in ("row_major", "padded") and batch_a == "packed"
    if folds and left == "row_major":
        assert plan.route == "numpy" and "one product of" in plan.reason, plan
    elif not folds:
        assert plan.route == "gemm_batch_strided", plan
    _check(a, b)


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(0, 5),
    n=st.integers(0, 12),
    k=st.integers(0, 12),
    m=st.integers(0, 12),
    left=st.sampled_from(LAYOUTS[:6]),
    right=st.sampled_from(LAYOUTS[:6]),
    batch_b=st.sampled_from(BATCH_LAYOUTS),
    dtype=st.sampled_from([np.float32, np.float64, np.int64, np.int32]),
    seed=st.integers(0, 2**16),
)
def test_small_and_empty_products_match_numpy(count, n, k, m, left, right, batch_b, dtype, seed):
    """Small batches, empty dims (k = 0 gives zeros) and integers: numpy's routes."""
    rng = np.random.default_rng(seed)
    make = lambda s: (rng.standard_normal(s) * 4).astype(dtype)  # noqa: E731
    a = make((count, n, k))
    b = make((1 if batch_b == "shared" else count, k, m))
    b = np.broadcast_to(b, (count, k, m))
    got = _check(a, b)
    if k == 0:
        assert not got.any()


@needs_blas
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("where", ["a", "b"])
def test_nan_and_inf_propagate(direct, dtype, where):
    """NaN and inf in an operand reach the result as in numpy's product, even against zeros;
    nothing the result's fresh memory held shows through (gemm writes it with beta = 0)."""
    junk = [np.full((2, 120, 110), np.nan, dtype) for _ in range(3)]
    del junk  # NaN left in freed memory, which np.empty may hand back
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 120, 105)).astype(dtype)
    b = rng.standard_normal((2, 105, 110)).astype(dtype)
    poisoned = a if where == "a" else b
    poisoned[0, 3, 4], poisoned[1, 7, 2], poisoned[1, 0, 0] = np.nan, np.inf, -np.inf
    (b if where == "a" else a)[0] = 0  # NaN * 0 and inf * 0 are NaN
    for x, y in ((a, b), (a[0], b[0]), (a, b.swapaxes(1, 2).copy().swapaxes(1, 2))):
        got = _check(x, y)
        assert np.isnan(got).any()
    finite = np.ones((120, 105), dtype), np.ones((2, 105, 110), dtype)
    for x, y in ((finite[0], finite[1][0]), (np.stack([finite[0]] * 2), finite[1])):
        assert np.isfinite(_check(x, y)).all()  # no NaN from the result's fresh memory


@needs_batched
def test_attention_scores_read_k_transposed_in_place(direct):
    """q @ k^T for big per-head matrices: one batched call, k^T read as it is (no copy)."""
    rng = np.random.default_rng(0)
    q = rng.standard_normal((8, 128, 64)).astype(np.float32)
    k = rng.standard_normal((8, 128, 64)).astype(np.float32)
    plan = blas.product_plan(q, k.swapaxes(1, 2))
    assert plan.route == "gemm_batch_strided"
    assert plan.a == "a: row-major, ld 64" and plan.b == "b: transposed, ld 64"
    _check(q, k.swapaxes(1, 2))


def test_plans_name_route_and_reason(monkeypatch):
    """The plan of each kind of product, as `product_plan` words it."""
    if not FOUND:
        pytest.skip(blas.missing())
    monkeypatch.setattr(blas.Blas, "num_threads", lambda self: 2)
    f32 = lambda *s: np.ones(s, np.float32)  # noqa: E731
    plan = blas.product_plan(f32(16, 128), f32(384, 128).T)
    assert plan.route == "numpy" and plan.reason == blas.SAME_GEMM
    plan = blas.product_plan(f32(64, 64, 32), f32(64, 64, 32).swapaxes(1, 2))
    assert plan.route == "numpy" and "small matrices" in plan.reason and "131072" in plan.reason
    shared = np.broadcast_to(f32(1, 64, 32), (8, 64, 32))
    plan = blas.product_plan(f32(8, 100, 64), shared)
    assert plan.route == "numpy" and "one product of 800 rows" in plan.reason
    assert blas.product_plan(np.ones((4, 4), np.int64), np.ones((4, 4), np.int64)).reason == (
        blas.NO_GEMM
    )
    assert blas.product_plan(f32(3, 0), f32(0, 5)).reason == blas.EMPTY
    if BATCHED:
        expanded = np.broadcast_to(np.float32(1), (4, 128, 128))
        plan = blas.product_plan(expanded, f32(4, 128, 128))
        assert plan.route == "gemm_batch_strided" and plan.a.startswith("a: copied")
        assert plan.b == "b: row-major, ld 128"
        plan = blas.product_plan(f32(1, 128, 128), f32(1, 128, 128))  # a batch of one
        assert plan.route == "numpy" and plan.reason == blas.SAME_GEMM
        monkeypatch.setattr(blas.Blas, "num_threads", lambda self: 8)
        plan = blas.product_plan(f32(4, 128, 128), f32(4, 128, 128))
        assert plan.route == "numpy" and plan.reason == blas.FEW


def test_without_blas_every_product_is_numpys(monkeypatch):
    """No BLAS found (other numpy builds, Windows' or macOS' Accelerate): np.matmul, with the
    reason recorded, and the same values."""
    monkeypatch.setattr(blas, "_found", (None, "test: no BLAS here"))
    monkeypatch.setattr(blas, "DIRECT_GEMM_WORK", 0)
    assert blas.library() is None and blas.missing() == "test: no BLAS here"
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 110, 100)).astype(np.float32)
    b = rng.standard_normal((4, 120, 100)).astype(np.float32).swapaxes(1, 2)
    plan = blas.product_plan(a, b)
    assert plan.route == "numpy" and plan.reason == "test: no BLAS here"
    np.testing.assert_array_equal(blas.matmul(a, b), np.matmul(a, b))
    out = minitorch.bmm(minitorch.from_numpy(a), minitorch.from_numpy(np.ascontiguousarray(b)))
    np.testing.assert_allclose(out.numpy(), np.matmul(a, b), rtol=1e-5, atol=1e-4)


def test_the_finder_says_why_it_found_nothing(monkeypatch):
    monkeypatch.setattr(blas.glob, "glob", lambda pattern: [])
    library, why = blas._find()
    assert library is None and "numpy ships no OpenBLAS" in why


@needs_blas
def test_the_library_is_the_one_numpy_loaded(direct):
    """The library bound is numpy's own: its gemm gives numpy's bits on a product numpy hands
    to gemm in the same layout."""
    found = blas.library()
    assert "numpy" in found.path and set(found.gemm) == {"f", "d"}
    assert found.num_threads() >= 1
    rng = np.random.default_rng(1)
    a = rng.standard_normal((200, 150)).astype(np.float32)
    b = rng.standard_normal((150, 170)).astype(np.float32)
    assert blas.product_plan(a, b).route == "gemm"
    np.testing.assert_array_equal(blas.matmul(a, b), np.matmul(a, b))


def test_matrix_layout():
    s = 4  # float32
    assert blas.matrix_layout(3, 5, 20, 4, s) == (False, 5)  # row-major
    assert blas.matrix_layout(3, 5, 32, 4, s) == (False, 8)  # rows padded to 8
    assert blas.matrix_layout(3, 5, 4, 12, s) == (True, 3)  # transposed
    assert blas.matrix_layout(1, 5, 0, 8, s) == (True, 2)  # a stepped row vector
    assert blas.matrix_layout(5, 1, 8, 0, s) == (False, 2)  # a stepped column vector
    assert blas.matrix_layout(1, 1, 0, 0, s) == (False, 1)
    for strides in ((0, 4), (20, 0), (-20, 4), (40, 8), (4, 4), (8, 4)):
        assert blas.matrix_layout(3, 5, *strides, s) is None, strides


@needs_batched
def test_eager_bmm_and_its_gradients_use_it(direct):
    """minitorch's bmm (and so the compiled graphs' extern steps, which call it) on big
    transposed matrices: numpy's values, forward and backward."""
    rng = np.random.default_rng(3)
    q = minitorch.tensor(rng.standard_normal((2, 3, 110, 64)), requires_grad=True)
    k = minitorch.tensor(rng.standard_normal((2, 3, 150, 64)), requires_grad=True)
    scores = q @ k.transpose(-2, -1)  # float64, (2, 3, 110, 150)
    want = q.detach().numpy() @ k.detach().numpy().swapaxes(-1, -2)
    np.testing.assert_allclose(scores.detach().numpy(), want, rtol=1e-11, atol=1e-10)
    scores.sum().backward()  # the gradient: out.sum()'s expanded 1s, copied for gemm
    ones = np.ones(want.shape)
    np.testing.assert_allclose(q.grad.numpy(), ones @ k.detach().numpy(), rtol=1e-11)
    np.testing.assert_allclose(
        k.grad.numpy(), ones.swapaxes(-1, -2) @ q.detach().numpy(), rtol=1e-11
    )


@needs_blas
def test_a_blas_of_32_bit_ints_leaves_what_it_cannot_index_to_numpy(direct, monkeypatch):
    """A leading dim past 2**31 - 1 is no 32-bit BLAS int: numpy's route (only planned here: the
    matrix's rows are 16 GiB apart, so nothing reads it)."""
    narrow = dataclasses.replace(blas.library(), int64=False)
    monkeypatch.setattr(blas, "_found", (narrow, ""))
    small = np.zeros(4, np.float32)
    far = np.lib.stride_tricks.as_strided(small, (2, 2), (2**34, 4))
    assert blas.product_plan(far, np.ones((2, 2), np.float32)).reason == blas.TOO_BIG
    assert blas.product_plan(small.reshape(2, 2), np.ones((2, 2), np.float32)).route == "gemm"
