"""Attention fusion (tracer/fx/passes/fuse_attention.py): where it fires, where it must not,
and compiled == eager either way ([Note: when attention is fused])."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch import _logging, config, ops
from tracer.dynamo import reset

pytestmark = pytest.mark.extras("fused_attention")


def nanogpt(q, k, v, mask):
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = att.masked_fill(mask == 0, float("-inf"))
    return F.softmax(att, dim=-1) @ v


def heads(rng, b, h, t, d, dtype=np.float32):
    """(B, H, T, D) as nanoGPT makes it: a view of (B, T, H*D), transposed."""
    x = minitorch.tensor(rng.standard_normal((b, t, h * d)).astype(dtype))
    return x.view(b, t, h, d).transpose(1, 2)


def compiled_and_fused(fn, *args, grad=False):
    """fn compiled on args: (its outputs, whether the loop IR ran fused_attention)."""
    reset()
    with _logging.Recorder() as recorder:
        if grad:
            out = minitorch.compile(fn)(*args)
        else:
            with minitorch.no_grad():
                out = minitorch.compile(fn)(*args)
    loop_ir = "\n".join(a.text for a in recorder.artifacts if a.stage == "loop_ir")
    return out, "minitorch.ops.fused_attention(" in loop_ir


def assert_same(got, want):
    got, want = got.detach().numpy(), want.detach().numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 1e-5 if want.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize(
    "b, h, t, d, dtype",
    [
        (2, 2, 8, 4, np.float32),
        (1, 3, 1, 1, np.float32),
        (2, 2, 33, 16, np.float32),
        (1, 2, 70, 64, np.float32),
        (2, 1, 9, 128, np.float64),
        (1, 4, 19, 7, np.float64),
    ],
)
def test_nanogpt_attention_is_one_op_and_equals_eager(b, h, t, d, dtype):
    rng = np.random.default_rng(t * d)
    q, k, v = (heads(rng, b, h, t, d, dtype) for _ in range(3))
    for mask in (np.tril(np.ones((t, t))), np.tril(np.ones((1, 1, t, t))), rng.random((t, t))):
        mask = minitorch.tensor((mask > 0.3).astype(dtype))
        out, fused = compiled_and_fused(nanogpt, q, k, v, mask)
        assert fused
        assert_same(out, nanogpt(q, k, v, mask))


def test_rows_with_every_key_hidden_are_nan_as_in_eager():
    rng = np.random.default_rng(0)
    q, k, v = (heads(rng, 1, 2, 12, 8) for _ in range(3))
    mask = np.tril(np.ones((12, 12), np.float32))
    mask[5] = 0
    mask = minitorch.tensor(mask)
    out, fused = compiled_and_fused(nanogpt, q, k, v, mask)
    want = nanogpt(q, k, v, mask)
    assert fused and np.isnan(want.numpy()[:, :, 5]).all()
    assert_same(out, want)


def test_no_mask_and_no_scale_are_fused_too():
    rng = np.random.default_rng(1)
    q, k, v = (heads(rng, 2, 2, 10, 8) for _ in range(3))

    def plain(q, k, v):
        return F.softmax(q @ k.transpose(-2, -1), dim=-1) @ v

    out, fused = compiled_and_fused(plain, q, k, v)
    assert fused
    assert_same(out, plain(q, k, v))


def scale_after_mask(q, k, v, mask):
    att = (q @ k.transpose(-2, -1)).masked_fill(mask == 0, float("-inf")) * -0.5
    return F.softmax(att, dim=-1) @ v


def fill_with_a_number(q, k, v, mask):
    att = (q @ k.transpose(-2, -1)).masked_fill(mask == 0, -1e9)
    return F.softmax(att, dim=-1) @ v


def softmax_over_queries(q, k, v, mask):
    att = (q @ k.transpose(-2, -1)).masked_fill(mask == 0, float("-inf"))
    return F.softmax(att, dim=-2) @ v


def probabilities_read_twice(q, k, v, mask):
    p = F.softmax((q @ k.transpose(-2, -1)).masked_fill(mask == 0, float("-inf")), dim=-1)
    return p @ v, p.sum()


@pytest.mark.parametrize(
    "fn", [scale_after_mask, fill_with_a_number, softmax_over_queries, probabilities_read_twice]
)
def test_other_patterns_are_left_alone(fn):
    rng = np.random.default_rng(2)
    q, k, v = (heads(rng, 2, 2, 9, 4) for _ in range(3))
    mask = minitorch.tensor(np.tril(np.ones((9, 9), np.float32)))
    out, fused = compiled_and_fused(fn, q, k, v, mask)
    assert not fused
    want = fn(q, k, v, mask)
    out, want = (x if isinstance(x, tuple) else (x,) for x in (out, want))
    for got, expected in zip(out, want, strict=True):
        assert_same(got, expected)


def test_a_mask_that_differs_across_heads_is_left_alone():
    rng = np.random.default_rng(3)
    q, k, v = (heads(rng, 2, 2, 9, 4) for _ in range(3))
    mask = minitorch.tensor((rng.random((2, 1, 9, 9)) > 0.3).astype(np.float32))
    out, fused = compiled_and_fused(nanogpt, q, k, v, mask)
    assert not fused
    assert_same(out, nanogpt(q, k, v, mask))


def test_a_graph_that_needs_gradients_is_left_alone():
    rng = np.random.default_rng(4)
    q, k, v = (
        minitorch.tensor(rng.standard_normal((2, 2, 9, 4)).astype(np.float32), requires_grad=True)
        for _ in range(3)
    )
    mask = minitorch.tensor(np.tril(np.ones((9, 9), np.float32)))
    out, fused = compiled_and_fused(nanogpt, q, k, v, mask, grad=True)
    assert not fused
    want = nanogpt(q, k, v, mask)
    assert_same(out, want)
    got_grads = minitorch.autograd.grad(out.sum(), [q, k, v])
    want_grads = minitorch.autograd.grad(want.sum(), [q, k, v])
    for got, expected in zip(got_grads, want_grads, strict=True):
        assert_same(got, expected)


def test_off_the_extra_is_off_the_pass(monkeypatch):
    monkeypatch.setattr(config, "fused_attention", False)
    rng = np.random.default_rng(5)
    q, k, v = (heads(rng, 1, 2, 9, 4) for _ in range(3))
    mask = minitorch.tensor(np.tril(np.ones((9, 9), np.float32)))
    out, fused = compiled_and_fused(nanogpt, q, k, v, mask)
    assert not fused
    assert_same(out, nanogpt(q, k, v, mask))


def test_the_gpt_example_in_eval_mode_runs_fused_attention():
    sys.path.insert(0, str(Path(__file__).parents[2] / "examples"))
    try:
        import gpt
    finally:
        sys.path.pop(0)
    config_ = gpt.GPTConfig(block_size=16, vocab_size=11, n_layer=1, n_head=2, n_embd=8)
    block = gpt.CausalSelfAttention(config_)
    block.eval()
    x = minitorch.tensor(np.random.default_rng(6).standard_normal((2, 12, 8)).astype(np.float32))
    out, fused = compiled_and_fused(block, x)
    assert fused
    assert_same(out, block(x))


def test_the_fused_op_is_a_row_of_the_op_table():
    assert ops.fused_attention.lowering == "extern" and ops.fused_attention.backward is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scaled_dot_product_attention_is_fused_with_its_safe_softmax(dtype):
    rng = np.random.default_rng(7)
    q, k, v = (heads(rng, 2, 2, 21, 8, dtype) for _ in range(3))
    allowed = rng.random((21, 21)) > 0.4
    allowed[4] = False  # a query that sees no key: 0, not NaN
    allowed = minitorch.tensor(allowed)
    cases = [
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=allowed),
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
    ]
    for fn in cases:
        out, fused = compiled_and_fused(fn, q, k, v)
        assert fused
        assert_same(out, fn(q, k, v))
    out, _ = compiled_and_fused(cases[1], q, k, v)
    assert (out.numpy()[:, :, 4] == 0).all()


def test_a_float_mask_for_scaled_dot_product_attention_is_left_alone():
    rng = np.random.default_rng(8)
    q, k, v = (heads(rng, 1, 2, 9, 4) for _ in range(3))
    bias = minitorch.tensor(rng.standard_normal((9, 9)).astype(np.float32))

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)

    out, fused = compiled_and_fused(fn, q, k, v)
    assert not fused
    assert_same(out, fn(q, k, v))
