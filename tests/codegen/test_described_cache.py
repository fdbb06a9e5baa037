"""Kernels keyed on disk by their loop IR ([Note: a key made before the IR] in
codegen/llvm/backend.py): the key holds everything the generator reads, a kernel found on the
disk runs without its IR ever being generated, and its IR is still there to be read."""

import dataclasses
import os

import numpy as np
import pytest
from codegen_testing import input_buffer, load, unary_program

import minitorch.dtype as dt
from codegen import disk_cache
from codegen.llvm import backend as llvm_backend
from codegen.llvm import jit as jit_module
from codegen.llvm import kernel as kernel_module
from codegen.llvm.backend import LLVMBackend, describe
from ir.indexing import Var
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import ops
from ir.scheduler import FusedKernel, Loop, schedule
from minitorch import config

pytestmark = pytest.mark.extras("disk_cache")

# What each class the generator reads holds. A new field must reach the key, and this test
# says so: `describe` prints the kernel and the layouts it stores with, so a field the
# printer does not show is a field two different kernels could share a key over.
FIELDS = {
    FusedKernel: {"name", "loops", "ranges", "reduction_ranges", "reads", "writes"},
    Loop: {"ranges", "nodes"},
    # origins and locations reach only a comment line of the IR text (where the buffer's code
    # came from): kernels that differ only there have the same machine code, and share a key
    ComputedBuffer: {"name", "layout", "data", "origins", "locations"},
    Pointwise: {"dtype", "ranges", "inner_fn"},
    Reduction: {"dtype", "ranges", "reduction_ranges", "reduction_type", "inner_fn"},
    Layout: {"size", "stride", "dtype", "offset"},
    InputBuffer: {"name", "layout"},
}


