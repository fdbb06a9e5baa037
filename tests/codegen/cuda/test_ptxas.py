"""ptxas on our PTX, and the suite's check of every PTX (ptxas_plugin.py) failing when it must."""

from __future__ import annotations

import pytest

from codegen.cuda import ptxas
from codegen.cuda.target import compile_ptx
from minitorch.errors import CompileError
from tests.codegen.cuda.ptxas_plugin import rejections

needs_ptxas = pytest.mark.skipif(ptxas.find_ptxas() is None, reason="ptxas is not installed")

_EMPTY_KERNEL = """
define ptx_kernel void @"k"(ptr addrspace(1) %"p") {
entry:
  ret void
}
"""


@needs_ptxas
def test_ptxas_accepts_our_ptx_and_rejects_broken_ptx():
    ptx = compile_ptx([_EMPTY_KERNEL])
    ptxas.assemble(ptx)
    broken = ptx.replace("ret;", "ret.bogus %r99;")
    assert broken != ptx
    with pytest.raises(CompileError, match="rejected"):
        ptxas.assemble(broken)


@needs_ptxas
def test_the_suite_check_reports_what_ptxas_rejects():
    ptx = compile_ptx([_EMPTY_KERNEL])
    assert rejections([(ptx, "sm_80")]) == []
    (message,) = rejections([(ptx, "sm_80"), ("not ptx at all", "sm_80")])
    assert "ptxas -arch=sm_80 rejected" in message


def test_assemble_without_ptxas_says_so(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(ptxas, "find_ptxas", lambda: None)
    with pytest.raises(CompileError, match="not installed"):
        ptxas.assemble("whatever")
