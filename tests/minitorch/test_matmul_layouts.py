"""Products of operands in every layout: transposed, expanded (stride 0), stepped, flipped and
batch-broadcast matrices give numpy's values, dtype and shape, eagerly and compiled
([Note: operands BLAS can read] in minitorch/ops/linalg.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.blas import gemm_ready as _gemm_ready

NUMPY_2 = int(np.__version__.split(".")[0]) >= 2


def _layout(rng, shape: tuple[int, ...], layout: str, dtype) -> np.ndarray:
    """A numpy array of `shape` whose last two dims are laid out as `layout` says."""

    def fresh(s):
        if np.dtype(dtype).kind == "i":
            return rng.integers(-5, 6, s).astype(dtype)
        return rng.standard_normal(s).astype(dtype)

    *batch, rows, cols = shape
    if layout == "row_major":
        return fresh(shape)
    if layout == "transposed":  # column-major: a transposed view
        return fresh((*batch, cols, rows)).swapaxes(-1, -2)
    if layout == "expanded":  # stride 0 in both matrix dims, as out.sum()'s gradient
        return np.broadcast_to(fresh(()), shape)
    if layout == "expanded_rows":  # one row repeated: stride 0, then 1
        return np.broadcast_to(fresh((*batch, 1, cols)), shape)
    if layout == "stepped":  # every other column
        return fresh((*batch, rows, 2 * cols))[..., ::2]
    if layout == "flipped":  # negative strides
        return fresh(shape)[..., ::-1, ::-1]
    if layout == "batch_broadcast":  # one matrix for the whole batch (stride 0 in batch only)
        return np.broadcast_to(fresh((1, rows, cols)), shape) if batch else fresh(shape)
    raise AssertionError(layout)


LAYOUTS = [
    "row_major",
    "transposed",
    "expanded",
    "expanded_rows",
    "stepped",
    "flipped",
    "batch_broadcast",
]
DTYPES = [np.float32, np.float64, np.int64]


def _check(out: minitorch.Tensor, expected: np.ndarray) -> None:
    got = out.numpy()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if expected.dtype.kind == "i" or NUMPY_2:
        # numpy 2 copies a layout gemm cannot read, as _gemm_ready does: the same bits
        np.testing.assert_array_equal(got, expected)
    else:  # numpy 1.26 sums those in its own loop, in another order than gemm's
        rtol = 1e-5 if expected.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("left", LAYOUTS)
@pytest.mark.parametrize("right", LAYOUTS)
def test_bmm_layouts_match_numpy(left, right, dtype):
    rng = np.random.default_rng(0)
    a = _layout(rng, (3, 5, 7), left, dtype)
    b = _layout(rng, (3, 7, 4), right, dtype)
    out = minitorch.bmm(minitorch.from_numpy(a), minitorch.from_numpy(b))
    _check(out, np.matmul(a, b))
    assert out.stride() == (20, 4, 1)  # a fresh row-major result, whatever the operands


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("left", LAYOUTS[:-1])
@pytest.mark.parametrize("right", LAYOUTS[:-1])
def test_mm_layouts_match_numpy(left, right, dtype):
    rng = np.random.default_rng(1)
    a = _layout(rng, (6, 9), left, dtype)
    b = _layout(rng, (9, 5), right, dtype)
    out = minitorch.mm(minitorch.from_numpy(a), minitorch.from_numpy(b))
    _check(out, np.matmul(a, b))
    assert out.stride() == (5, 1)


def test_operands_are_left_alone():
    """The copy happens inside the kernel: the operands keep their memory and layout."""
    a = np.broadcast_to(np.float32(2), (2, 3, 4))
    b = np.arange(2 * 5 * 4, dtype=np.float32).reshape(2, 5, 4).swapaxes(1, 2)
    ta, tb = minitorch.from_numpy(a), minitorch.from_numpy(b)
    out = minitorch.bmm(ta, tb)
    assert ta.stride() == (0, 0, 0) and tb.stride() == (20, 1, 4)
    assert not np.shares_memory(out.numpy(), a) and not np.shares_memory(out.numpy(), b)
    np.testing.assert_array_equal(out.numpy(), np.matmul(a, b))


def test_gemm_ready_copies_only_what_gemm_cannot_read():
    x = np.ones((4, 3, 5), np.float32)
    # read in place: row-major, transposed, a stepped or broadcast batch dim (gemm runs per
    # matrix), and integers (numpy's own loop, no gemm)
    transposed, stepped_batch = x.swapaxes(1, 2), x[::2]
    batch_broadcast = np.broadcast_to(x[:1], x.shape)
    ints = np.ones((3, 10), np.int64)[:, ::2]
    for kept in (x, transposed, stepped_batch, batch_broadcast, ints):
        assert _gemm_ready(kept) is kept
    # copied, row-major: a stepped matrix dim, stride 0 in a matrix dim, negative strides
    for copied in (x[:, :, ::2], np.broadcast_to(np.float32(1), (3, 5)), x[:, ::-1]):
        ready = _gemm_ready(copied)
        assert ready.flags.c_contiguous and ready.dtype == copied.dtype
        np.testing.assert_array_equal(ready, copied)


def test_attention_with_expanded_gradient_eager_and_compiled():
    """q @ k^T (a transposed view), softmax, @ v, and out.sum()'s expanded gradient into bmm:
    compiled equals eager, forward and gradients."""

    def attention(q, k, v):
        return minitorch.softmax(q @ k.transpose(-2, -1) / 4, dim=-1) @ v

    rng = np.random.default_rng(2)
    values = [rng.standard_normal((2, 3, 8, 16)).astype(np.float32) for _ in range(3)]
    eager = [minitorch.tensor(x, requires_grad=True) for x in values]
    compiled = [minitorch.tensor(x, requires_grad=True) for x in values]
    out_e = attention(*eager)
    out_c = minitorch.compile(attention)(*compiled)
    out_e.sum().backward()
    out_c.sum().backward()
    np.testing.assert_allclose(out_c.detach().numpy(), out_e.detach().numpy(), rtol=1e-5, atol=1e-6)
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c.grad.numpy(), e.grad.numpy(), rtol=1e-4, atol=1e-5)