@pytest.mark.parametrize("cls", FIELDS, ids=lambda cls: cls.__name__)
def test_the_key_prints_every_field_the_generator_reads(cls):
    fields = {field.name for field in dataclasses.fields(cls)}
    assert fields == FIELDS[cls], (
        f"{cls.__name__} has fields {fields}: make describe() in codegen/llvm/backend.py "
        "print the new ones (or the printer it calls), then update FIELDS"
    )


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder and an empty in-memory compile cache."""
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    disk_cache.reset()
    jit_module.clear_cache()
    yield
    disk_cache.reset()
    jit_module.clear_cache()


def row_program(reduction_type: str, scale: float, dtype=np.float64) -> LoweredProgram:
    """out[i] = reduce_j(sin(x[i, j]) * scale) over a (3, 5) x."""
    x = input_buffer("x", np.zeros((3, 5), dtype))
    data = Reduction(
        x.layout.dtype,
        (3,),
        (5,),
        reduction_type,
        lambda i, r: ops.mul(ops.sin(load(x, (i[0], r[0]))), ops.constant(scale, x.layout.dtype)),
    )
    out = ComputedBuffer("buf0", Layout.contiguous((3,), x.layout.dtype), data)
    return LoweredProgram((x,), (out,), ("buf0",))


def description(program: LoweredProgram, sizes=()) -> str:
    (kernel,) = schedule(program)
    return describe(kernel, program.dtypes(), sizes)


def test_kernels_that_differ_anywhere_are_described_apart():
    variants = [
        description(row_program("sum", 2.0)),
        description(row_program("sum", 3.0)),  # a constant
        description(row_program("max", 2.0)),  # the reduction
        description(row_program("sum", 2.0, np.float32)),  # the dtypes
        description(unary_program(ops.sin, np.zeros(5))),  # the op, the ranges
        description(unary_program(ops.cos, np.zeros(5))),
        description(unary_program(ops.cos, np.zeros(6))),
        description(unary_program(ops.cos, np.zeros(6)), ("s0",)),  # the size symbols
    ]
    assert len(set(variants)) == len(variants)
    assert description(row_program("sum", 2.0)) == variants[0]  # and the same alike


def test_a_store_layout_the_printer_does_not_show_is_in_the_key(monkeypatch):
    # A column-major ComputedBuffer is no program lowering makes (ir/verify.py: buffers are
    # contiguous; eager's layouts are a copy after the kernels): MINITORCH_CHECK would refuse it.
    monkeypatch.setattr(config, "check", False)
    x = input_buffer("x", np.zeros((2, 3)))
    data = Pointwise(dt.float64, (2, 3), lambda i: ops.exp(load(x, i)))
    made = []
    for stride in ((3, 1), (1, 2)):  # row-major, or stored column by column
        out = ComputedBuffer("buf0", Layout((2, 3), stride, dt.float64), data)
        made.append(description(LoweredProgram((x,), (out,), ("buf0",))))
    assert made[0] != made[1]


def compile_and_run(program: LoweredProgram, x: np.ndarray) -> tuple[np.ndarray, object]:
    (kernel,) = schedule(program)
    compiled = LLVMBackend().compile_kernels([(kernel, program.dtypes())])[0]
    out = np.empty(3, x.dtype)
    compiled({"x": x, "buf0": out})
    return out, compiled


def test_a_kernel_from_the_disk_runs_without_generating_its_ir(cache, monkeypatch):
    x = np.random.default_rng(0).normal(size=(3, 5)) * 1e6
    x[1, 2] = 3e20  # sin's exact path: a call into the trig library
    first, made = compile_and_run(row_program("sum", 2.0), x)
    np.testing.assert_allclose(first, (np.sin(x) * 2).sum(1), rtol=1e-12)
    text = made.source
    jit_module.clear_cache()  # as a new process: only the disk remembers

    def no_generating(*args, **kwargs):
        raise AssertionError("generated IR for a kernel the disk holds")

    monkeypatch.setattr(kernel_module, "generate_kernel", no_generating)
    again, loaded = compile_and_run(row_program("sum", 2.0), x)
    np.testing.assert_array_equal(again, first)
    assert disk_cache.stats["hit"] == 1
    monkeypatch.undo()
    assert loaded.source == text  # made when read


def test_another_generator_does_not_load_the_old_code(cache, monkeypatch):
    x = np.ones((3, 5))
    compile_and_run(row_program("sum", 2.0), x)
    jit_module.clear_cache()
    monkeypatch.setattr(llvm_backend, "generator_source", lambda: "edited")
    compile_and_run(row_program("sum", 2.0), x)
    assert disk_cache.stats["hit"] == 0 and disk_cache.stats["store"] == 2


def test_size_symbols_are_arguments_of_a_loaded_kernel(cache):
    s0 = Var("s0")
    x = InputBuffer("x", Layout((s0,), (1,), dt.float32))
    out = ComputedBuffer(
        "buf0",
        Layout((s0,), (1,), dt.float32),
        Pointwise(dt.float32, (s0,), lambda i: ops.exp(load(x, i))),
    )
    program = LoweredProgram((x,), (out,), ("buf0",))
    (kernel,) = schedule(program)
    for _ in range(2):  # compiled, then loaded from the disk
        jit_module.clear_cache()
        compiled = LLVMBackend().compile_kernels([(kernel, program.dtypes())], ("s0",))[0]
        a = np.linspace(-2, 2, 7, dtype=np.float32)
        got = np.empty_like(a)
        compiled({"x": a, "buf0": got}, {"s0": 7})
        np.testing.assert_allclose(got, np.exp(a), rtol=1e-6)
    assert disk_cache.stats["hit"] == 1


def test_the_generators_source_digest_is_kept_under_its_files_names_sizes_and_times(
    cache, tmp_path, monkeypatch
):
    """A process reads the digest of the generator's source from the disk (no file read and
    hashed) while no file changed; a file touched or edited makes the digest anew."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.py").write_text("x = 1\n")
    (source / "b.py").write_text("y = 2\n")
    monkeypatch.setattr(llvm_backend, "_generator_files", lambda: sorted(source.glob("*.py")))

    def digest() -> str:
        llvm_backend.generator_source.cache_clear()  # as a new process would
        return llvm_backend.generator_source()

    first = digest()
    assert disk_cache.source_stats == {"miss": 1, "store": 1}
    assert digest() == first and disk_cache.source_stats["hit"] == 1
    edited = source / "b.py"
    before = edited.stat().st_mtime_ns
    edited.write_text("y = 3\n")  # the same size, another content and time (a coarse clock
    os.utime(edited, ns=(before + 10**9, before + 10**9))  # might not move: move it a second)
    assert digest() != first and disk_cache.source_stats["store"] == 2
    llvm_backend.generator_source.cache_clear()
