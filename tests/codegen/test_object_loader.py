"""Our loader of object code ([Note: loading object code ourselves] in object_loader.py), held
to LLVM's MCJIT on the same bytes; what it refuses, it refuses before anything runs; what it
loads, it frees."""

import ctypes
import gc
import random
import struct

import llvmlite.binding as llvm
import numpy as np
import pytest

import minitorch
import minitorch._dynamo
from codegen.llvm import compiler, object_loader
from codegen.llvm import jit as jit_module
from codegen.llvm.jit import JitModule, compile_ir, compile_object, host_description
from codegen.llvm.object_loader import LoadedObject, UnsupportedObject
from minitorch.errors import CompileError

pytestmark = pytest.mark.extras("object_loader")

# Every kind of section and reference a kernel has: code calling code, constants in read-only
# data (a table indexed at run time stays a table), a writable variable with a value (.data)
# and one without (.bss), and a call of libm's cos, found in the process by name.
SECTIONS = """
@table = private unnamed_addr constant [4 x double] [double 1.5, double -2.25, double 8.0,
                                                      double 0.125]
@calls = global i64 0
@offset = global double 0.5

declare double @cos(double)

define internal double @lookup(i64 %k) noinline {
  %address = getelementptr [4 x double], ptr @table, i64 0, i64 %k
  %value = load double, ptr %address
  ret double %value
}

define double @f(i64 %k, double %x) {
  %n = load i64, ptr @calls
  %n.next = add i64 %n, 1
  store i64 %n.next, ptr @calls
  %t = call double @lookup(i64 %k)
  %c = call double @cos(double %x)
  %o = load double, ptr @offset
  %y = fmul double %t, %c
  %z = fadd double %y, %o
  ret double %z
}

define i64 @count() {
  %n = load i64, ptr @calls
  ret i64 %n
}
"""


def mcjit(object_code: bytes) -> compiler.McjitObject:
    return compiler.McjitObject(object_code, host_description(), object_loader.registered_symbols())


def run_f_and_count(loaded) -> tuple[list[float], int]:
    f = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_int64, ctypes.c_double)(loaded.address("f"))
    count = ctypes.CFUNCTYPE(ctypes.c_int64)(loaded.address("count"))
    values = [f(k, x) for k in range(4) for x in (0.0, 1.0, -3.5, 1e6)]
    return values, count()


def relocation_types(object_code: bytes) -> set[int]:
    sections = object_loader._parse_sections(object_code)
    types = set()
    for s in sections:
        if s.type == 4:  # SHT_RELA
            entries = object_code[s.offset : s.offset + s.size]
            types |= {info & 0xFFFFFFFF for _, info, _ in struct.iter_unpack("<QQq", entries)}
    return types


def test_the_loader_and_mcjit_agree_on_code_data_and_calls():
    object_code = compile_object(SECTIONS)
    ours, theirs = LoadedObject(object_code), mcjit(object_code)
    values, calls = run_f_and_count(ours)
    assert (values, calls) == run_f_and_count(theirs)
    assert calls == 16  # each its own .data: the two counters are apart
    assert values[1] == 1.5 * np.cos(1.0) + 0.5
    assert ours.address("lookup") is None  # internal: not exported
    assert relocation_types(object_code) == {1}  # the large code model: R_X86_64_64 alone


def test_small_code_model_relocations_within_reach():
    """Position-independent code of the small code model reaches its own data with PC32, and
    calls other objects' functions with PLT32: the loader takes both while within +-2 GiB."""
    without_cos = SECTIONS.replace("declare double @cos(double)", "").replace(
        "call double @cos(double %x)", "fadd double %x, 1.0"
    )
    near_data = without_cos.replace(" global ", " dso_local global ")  # no GOT: PC32 it is
    object_code = _emit(near_data, codemodel="small", reloc="pic")
    assert relocation_types(object_code) == {2}  # R_X86_64_PC32
    assert run_f_and_count(LoadedObject(object_code)) == run_f_and_count(mcjit(object_code))
    twice = LoadedObject(
        compile_object(
            "define double @twice(double %x) {\n  %y = fmul double %x, 2.0\n  ret double %y\n}\n"
        )
    )
    object_loader.add_symbol("minitorch.test.twice", twice.address("twice"))  # mapped nearby
    object_code = _emit(CALLS_TWICE, codemodel="small", reloc="pic")
    assert 4 in relocation_types(object_code)  # R_X86_64_PLT32
    for loaded in (LoadedObject(object_code), mcjit(object_code)):
        g = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(loaded.address("g"))
        assert g(3.0) == 7.0


