"""The generated register-blocked matmul (codegen/llvm/matmul.py) against numpy, in float64.

Shapes are drawn around the tile's edges (a tile is 6 rows by two vectors of columns), so
every case of [Note: register blocking] runs: partial row tiles, a masked last panel, k = 0,
empty outputs, one thread and several.
"""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llvmlite import ir

from codegen.llvm.matmul import MatmulKernel, generate_matmul, matmul
from minitorch import config
from minitorch.errors import DTypeError, ShapeError

DTYPES = [np.float32, np.float64]


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) @ b.astype(np.float64)


def assert_matches(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """Within the rounding of k products summed in some order (FMA, not numpy's order)."""
    eps = np.finfo(a.dtype).eps
    bound = (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)) * eps * (a.shape[1] + 1)
    assert c.shape == (a.shape[0], b.shape[1]) and c.dtype == a.dtype
    assert np.all(np.abs(c - reference(a, b)) <= bound)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 40),
    st.integers(0, 40),
    st.integers(0, 70),
    st.sampled_from(DTYPES),
    st.integers(0, 2**32 - 1),
)
def test_matches_numpy_for_any_sizes(m, k, n, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    assert_matches(matmul(a, b), a, b)


@pytest.mark.parametrize("width", [4, 8, 16])
@pytest.mark.parametrize("rows, vectors", [(1, 1), (6, 2), (4, 3)])
def test_every_tile_shape_and_vector_width(width, rows, vectors):
    rng = np.random.default_rng(0)
    kernel = MatmulKernel(np.float32, rows=rows, vectors=vectors, width=width)
    for m, k, n in [(13, 9, 3 * width * vectors + 5), (rows, 1, width), (1, 17, 1)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        assert_matches(kernel(a, b), a, b)


def test_the_mlp_layer_sizes():
    rng = np.random.default_rng(1)
    for m, k, n in [(256, 784, 256), (256, 256, 10), (10, 256, 256)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        assert_matches(matmul(a, b), a, b)


def test_threads_split_the_column_panels(monkeypatch):
    monkeypatch.setattr(config, "num_threads", 3)
    monkeypatch.setattr(config, "parallel_threshold", 1)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((50, 30)).astype(np.float32)
    b = rng.standard_normal((30, 300)).astype(np.float32)  # 10 panels of 32 columns or fewer
    assert_matches(matmul(a, b), a, b)


def test_strided_operands_and_out():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 20)).T  # (20, 40), column-major
    b = rng.standard_normal((40, 90))[:, ::3]  # (40, 30), every third column
    out = np.full((20, 30), np.nan)
    assert matmul(a, b, out=out) is out
    assert_matches(out, a, b)


def test_bad_operands_are_refused_by_name():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(ShapeError, match="cannot be multiplied"):
        matmul(a, np.ones((2, 3), np.float32))
    with pytest.raises(DTypeError, match="expected float32"):
        matmul(a, np.ones((3, 2), np.float64))
    with pytest.raises(DTypeError, match="float32 or float64"):
        matmul(np.ones((2, 3), np.int64), np.ones((3, 2), np.int64))
    with pytest.raises(ShapeError, match="out must be"):
        matmul(a, np.ones((3, 2), np.float32), out=np.ones((2, 3), np.float32))


def test_the_tile_lives_in_phis_and_fmas():
    """The accumulators are values of the k loop (registers), not memory: one vector phi per
    accumulator, one vector FMA per accumulator per k, and no alloca."""
    source = str(generate_matmul(ir.FloatType(), 8, rows=6, vectors=2))
    k_loop = source[source.index("k.body:") : source.index("k.exit:")]
    assert len(re.findall(r"phi\s+<8 x float>", k_loop)) == 12
    assert k_loop.count('call <8 x float> @"llvm.fma.v8f32"') == 12
    assert "alloca" not in source
