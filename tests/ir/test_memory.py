"""Memory planning's reuse of dead buffers (ir/memory.py plan_reuse), on kernels' reads and
writes written by hand; tests/minitorch/compile/test_wrapper.py runs it against eager."""

from __future__ import annotations

from ir.memory import plan_reuse


def same_size(name: str) -> int:
    return 64


def test_a_chain_reuses_the_buffer_two_kernels_back():
    # kernel k reads what kernel k-1 stored: buf0 is dead once kernel 1 has run
    chain = [
        ((), ("buf0",)),
        (("buf0",), ("buf1",)),
        (("buf1",), ("buf2",)),
        (("buf2",), ("buf3",)),
        (("buf3",), ("buf4",)),
    ]
    assert plan_reuse(chain, ["buf4"], same_size) == {"buf2": "buf0", "buf3": "buf1"}


def test_a_kernel_never_writes_the_memory_it_reads():
    # buf0 dies in kernel 1, which writes buf1: buf1 must not take it (noalias)
    kernels = [((), ("buf0",)), (("buf0",), ("buf1",)), (("buf1",), ("buf2",))]
    assert plan_reuse(kernels, ["buf2"], same_size) == {}


def test_outputs_and_inputs_are_never_reused_nor_reusing():
    kernels = [
        (("arg0_1",), ("buf0",)),
        (("buf0",), ("buf1",)),
        (("buf1", "arg0_1"), ("buf2",)),
        (("buf2",), ("buf3",)),
    ]
    # buf0 is an output: never freed; buf3 is one: never takes buf1's memory
    assert plan_reuse(kernels, ["buf0", "buf3"], same_size) == {}
    # arg0_1 and buf1 die in kernel 2, but the input is the caller's: buf3 takes buf1
    assert plan_reuse(kernels, ["buf0", "buf2"], same_size) == {"buf3": "buf1"}


def test_only_buffers_of_the_same_size_share():
    chain = [
        ((), ("buf0",)),
        (("buf0",), ("buf1",)),
        (("buf1",), ("buf2",)),
        (("buf2",), ("buf3",)),
    ]
    sizes = {"buf0": 64, "buf1": 64, "buf2": 128, "buf3": 64}
    assert plan_reuse(chain, ["buf3"], sizes.__getitem__) == {}
