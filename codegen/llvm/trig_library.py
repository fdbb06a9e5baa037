"""The trig library at run time: loaded once per process, when a kernel first calls into it.

trig.py writes the library (sin and cos's exact path for huge x: [Note: sin and cos over the
whole float range] there); this module only loads it, and so imports neither LLVM nor
llvmlite.ir. A warm start depends on that ([Note: a key made before the IR] in backend.py):
a kernel whose object code came from the disk was never generated in this process, so
nothing wrote its call of `minitorch.sin.float.huge`, and nothing would load the library
before the kernel needs it. So the object loader asks this module for any `minitorch.*`
symbol that nobody registered (`object_loader.add_symbol_source`), and `load` brings the
library in: from the kernel cache on disk, keyed by the source of the modules that write it
(their text is cheaper to read than the library's IR is to make), or compiled and stored.
"""

from __future__ import annotations

import threading
from pathlib import Path

from codegen.llvm import object_loader
from codegen.llvm.jit import JitModule, add_symbol, cached_module, disk_key

PREFIX = "minitorch."  # the library's functions: minitorch.sin.float.huge, its .v8, ...
_WRITERS = ("trig.py", "mathlib.py", "pi_reduction.py")  # the modules its IR text comes from

_library: JitModule | None = None
_loading = False  # the library is being loaded, on the thread that holds _lock
_lock = threading.RLock()  # re-entrant: loading resolves the library's own calls


def load() -> None:
    """Load the library, once per process, and register its functions with the JIT's linker
    (kernels linked from now on find them by name)."""
    global _library, _loading
    with _lock:
        if _library is not None or _loading:
            return  # NOTE: loading it with MCJIT asks for every symbol source: this one
        _loading = True
        try:
            library = cached_module(_key(), _text)
        finally:
            _loading = False
        for name, address in _functions(library).items():
            add_symbol(name, address)
        _library = library  # NOTE: never freed: every kernel that calls sin jumps into it


def _key() -> str:
    sources = [Path(__file__).with_name(name).read_text() for name in _WRITERS]
    return disk_key("trig library", *sources)


def _text() -> str:
    from codegen.llvm import trig  # the generator: only to compile the library, or to read it

    return str(trig.define_library())


def _functions(library: JitModule) -> dict[str, int]:
    """The library's functions kernels call, name -> address."""
    defined = library.defined_symbols()
    if defined is None:  # loaded by MCJIT, which lists nothing: ask the generator
        from codegen.llvm import trig

        defined = {name: library.address(name) for name in trig.exported_names()}
    return {name: address for name, address in defined.items() if name.startswith(PREFIX)}


object_loader.add_symbol_source(PREFIX, load)