CALLS_TWICE = """
declare double @minitorch.test.twice(double)
define double @g(double %x) {
  %y = call double @minitorch.test.twice(double %x)
  %z = fadd double %y, 1.0
  ret double %z
}
"""


def test_a_relocation_out_of_reach_is_refused():
    object_loader.add_symbol("minitorch.test.far_away", 0x1000)  # far below any mapping
    text = CALLS_TWICE.replace("minitorch.test.twice", "minitorch.test.far_away")
    with pytest.raises(UnsupportedObject, match="R_X86_64_PLT32 relocation does not reach"):
        LoadedObject(_emit(text, codemodel="small", reloc="pic"))


def test_what_the_loader_refuses_mcjit_loads():
    """Position-independent code reads its globals through a GOT, which the loader does not
    build: JitModule hands the object to MCJIT, and says so."""
    object_code = _emit(SECTIONS, codemodel="small", reloc="pic")
    with pytest.raises(UnsupportedObject, match="relocation type"):
        LoadedObject(object_code)
    jit = JitModule(SECTIONS, object_code)
    assert jit.loaded_by.startswith("MCJIT: ") and "relocation type" in jit.loaded_by
    assert run_f_and_count(jit._loaded) == run_f_and_count(mcjit(object_code))


def test_an_unknown_function_is_a_compile_error_not_a_crash():
    text = (
        "declare double @no_such_function(double)\n"
        "define double @g(double %x) {\n"
        "  %y = call double @no_such_function(double %x)\n  ret double %y\n}\n"
    )
    with pytest.raises(CompileError, match="'no_such_function'.*neither registered"):
        compile_ir(text)


def _emit(text: str, codemodel: str, reloc: str) -> bytes:
    """Object code for `text` from a target machine with this code model and relocation model
    (the JIT's own uses the large one)."""
    triple, cpu, features, _ = host_description()
    compiler._initialize_llvm()
    machine = llvm.Target.from_triple(triple).create_target_machine(
        cpu=cpu, features=features, opt=2, codemodel=codemodel, reloc=reloc
    )
    module = llvm.parse_assembly(text)
    return machine.emit_object(module)


# -- whole kernels: every module a compiled function makes -----------------------------------

WORKLOADS = {
    "sin and cos, huge inputs too": lambda t: minitorch.sin(t) * 2 + minitorch.cos(t),
    "softmax": lambda t: t.softmax(-1),
    "layernorm": lambda t: minitorch.nn.functional.layer_norm(t, (t.shape[-1],)),
    "gelu, sum of squares": lambda t: (
        minitorch.nn.functional.gelu(t, approximate="tanh") + (t * t).sum(-1, keepdim=True)
    ),
}


def compiled_result(fn, x: np.ndarray) -> tuple[np.ndarray, set[str]]:
    """fn compiled afresh (the kernel cache on disk still serves the object code), run on x;
    and what loaded its modules."""
    minitorch._dynamo.reset()
    jit_module.clear_cache()  # modules an LLVMBackend of a test compiled (not the registry's)
    result = minitorch.compile(fn)(minitorch.tensor(x)).numpy()
    return result, {jit.loaded_by.split(":")[0] for jit in jit_module._compiled.values()}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # eager numpy, on inf and 1e20
@pytest.mark.parametrize("name", WORKLOADS)
def test_compiled_kernels_give_the_same_bits_through_either_loader(name, monkeypatch):
    x = np.random.default_rng(0).standard_normal((8, 33)).astype(np.float32) * 4
    x[0, :4] = [3e9, -1e20, np.inf, np.nan]  # the trig library's slow path
    ours, loaders = compiled_result(WORKLOADS[name], x)
    assert loaders == {"object_loader"}

    def refuse(object_code: bytes) -> None:
        raise UnsupportedObject("this test wants MCJIT")

    monkeypatch.setattr(jit_module, "LoadedObject", refuse)
    theirs, loaders = compiled_result(WORKLOADS[name], x)
    assert loaders == {"MCJIT"}
    np.testing.assert_array_equal(ours, theirs)
    eager = WORKLOADS[name](minitorch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, eager, rtol=1e-5, atol=1e-5)


