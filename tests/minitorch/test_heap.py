"""The C heap keeps freed memory mapped ([Note: the C heap's page faults] in minitorch/heap.py).

Counted in page faults, which the OS reports exactly, not in time: a block freed and asked for
again must come back without the OS mapping its pages anew.
"""

import ctypes
import resource

import numpy as np
import pytest

import minitorch  # noqa: F401 - importing it sets the thresholds
from minitorch import config
from minitorch.heap import keep_freed_memory_mapped

glibc = pytest.mark.skipif(
    getattr(ctypes.CDLL(None), "mallopt", None) is None, reason="mallopt is glibc's"
)


def page_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@glibc
def test_thresholds_are_set():
    assert config.keep_freed_memory_mapped
    assert keep_freed_memory_mapped()


@glibc
def test_a_freed_block_comes_back_without_page_faults():
    size = 1 << 20  # 1 MiB: glibc would first map it anew on each allocation
    np.ones(size, np.uint8)  # the heap grows to hold it once
    before = page_faults()
    for _ in range(20):
        np.ones(size, np.uint8)  # allocated, touched, freed
    # 256 pages per block: a fresh mapping each time would be 5120 faults
    assert page_faults() - before < 100
