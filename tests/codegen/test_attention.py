"""The generated attention kernel (codegen/llvm/attention.py) against the op-by-op math.

Shapes are drawn around the blocks' edges (8 query rows, two vectors of keys), so every case
of [Note: online softmax] and [Note: skipped blocks] runs: partial query and key blocks, head
dims from 1 to 128 (a masked last vector), masks causal, random, with rows all hidden, none,
and q, k, v as nanoGPT makes them (transposed views of (B, T, H, D)).
"""

import math

import numpy as np
import pytest

import minitorch
from codegen.llvm.attention_kernel import block_states, fused_attention, kernel_for
from minitorch import config, ops


def reference(q, k, v, seen, scale):
    """softmax(where(seen, q kᵀ scale, -inf)) v, op by op, in float64."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    att = (q @ np.swapaxes(k, -1, -2)) * scale
    if seen is not None:
        att = np.where(seen, att, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(att - att.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)) @ v


def heads(rng, b, h, t, d, dtype):
    """(B, H, T, D) as a transposed view of (B, T, H, D), as nanoGPT's q, k and v are."""
    return rng.standard_normal((b, t, h, d)).astype(dtype).transpose(0, 2, 1, 3)


def masks(rng, t, s):
    causal = np.tril(np.ones((t, s), bool))
    some_rows_hidden = rng.random((t, s)) > 0.5
    some_rows_hidden[::3] = False
    return [None, causal, rng.random((t, s)) > 0.3, some_rows_hidden]


def assert_close(out, want, dtype):
    tol = 2e-5 if dtype == np.float32 else 1e-12
    assert np.array_equal(np.isnan(out), np.isnan(want))
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol, equal_nan=True)


SHAPES = [(1, 1, 1, 1), (2, 3, 17, 5), (1, 2, 40, 64), (2, 1, 33, 16), (1, 1, 9, 128)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_the_kernel_computes_attention(dtype, shape):
    rng = np.random.default_rng(sum(shape))
    b, h, t, d = shape
    q, k, v = (heads(rng, b, h, t, d, dtype) for _ in range(3))
    scale = 1 / math.sqrt(d)
    for seen in masks(rng, t, t):
        out = kernel_for(np.dtype(dtype), d)(q, k, v, seen, scale)
        assert out.dtype == dtype and out.shape == (b, h, t, d)
        assert_close(out, reference(q, k, v, seen, scale), dtype)


@pytest.mark.parametrize("d", [1, 3, 8, 15, 16, 17, 31, 33, 48, 63, 64, 65, 96, 127, 128])
def test_every_head_dim(d):
    rng = np.random.default_rng(d)
    q, k, v = (rng.standard_normal((1, 2, 21, d)).astype(np.float32) for _ in range(3))
    seen = np.tril(np.ones((21, 21), bool))
    out = kernel_for(np.dtype(np.float32), d)(q, k, v, seen, 0.3)
    assert_close(out, reference(q, k, v, seen, 0.3), np.float32)


def test_more_keys_than_queries_and_large_scores():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 2, 11, 8)) * 30  # the max moves: alpha rescales o and l
    k, v = rng.standard_normal((2, 2, 70, 8)), rng.standard_normal((2, 2, 70, 8))
    seen = rng.random((11, 70)) > 0.2
    out = kernel_for(np.dtype(np.float64), 8)(q, k, v, seen, 1.0)
    assert_close(out, reference(q, k, v, seen, 1.0), np.float64)


def test_block_states_mark_skipped_mixed_and_full_blocks():
    seen = np.tril(np.ones((16, 32), np.uint8))  # (t, padded), blocks of 8 rows, 16 keys
    seen[:, 16:] = 0
    seen[8:, :16] = 1
    assert block_states(seen, 8, 16).tolist() == [[1, 0], [2, 0]]
    assert block_states(np.zeros((3, 16), np.uint8), 8, 16).tolist() == [[0]]


def test_rows_with_every_key_hidden_are_nan_as_eager_gives():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((1, 1, 12, 4)) for _ in range(3))
    seen = np.ones((12, 12), bool)
    seen[3] = False
    out = kernel_for(np.dtype(np.float64), 4)(q, k, v, seen, 0.5)
    assert np.isnan(out[0, 0, 3]).all() and not np.isnan(np.delete(out, 3, axis=2)).any()


def test_a_v_that_is_not_finite_where_blocks_are_skipped_runs_the_op_by_op_math():
    """0 * inf is NaN in the op-by-op product; a skipped block computes nothing there."""
    t = 40
    v = np.ones((1, 1, t, 4), np.float32)
    v[0, 0, -1, 0] = np.inf  # a key only the last rows may see
    q, k = np.zeros((1, 1, t, 4), np.float32), np.zeros((1, 1, t, 4), np.float32)
    hidden = ~np.tril(np.ones((t, t), bool))
    assert kernel_for(np.dtype(np.float32), 4)(q, k, v, ~hidden, 1.0) is None
    args = [minitorch.tensor(x) for x in (q, k, v, hidden)]
    out = fused_attention(*args, 1.0).numpy()
    want = ops.fused_attention(*args, 1.0).numpy()
    assert np.array_equal(np.isnan(out), np.isnan(want)) and np.isnan(out[0, 0, 0, 0])


def test_what_the_kernel_does_not_take_runs_the_eager_kernel():
    rng = np.random.default_rng(3)
    q, k, v = (minitorch.tensor(rng.standard_normal((2, 2, 5, 3))) for _ in range(3))
    per_head = minitorch.tensor(rng.random((2, 1, 5, 5)) > 0.5)  # differs across the batch
    out = fused_attention(q, k, v, per_head, 0.5).numpy()
    np.testing.assert_array_equal(out, ops.fused_attention(q, k, v, per_head, 0.5).numpy())


@pytest.mark.extras("thread_pool")
def test_threads_split_heads_and_query_blocks(monkeypatch):
    monkeypatch.setattr(config, "parallel_threshold", 1)
    rng = np.random.default_rng(4)
    q, k, v = (heads(rng, 3, 2, 50, 16, np.float32) for _ in range(3))
    seen = np.tril(np.ones((50, 50), bool))
    out = kernel_for(np.dtype(np.float32), 16)(q, k, v, seen, 0.25)
    assert_close(out, reference(q, k, v, seen, 0.25), np.float32)


def test_the_kernel_is_vectorized():
    """Both products are vector FMAs, and the exp loop is widened (vector rint, mathlib's)."""
    kernel = kernel_for(np.dtype(np.float32), 64)
    lanes = kernel.width
    source = kernel._jit.optimized_source
    assert f"@llvm.fma.v{lanes}f32" in source
    assert "@llvm.rint.v" in source  # exp's rounding, on vectors: the exp loop vectorized
    assert "call float @expf" not in source and "@llvm.exp" not in source


def test_the_safe_kernel_gives_zeros_for_rows_with_every_key_hidden():
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((1, 2, 19, 8)).astype(np.float32) for _ in range(3))
    seen = np.tril(np.ones((19, 19), bool))
    seen[[0, 11]] = False
    out = kernel_for(np.dtype(np.float32), 8, safe=True)(q, k, v, seen, 0.5)
    want = np.nan_to_num(reference(q, k, v, seen, 0.5), nan=0.0)
    assert (out[:, :, [0, 11]] == 0).all()
    assert_close(out, want, np.float32)