# -- refused before anything runs --------------------------------------------------------------


def test_a_module_with_nothing_to_load_loads():
    assert LoadedObject(compile_object("declare double @cos(double)\n")).address("cos") is None


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda b: b[:40], "shorter than an ELF header"),
        (lambda b: b"\x7fELG" + b[4:], "not an object file"),
        (lambda b: b[: len(b) // 2], "malformed object"),  # the section headers are at the end
        (lambda b: _set(b, 18, "<H", 183), "machine 183"),  # e_machine: AArch64
        (lambda b: _set(b, 16, "<H", 3), "type 3"),  # e_type: a shared library
    ],
)
def test_a_damaged_or_foreign_object_is_refused(damage, message):
    with pytest.raises(CompileError, match=message):
        LoadedObject(damage(compile_object(SECTIONS)))


def test_a_relocation_outside_its_section_or_of_an_unknown_type_is_refused():
    object_code = compile_object(SECTIONS)
    rela = next(s for s in object_loader._parse_sections(object_code) if s.type == 4)
    offset, info, addend = struct.unpack_from("<QQq", object_code, rela.offset)
    outside = _set(object_code, rela.offset, "<Q", 1 << 40)
    with pytest.raises(CompileError, match="malformed object: a R_X86_64_64 at"):
        LoadedObject(outside)
    no_symbol = _set(object_code, rela.offset + 8, "<Q", (10_000 << 32) | 1)
    with pytest.raises(CompileError, match="symbol 10000"):
        LoadedObject(no_symbol)
    got = _set(object_code, rela.offset + 8, "<Q", (info >> 32 << 32) | 9)  # GOTPCREL
    with pytest.raises(UnsupportedObject, match="relocation type 9"):
        LoadedObject(got)


def test_random_damage_is_refused_or_loaded_never_a_crash():
    """Flipped bits in the headers: the loader raises a CompileError or loads something it
    never runs; it never writes outside its own memory (which would crash this process)."""
    object_code = compile_object(SECTIONS)
    sections = object_loader._parse_sections(object_code)
    tables = [(0, 64)] + [(s.offset, s.size) for s in sections if s.type in (2, 4)]
    header_table = struct.unpack_from("<Q", object_code, 40)[0]
    tables.append((header_table, 64 * len(sections)))
    rng = random.Random(0)
    for _ in range(300):
        data = bytearray(object_code)
        start, size = rng.choice(tables)
        for _ in range(rng.randint(1, 4)):
            data[start + rng.randrange(size)] ^= 1 << rng.randrange(8)
        try:
            LoadedObject(bytes(data))
        except CompileError:
            pass


def _set(data: bytes, offset: int, field: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(field, out, offset, value)
    return bytes(out)


# -- memory ([Note: the JIT's memory]) ---------------------------------------------------------


def mappings() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def test_loaded_objects_are_unmapped_when_dropped():
    object_code = compile_object(SECTIONS)
    LoadedObject(object_code)  # whatever the first load allocates once
    gc.collect()
    before = mappings()
    kept = [LoadedObject(object_code) for _ in range(50)]
    assert mappings() >= before + 50  # each its own mapping, split by its protections
    del kept
    for _ in range(500):
        loaded = LoadedObject(object_code)
        assert run_f_and_count(loaded)[1] == 16  # the object's own counter: fresh .data
    del loaded
    gc.collect()
    assert mappings() <= before + 2  # no growth over many load/drop cycles


def test_code_is_never_writable_and_executable_at_once():
    loaded = LoadedObject(compile_object(SECTIONS))
    code = loaded.address("f")
    with open("/proc/self/maps") as f:
        for line in f:
            start, end = (int(a, 16) for a in line.split()[0].split("-"))
            if start <= code < end:
                assert line.split()[1].startswith("r-x")
                return
    raise AssertionError("the code's address is in no mapping")
