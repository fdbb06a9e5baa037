"""IR texts -> object code for this CPU: the part of the JIT that needs LLVM itself.

    object_code = compile_object(ir_text)      # ELF bytes, to load (jit.py) or keep on disk

Everything here imports llvmlite.binding, ~45 ms of a process's start, so jit.py imports this
module only when it has something to compile, or something its own loader refuses
([Note: a warm start without LLVM] in jit.py). The steps are [Note: the JIT pipeline]'s:
a target machine for this CPU, the texts parsed and linked ([Note: one module per graph]),
O3 with the vectorizers, object code emitted. Not safe for two threads at once: jit.py's
callers hold its lock.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import llvmlite
import llvmlite.binding as llvm

from codegen.llvm.jit import part_symbol
from minitorch.errors import CompileError


def describe_host() -> tuple[str, str, str, str]:
    """(triple, CPU name, CPU features, llvmlite's version), as LLVM sees this machine:
    what the kernel cache's keys hold (codegen/llvm/host.py)."""
    return (
        llvm.get_process_triple(),
        llvm.get_host_cpu_name(),
        llvm.get_host_cpu_features().flatten(),
        llvmlite.__version__,
    )


@functools.cache
def _initialize_llvm() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def host_target_machine(description: tuple[str, str, str, str]) -> llvm.TargetMachine:
    """A new LLVM target machine for the CPU `description` names (this one), at -O3.

    NOTE: new on every call, because an MCJIT engine takes ownership of its target machine
    and frees it with itself; two engines sharing one would crash after the first is freed.
    """
    _initialize_llvm()
    triple, cpu, features, _ = description
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu, features=features, opt=3, jit=True)


def optimize(module: llvm.ModuleRef, target_machine: llvm.TargetMachine) -> None:
    """Run LLVM's O3 pipeline, vectorizers included, over `module` in place."""
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True  # turn scalar loops into vector loops
    options.slp_vectorization = True  # pack independent scalar ops into vector ops
    options.loop_interleaving = True  # several vector iterations in flight at once
    options.loop_unrolling = True
    passes = llvm.create_pass_builder(target_machine, options)
    passes.getModulePassManager().run(module, passes)


def compile_object(description: tuple[str, str, str, str], *ir_texts: str) -> bytes:
    """IR texts -> one linked, verified, optimized module -> object code for the CPU
    `description` names (an ELF file's bytes on Linux)."""
    return with_optimized(
        description, ir_texts, lambda module, machine: machine.emit_object(module)
    )


def with_optimized(
    description: tuple[str, str, str, str], ir_texts: Sequence[str], use: Callable[..., Any]
) -> Any:
    """`use(module, target_machine)` on `ir_texts` parsed, linked, verified and optimized at
    O3; the module and its LLVM context are freed when it returns."""
    target_machine = host_target_machine(description)
    context = llvm.create_context()  # its own: LLVM's types and constants die with it
    try:
        module = _link(ir_texts, context)
        try:
            # The optimizer's cost model needs the real data layout and triple.
            module.triple = target_machine.triple
            module.data_layout = str(target_machine.target_data)
            optimize(module, target_machine)
            return use(module, target_machine)
        finally:
            module.close()  # NOTE: the module before its context
    finally:
        context.close()


def linked_source(ir_texts: Sequence[str]) -> str:
    """The IR text of several texts linked into one module ([Note: one module per graph])."""
    context = llvm.create_context()
    try:
        module = _link(ir_texts, context)
        try:
            return str(module)
        finally:
            module.close()  # NOTE: the module before its context
    finally:
        context.close()


def _link(ir_texts: Sequence[str], context: llvm.ContextRef) -> llvm.ModuleRef:
    """The texts parsed into one verified module, the functions (and variables) each exports
    renamed by `part_symbol` when there are several ([Note: one module per graph])."""
    modules: list[llvm.ModuleRef] = []
    try:
        for part, text in enumerate(ir_texts):
            modules.append(_parse(text, context))
            if len(ir_texts) > 1:
                module = modules[-1]
                for value in (*module.functions, *module.global_variables):
                    if not value.is_declaration and value.linkage == llvm.Linkage.external:
                        value.name = part_symbol(value.name, part, len(ir_texts))
        while len(modules) > 1:
            modules[0].link_in(modules.pop())  # frees the module linked in
        modules[0].verify()
        return modules.pop()
    except RuntimeError as error:
        raise CompileError(f"LLVM could not link the generated modules: {error}") from error
    finally:
        for module in modules:  # parsed, not linked: an error on the way
            module.close()  # NOTE: before their context


def _parse(ir_text: str, context: llvm.ContextRef) -> llvm.ModuleRef:
    """IR text as a verified module, or a CompileError saying what LLVM rejected."""
    module = None
    try:
        module = llvm.parse_assembly(ir_text, context=context)
        module.verify()
        return module
    except RuntimeError as error:
        if module is not None:
            module.close()  # NOTE: before its context
        raise CompileError(f"LLVM rejected the generated IR: {error}") from error


class McjitObject:
    """Object code linked into this process by LLVM's MCJIT: for what our own loader refuses
    ([Note: loading object code ourselves] in object_loader.py). The code lives as long as
    this object, whose engine owns it."""

    def __init__(
        self, object_code: bytes, description: tuple[str, str, str, str], symbols: dict[str, int]
    ) -> None:
        for name, address in symbols.items():  # what the loader's add_symbol registered
            llvm.add_symbol(name, address)
        # MCJIT wants a module to start from; ours are object files, so it gets an empty one.
        self._engine = llvm.create_mcjit_compiler(
            llvm.parse_assembly(""), host_target_machine(description)
        )
        self._engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
        self._engine.finalize_object()  # relocations resolved: the code can run
        weakref.finalize(self, self._engine.close)

    def address(self, name: str) -> int | None:
        """The address of the global symbol `name` the object defines, or None."""
        return self._engine.get_function_address(name) or None
