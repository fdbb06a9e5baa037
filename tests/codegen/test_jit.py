"""The JIT: host target machine, the O3 pipeline, the compile cache (bounded, freed, safe from
threads), errors."""

import ctypes
import gc
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import llvmlite.binding as llvm
import numpy as np
import pytest

import minitorch
import minitorch._dynamo
from codegen.llvm import compiler
from codegen.llvm import jit as jit_module
from codegen.llvm.jit import (
    JitModule,
    compile_ir,
    host_description,
    part_symbol,
)
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
    target_machine = compiler.host_target_machine(host_description())
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


# -- one module per graph ([Note: one module per graph]) ---------------------------------------

# Two texts that each export @f and @count and define an internal @helper: the names clash
# once linked.
SCALED = """
define internal double @helper(double %x) {{
entry:
  %y = fmul double %x, {scale}
  ret double %y
}}

@count = global i64 0

define double @f(double %x) {{
entry:
  %n = load i64, ptr @count
  %n.next = add i64 %n, 1
  store i64 %n.next, ptr @count
  %y = call double @helper(double %x)
  ret double %y
}}
"""


def test_texts_linked_into_one_module_keep_each_function_apart():
    texts = (SCALED.format(scale="2.0"), SCALED.format(scale="3.0"), SQUARE_SUM)
    jit = compile_ir(*texts)
    scaled = [
        jit.function(part_symbol("f", part, 3), ctypes.c_double, ctypes.c_double) for part in (0, 1)
    ]
    assert [f(5.0) for f in scaled] == [10.0, 15.0]
    square_sum = jit.function(
        part_symbol("square_sum", 2, 3), ctypes.c_double, ctypes.c_void_p, ctypes.c_int64
    )
    assert square_sum((ctypes.c_double * 2)(1.0, 2.0), 2) == 5.0
    assert compile_ir(*texts) is jit  # cached as a whole
    assert "@part1.f(" in jit.source and compile_ir(jit.source).object_code  # the linked text
    assert part_symbol("f", 0, 1) == "f"  # one text keeps its names


def test_a_bad_text_among_several_is_a_compile_error():
    with pytest.raises(CompileError, match="LLVM rejected"):
        compile_ir(SQUARE_SUM, "define i32 @f() {\n  ret i64 0\n}\n")


# -- the cache's memory ([Note: the JIT's memory]) ---------------------------------------------


def square_sum_variant(k: int) -> str:
    """A distinct IR text computing k * sum(x^2), so that each compiles to its own module."""
    return SQUARE_SUM.replace("square_sum", f"square_sum{k}").replace(
        "ret double %sum", f"%scaled = fmul double %sum, {k}.0\n  ret double %scaled"
    )


def run_square_sum(jit: JitModule, k: int) -> float:
    fn = jit.function(f"square_sum{k}", ctypes.c_double, ctypes.c_void_p, ctypes.c_int64)
    values = (ctypes.c_double * 4)(1.0, 2.0, 3.0, 4.0)
    return fn(values, 4)


def test_cache_is_bounded_and_evicted_modules_in_use_stay_valid(monkeypatch):
    monkeypatch.setattr(jit_module, "CACHE_LIMIT", 2)
    jit_module.clear_cache()
    first = compile_ir(square_sum_variant(1))
    fn = first.function("square_sum1", ctypes.c_double, ctypes.c_void_p, ctypes.c_int64)
    unused = weakref.ref(compile_ir(square_sum_variant(2)))
    for k in (3, 4, 5):  # evicts 1 and 2, the least recently used
        compile_ir(square_sum_variant(k))
    del first
    gc.collect()
    assert jit_module.cached_modules() == 2
    assert unused() is None  # evicted and unused: freed
    values = (ctypes.c_double * 4)(1.0, 2.0, 3.0, 4.0)
    assert fn(values, 4) == 30.0  # evicted, but the callable keeps its machine code alive


def test_least_recently_used_is_evicted_first(monkeypatch):
    monkeypatch.setattr(jit_module, "CACHE_LIMIT", 2)
    jit_module.clear_cache()
    one = compile_ir(square_sum_variant(1))
    compile_ir(square_sum_variant(2))
    assert compile_ir(square_sum_variant(1)) is one  # used again: now the most recent
    compile_ir(square_sum_variant(3))  # evicts 2
    assert compile_ir(square_sum_variant(1)) is one


def test_modules_loaded_and_dropped_give_their_memory_back():
    """The machine code lives while a callable of it does, and not after: many modules loaded
    and dropped leave the process's mappings as they were."""
    text = square_sum_variant(7)
    object_code = compile_ir(text).object_code

    def load_run_drop() -> None:
        fn = JitModule(text, object_code).function(
            "square_sum7", ctypes.c_double, ctypes.c_void_p, ctypes.c_int64
        )
        gc.collect()  # the callable alone keeps the module alive
        assert fn((ctypes.c_double * 2)(1.0, 2.0), 2) == 35.0

    load_run_drop()
    gc.collect()
    with open("/proc/self/maps") as f:
        before = len(f.readlines())
    for _ in range(300):
        load_run_drop()
    gc.collect()
    with open("/proc/self/maps") as f:
        assert len(f.readlines()) <= before + 2


def test_dynamo_reset_empties_the_cache_and_compiled_functions_still_run():
    x = minitorch.randn(16)
    compiled = minitorch.compile(lambda t: (t * 3.5).sin() + t.exp())
    compiled(x)
    assert jit_module.cached_modules() > 0
    minitorch._dynamo.reset()
    assert jit_module.cached_modules() == 0
    gc.collect()
    expected = np.sin(x.numpy() * np.float32(3.5)) + np.exp(x.numpy())
    np.testing.assert_allclose(compiled(x).numpy(), expected, rtol=1e-5)  # compiles again


# -- threads ([Note: the JIT and threads]) ------------------------------------------------------


def test_threads_compiling_different_and_identical_ir_at_once():
    jit_module.clear_cache()
    texts = [square_sum_variant(k) for k in (11, 12, 13)] * 4  # each text from 4 threads
    barrier = threading.Barrier(len(texts))

    def compile_and_run(k: int, text: str) -> tuple[JitModule, float]:
        barrier.wait()
        jit = compile_ir(text)
        return jit, run_square_sum(jit, k)

    with ThreadPoolExecutor(len(texts)) as pool:
        ks = [11, 12, 13] * 4
        results = list(pool.map(compile_and_run, ks, texts))
    for k, (jit, value) in zip(ks, results, strict=True):
        assert value == 30.0 * k
        assert jit is results[ks.index(k)][0]  # identical IR: one module
    assert jit_module.cached_modules() == 3
