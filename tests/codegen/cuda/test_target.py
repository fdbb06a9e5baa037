"""The NVPTX target: every intrinsic we allow compiles (in a subprocess: one NVPTX cannot select
aborts the process), and what we do not allow is a CompileError before LLVM sees it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codegen.cuda.target import SAFE_INTRINSICS, check_intrinsics, compile_ptx, target_machine
from minitorch.errors import CompileError

_ROOT = Path(__file__).resolve().parents[3]

# intrinsic -> the LLVM types we call it on (None: it takes no type suffix); calls below
_TYPES = {
    "llvm.fma": ("float", "double"), "llvm.rint": ("float", "double"),
    "llvm.floor": ("float", "double"), "llvm.fabs": ("float", "double"),
    "llvm.copysign": ("float", "double"), "llvm.sqrt": ("float", "double"),
    "llvm.minnum": ("float", "double"), "llvm.maxnum": ("float", "double"),
    "llvm.maximum": ("float", "double"), "llvm.minimum": ("float", "double"),
    "llvm.smax": ("i32", "i64"), "llvm.smin": ("i32", "i64"), "llvm.abs": ("i32", "i64"),
    "llvm.fshl": ("i64",), "llvm.fshr": ("i64",),
}  # fmt: skip
_ARITY = {
    "llvm.fma": 3,
    "llvm.fshl": 3,
    "llvm.fshr": 3,
    "llvm.copysign": 2,
    "llvm.minnum": 2,
    "llvm.maxnum": 2,
    "llvm.maximum": 2,
    "llvm.minimum": 2,
    "llvm.smax": 2,
    "llvm.smin": 2,
}
_SUFFIX = {"float": "f32", "double": "f64", "i32": "i32", "i64": "i64"}


def _module_using_every_intrinsic() -> str:
    """A kernel that calls each intrinsic of SAFE_INTRINSICS on each of its types, on values
    loaded from memory (so nothing folds away), and stores every result."""
    lines, declarations = [], []
    for name, types in _TYPES.items():
        for type_ in types:
            k = len(lines)
            suffix = _SUFFIX[type_]
            arguments = [f"{type_} %v{k}"] * _ARITY.get(name, 1)
            if name == "llvm.abs":
                arguments = [f"{type_} %v{k}", "i1 false"]
            lines.append(
                f"  %v{k} = load {type_}, ptr %g\n"
                f"  %r{k} = call {type_} @{name}.{suffix}({', '.join(arguments)})\n"
                f"  store {type_} %r{k}, ptr %g"
            )
            parameters = ", ".join(argument.split(" ")[0] for argument in arguments)
            declarations.append(f"declare {type_} @{name}.{suffix}({parameters})")
    return (
        textwrap.dedent("""
        define ptx_kernel void @"k"(ptr addrspace(1) %p, i32 %n) {
          %g = addrspacecast ptr addrspace(1) %p to ptr
          %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
          %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
          %c = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
          %s = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %t, i32 16, i32 31)
          %u = add i32 %s, %b
          %w = add i32 %u, %c
          store i32 %w, ptr %g
          call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
          %big = icmp sge i32 %n, 2
          call void @llvm.assume(i1 %big)
        """)
        + "\n".join(lines)
        + textwrap.dedent("""
          ret void
        }
        declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
        declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
        declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
        declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)
        declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
        declare void @llvm.assume(i1)
        """)
        + "\n".join(declarations)
        + "\n"
    )


def test_every_safe_intrinsic_compiles_for_nvptx():
    text = _module_using_every_intrinsic()
    used = {name for name in SAFE_INTRINSICS if f"@{name}" in text}
    assert used == SAFE_INTRINSICS  # the module tries each one
    script = f"from codegen.cuda.target import compile_ptx\nprint(compile_ptx([{text!r}]))"
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]  # an abort is a negative code
    assert ".entry k(" in result.stdout


def test_an_unvetted_intrinsic_is_refused_before_llvm_sees_it():
    """llvm.sin.f32 aborts NVPTX's instruction selection; we refuse it by name instead."""
    text = textwrap.dedent("""
        define ptx_kernel void @"k"(ptr addrspace(1) %p) {
          %g = addrspacecast ptr addrspace(1) %p to ptr
          %x = load float, ptr %g
          %y = call float @llvm.sin.f32(float %x)
          store float %y, ptr %g
          ret void
        }
        declare float @llvm.sin.f32(float)
        """)
    with pytest.raises(CompileError, match=r"cannot compile llvm\.sin\.f32"):
        compile_ptx([text])
    check_intrinsics(text.replace("llvm.sin", "minitorch.sin"))  # a function of ours is fine


def test_architectures():
    assert ".target sm_90" in compile_ptx(
        ['define ptx_kernel void @"k"() {\n  ret void\n}\n'], arch="sm_90"
    )
    with pytest.raises(CompileError, match="not a CUDA architecture"):
        target_machine("ampere")
