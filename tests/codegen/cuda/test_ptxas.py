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
    """Modules are assembled in batches, merged: two kernels named k (and each one's table)
    do not clash; a broken module is found alone, and reported with ptxas's message."""
    table = """
        @"table" = internal constant [2 x i64] [i64 1, i64 2]
        define ptx_kernel void @"k"(ptr addrspace(1) %"p") {
        entry:
          %"g" = addrspacecast ptr addrspace(1) %"p" to ptr
          %"i" = load i64, ptr %"g"
          %"at" = getelementptr [2 x i64], ptr @"table", i64 0, i64 %"i"
          %"v" = load i64, ptr %"at"
          store i64 %"v", ptr %"g"
          ret void
        }
        """
    good = [
        compile_ptx([_EMPTY_KERNEL]),
        compile_ptx([table]),
        compile_ptx([table.replace("i64 2]", "i64 3]")]),
    ]
    assert rejections([(ptx, "sm_80") for ptx in good]) == []
    broken = good[1].replace("ret;", "ret.bogus %r99;")
    found = rejections(
        [(good[0], "sm_80"), (broken, "sm_80"), (good[2], "sm_80"), ("not ptx at all", "sm_80")]
    )
    assert len(found) == 2 and all("ptxas -arch=sm_80 rejected" in m for m in found)
    assert "bogus" in found[0] or "bogus" in found[1]


def test_assemble_without_ptxas_says_so(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(ptxas, "find_ptxas", lambda: None)
    with pytest.raises(CompileError, match="not installed"):
        ptxas.assemble("whatever")
