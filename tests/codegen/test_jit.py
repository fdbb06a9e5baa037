"""The JIT: host target machine, the O3 pipeline, the compile cache, errors."""

import ctypes

import llvmlite.binding as llvm
import pytest

from codegen.llvm.jit import JitModule, compile_ir, host_description, host_target_machine
from minitorch.errors import CompileError

SQUARE_SUM = """
define double @square_sum(ptr %x, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %acc = phi double [0.0, %entry], [%sum, %loop]
  %address = getelementptr double, ptr %x, i64 %i
  %value = load double, ptr %address
  %square = fmul double %value, %value
  %sum = fadd reassoc double %acc, %square
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret double %sum
}
"""


def test_compiled_function_runs():
    square_sum = compile_ir(SQUARE_SUM).function(
        "square_sum", ctypes.c_double, ctypes.c_void_p, ctypes.c_int64
    )
    values = (ctypes.c_double * 4)(1.0, 2.0, 3.0, 4.0)
    assert square_sum(values, 4) == 30.0


def test_target_machine_is_the_host_cpu():
    target_machine = host_target_machine()
    assert target_machine.triple == llvm.get_process_triple()
    triple, cpu, features, _ = host_description()
    assert cpu == llvm.get_host_cpu_name() and features == llvm.get_host_cpu_features().flatten()


def test_optimizer_vectorizes_and_keeps_both_texts():
    jit = compile_ir(SQUARE_SUM)
    assert jit.source == SQUARE_SUM
    assert "x double>" in jit.optimized_source  # a vector loop, e.g. <4 x double>
    assert "square_sum" in jit.assembly()


def test_same_ir_compiles_once():
    assert compile_ir(SQUARE_SUM) is compile_ir(SQUARE_SUM)
    assert compile_ir(SQUARE_SUM) is not compile_ir(SQUARE_SUM + "\n; another text\n")


def test_invalid_ir_is_a_compile_error_and_is_not_cached():
    bad = "define i32 @f() {\n  ret i64 0\n}\n"
    for _ in range(2):  # a failure leaves no broken cache entry behind
        with pytest.raises(CompileError, match="LLVM rejected"):
            compile_ir(bad)


def test_unknown_function_name_is_a_compile_error():
    with pytest.raises(CompileError, match="no function named 'nope'"):
        JitModule(SQUARE_SUM).address("nope")
