"""The caching allocator (codegen/allocator.py): blocks come back when freed, large ones start
on a huge-page boundary, and arrays from it are ordinary numpy arrays."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from codegen import allocator
from minitorch import config

pytestmark = pytest.mark.extras("pooled_allocator")


@pytest.fixture(autouse=True)
def empty_pool():
    allocator.empty_cache()
    yield
    allocator.empty_cache()


def test_a_freed_block_is_handed_out_again():
    first = allocator.empty((1 << 20,), np.float32)
    address = first.ctypes.data
    del first
    gc.collect()
    assert allocator.cached_bytes() == 4 << 20
    second = allocator.empty((1024, 1024), np.float32)  # the same bytes, another shape
    assert second.ctypes.data == address and allocator.cached_bytes() == 0
    assert second.shape == (1024, 1024) and second.flags.c_contiguous


def test_small_arrays_are_not_pooled():
    assert not allocator.pooled(allocator.MIN_POOLED_BYTES - 1)
    small = allocator.empty((16,), np.float64)
    del small
    gc.collect()
    assert allocator.cached_bytes() == 0


@pytest.mark.parametrize("huge_pages", [True, False])
def test_a_large_block_holds_values_and_starts_on_a_huge_page_if_asked(huge_pages, monkeypatch):
    monkeypatch.setattr(config, "huge_pages", huge_pages)
    big = allocator.empty((3, 1 << 20), np.float32)  # 12 MiB
    assert big.ctypes.data % allocator.HUGE_PAGE == 0 or not huge_pages
    big[...] = np.arange(3, dtype=np.float32)[:, None]
    np.testing.assert_array_equal(big.sum(1), [0, 1 << 20, 2 << 20])


def test_a_view_keeps_the_block_out_of_the_pool():
    base = allocator.empty((1 << 20,), np.float32)
    view = base[::2]
    del base
    gc.collect()
    assert allocator.cached_bytes() == 0  # the view still reads it
    other = allocator.empty((1 << 20,), np.float32)
    assert not np.shares_memory(other, view)
