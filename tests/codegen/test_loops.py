"""The loop helpers (for_range, for_nest, entry_alloca) and IndexValue behave as Python does."""

import ctypes

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from llvmlite import ir

from codegen.llvm.jit import compile_ir
from codegen.llvm.loops import I64, IndexValue, entry_alloca, for_nest, for_range, i64, unroll_by
from ir.indexing import Var
from minitorch.errors import CompileError


def _count_iterations(unroll: int | None = None) -> ir.Module:
    """i64 count(i64 start, i64 stop): how many times a for_range body runs, and sum of i."""
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(I64, [I64, I64]), "count")
    start, stop = fn.args
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    total = entry_alloca(builder, I64, "total")
    builder.store(i64(0), total)
    with for_range(builder, start, stop, name="i") as i:
        # 1000 per iteration plus i, so the result shows both the count and the values of i
        builder.store(builder.add(builder.load(total), builder.add(i, i64(1000))), total)
    if unroll is not None:
        unroll_by(i, unroll)
    builder.ret(builder.load(total))
    return module


def _compiled(module: ir.Module):
    return compile_ir(str(module)).function("count", ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)


COUNT = _compiled(_count_iterations())


@pytest.mark.parametrize("start, stop", [(0, 10), (3, 4), (5, 5), (7, 2), (-3, 3)])
def test_for_range_runs_like_python_range(start, stop):
    expected = sum(1000 + i for i in range(start, stop))
    assert COUNT(start, stop) == expected


def test_an_unroll_hint_is_a_self_referring_node_on_the_back_edge():
    module = _count_iterations(unroll=4)
    text = str(module)
    assert "!llvm.loop !1" in text.split("i.again")[-1].splitlines()[0]
    assert '!0 = !{ !"llvm.loop.unroll.count", i32 4 }' in text
    assert "!1 = distinct !{ !1, !0 }" in text
    count = _compiled(module)
    assert [count(0, n) for n in (0, 1, 7, 8, 9)] == [
        sum(1000 + i for i in range(n)) for n in (0, 1, 7, 8, 9)
    ]


def test_for_nest_visits_every_index_in_row_major_order():
    # out[k] = 100*i + 10*j + l for (i, j, l) in product(range(2), range(3), range(4))
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.PointerType()]), "fill")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    position = entry_alloca(builder, I64, "position")
    builder.store(i64(0), position)
    with for_nest(builder, (2, 3, 4), ("i", "j", "l")) as (i, j, l):
        value = builder.add(builder.add(builder.mul(i, i64(100)), builder.mul(j, i64(10))), l)
        k = builder.load(position)
        builder.store(value, builder.gep(fn.args[0], [k], source_etype=I64))
        builder.store(builder.add(k, i64(1)), position)
    builder.ret_void()
    assert "i.body:" in str(module) and "l.exit:" in str(module)
    fill = compile_ir(str(module)).function("fill", None, ctypes.c_void_p)
    out = np.zeros(24, np.int64)
    fill(out.ctypes.data)
    expected = [100 * i + 10 * j + l for i in range(2) for j in range(3) for l in range(4)]
    assert out.tolist() == expected


# -- index arithmetic --------------------------------------------------------------------------


def _compiled_floor_division():
    """i64 f(i64 a, i64 b, i64* out): out = [a // b, a % b] through IndexValue."""
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64, I64, ir.PointerType()]), "f")
    a, b, out = fn.args
    builder = ir.IRBuilder(fn.append_basic_block())
    env = {"a": IndexValue(builder, a), "b": IndexValue(builder, b)}
    quotient = (Var("a") // Var("b")).evaluate(env).value
    remainder = (Var("a") % Var("b")).evaluate(env).value
    builder.store(quotient, out)
    builder.store(remainder, builder.gep(out, [ir.Constant(I64, 1)], source_etype=I64))
    builder.ret_void()
    jit = compile_ir(str(module))
    return jit.function("f", None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)


FLOOR_DIVISION = _compiled_floor_division()


@given(st.integers(-(10**6), 10**6), st.integers(-1000, 1000).filter(lambda b: b != 0))
def test_index_floor_division_and_modulo_follow_python(a, b):
    out = np.zeros(2, np.int64)
    FLOOR_DIVISION(a, b, out.ctypes.data)
    assert out.tolist() == [a // b, a % b]


def test_index_values_mix_with_python_ints():
    builder = ir.IRBuilder(
        ir.Function(ir.Module(), ir.FunctionType(I64, [I64]), "g").append_basic_block()
    )
    i = IndexValue(builder, builder.function.args[0])
    for value in [3 + i, 3 - i, 3 * i, -i, 7 // i, 7 % i, i + i, i * 2 - 1]:
        assert isinstance(value, IndexValue) and value.value.type == I64
    with pytest.raises(CompileError, match="divides by zero"):
        _ = i // 0
