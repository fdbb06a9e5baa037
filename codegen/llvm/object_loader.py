"""Load the object files our JIT emits into this process, without LLVM: a linker in a page.

    loaded = object_loader.load(object_code)       # ELF bytes from LLVM, or from the disk
    square_sum = ctypes.CFUNCTYPE(...)(loaded.address("square_sum"))

[Note: loading object code ourselves]
LLVM turns a kernel into an object file (codegen/llvm/jit.py), and the kernel cache on disk
keeps it. Running it takes no compiler at all, only what a linker does: put the bytes in
memory and patch the addresses in them. MCJIT does that in ~1 ms, but reaching MCJIT means
importing llvmlite.binding, ~45 ms (19 of them loading libllvmlite.so), more than a warm
start's whole budget (20 ms) in a process whose kernels all come from the disk. So every
object is loaded here, in Python, in five steps:

1. Parse the ELF file with `struct`: its header, section headers, symbol table, and RELA
   sections (the relocations: "at offset O of section T, write S + A", S a symbol's address,
   A a constant, or "S + A - P" relative to the patched place P).
2. Place the allocatable sections (code, read-only data, writable data, zeroed data), each
   at its alignment, in one anonymous mapping, read-write. The three kinds take pages of
   their own, so that each can get its own protection.
3. Relocate. S is a section of the object, a symbol it defines, or a symbol it only names:
   those are looked up by name, first among the symbols `add_symbol` registered (the trig
   library's functions, codegen/llvm/trig.py), then among those a symbol source loads on
   demand (the same library, where no kernel generated in this process loaded it yet:
   trig_library.py), then in the process (`dlsym`: libc, libm).
4. Protect: the code read+execute, the read-only data read-only. A page is never writable
   and executable at once (W^X), so nothing can write code that runs later.
5. Hand out the object's global symbols, name -> address.

What LLVM emits for a JIT target machine is simple: the large code model, in which code
reaches every address, in its own sections or not, through a 64-bit absolute constant
(`movabs`), so each relocation is R_X86_64_64, whatever the distance. The loader also
handles the small code model's R_X86_64_PC32 and R_X86_64_PLT32 (32-bit offsets from the
patched place) when the target is within reach, +-2 GiB.

What it refuses, it refuses before anything runs, in two ways:
- an object it does not handle (another machine or host, a relocation it does not know or
  that does not reach, thread-local data) raises `UnsupportedObject`, and JitModule hands
  the bytes to MCJIT instead (codegen/llvm/compiler.py), with the reason;
- bytes that are not a well-formed object (truncated, offsets past the end, a relocation
  outside its section) raise a CompileError: patching them would write outside the memory
  we own. So does a call of a function nobody defines, which MCJIT would answer by aborting
  the process.

The memory lives as long as the LoadedObject ([Note: the JIT's memory] in jit.py).
"""

from __future__ import annotations

import ctypes
import functools
import mmap
import os
import struct
import sys
import threading
import weakref
from collections.abc import Callable
from typing import NamedTuple

from minitorch.errors import CompileError

PAGE = mmap.PAGESIZE
_MAX_SIZE = 1 << 30  # more memory than any object of ours needs: a damaged size field


class UnsupportedObject(CompileError):
    """A well-formed object file that this loader does not handle; MCJIT may."""


# -- the ELF format, as much of it as we read ------------------------------------------------

# e_ident, e_type, e_machine, e_version, e_entry, e_phoff, e_shoff, e_flags, e_ehsize,
# e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx
_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
# sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info, sh_addralign,
# sh_entsize
_SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")  # st_name, st_info, st_other, st_shndx, st_value, st_size
_RELA = struct.Struct("<QQq")  # r_offset, r_info (symbol << 32 | type), r_addend

_ELFCLASS64, _LITTLE_ENDIAN, _ET_REL, _EM_X86_64 = 2, 1, 1, 62
_SHT_SYMTAB, _SHT_RELA, _SHT_NOBITS, _SHT_REL = 2, 4, 8, 9
_LOADABLE_TYPES = {1, _SHT_NOBITS, 0x70000001}  # PROGBITS, NOBITS, X86_64_UNWIND (.eh_frame)
_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR, _SHF_TLS = 0x1, 0x2, 0x4, 0x400
_SHN_UNDEF, _SHN_LORESERVE, _SHN_ABS = 0, 0xFF00, 0xFFF1
_STB_GLOBAL, _STB_WEAK = 1, 2

# type -> (name, struct format of the patched field, relative to the place?)
_RELOCATIONS = {
    1: ("R_X86_64_64", "<Q", False),  # S + A
    2: ("R_X86_64_PC32", "<i", True),  # S + A - P
    4: ("R_X86_64_PLT32", "<i", True),  # S + A - P: a call, direct when within reach
}


class _Section(NamedTuple):
    name: str
    type: int  # sh_type: PROGBITS, NOBITS, SYMTAB, RELA, ...
    flags: int  # sh_flags: ALLOC, WRITE, EXECINSTR, ...
    offset: int  # where its bytes are in the file
    size: int
    link: int  # SYMTAB: its string table; RELA: its symbol table
    info: int  # RELA: the section it patches
    align: int


class _Symbol(NamedTuple):
    name: str
    bind: int  # LOCAL, GLOBAL, WEAK
    section: int  # st_shndx: a section's index, UNDEF, ABS, ...
    value: int  # its offset in the section (ABS: the value itself)


def _parse_sections(data: bytes) -> list[_Section]:
    """The section headers of an ELF64 x86-64 relocatable object, their names resolved."""
    if data[:4] != b"\x7fELF":
        raise CompileError(f"not an object file: it starts with {data[:4]!r}, not b'\\x7fELF'")
    if len(data) < _HEADER.size:
        raise CompileError(f"not an object file: {len(data)} bytes, shorter than an ELF header")
    ident, kind, machine, *_, shoff, _, _, _, _, shentsize, shnum, shstrndx = _HEADER.unpack_from(
        data
    )
    if (ident[4], ident[5], kind, machine) != (_ELFCLASS64, _LITTLE_ENDIAN, _ET_REL, _EM_X86_64):
        raise UnsupportedObject(
            f"not a little-endian ELF64 x86-64 relocatable object: class "
            f"{ident[4]}, data {ident[5]}, type {kind}, machine {machine}"
        )
    if shentsize != _SECTION_HEADER.size or not 0 < shstrndx < shnum:
        raise CompileError(
            f"malformed object: {shnum} section headers of {shentsize} bytes, "
            f"names in section {shstrndx}"
        )
    _contents(data, shoff, shnum * shentsize)  # the table lies within the file
    headers = [_SECTION_HEADER.unpack_from(data, shoff + k * shentsize) for k in range(shnum)]
    for h in headers:
        if h[1] != _SHT_NOBITS:
            _contents(data, h[4], h[5])  # so does every section's content
    names = _contents(data, headers[shstrndx][4], headers[shstrndx][5])
    return [
        _Section(_string(names, h[0]), h[1], h[2], h[4], h[5], h[6], h[7], h[8]) for h in headers
    ]


def _contents(data: bytes, offset: int, size: int) -> bytes:
    """The bytes [offset, offset + size) of the file, which must hold them."""
    if offset + size > len(data):
        raise CompileError(
            f"malformed object: bytes {offset}..{offset + size} of a {len(data)}-byte file"
        )
    return data[offset : offset + size]


def _string(table: bytes, offset: int) -> str:
    """The NUL-terminated name at `offset` of a string table."""
    end = table.find(b"\0", offset)
    if not 0 <= offset < len(table) or end < 0:
        raise CompileError(
            f"malformed object: a name at offset {offset} of a {len(table)}-byte string table"
        )
    return table[offset:end].decode("utf-8", "replace")


def _parse_symbols(data: bytes, sections: list[_Section]) -> tuple[int, list[_Symbol]]:
    """The index of the symbol table's section, and its symbols."""
    tables = [k for k, s in enumerate(sections) if s.type == _SHT_SYMTAB]
    if len(tables) != 1 or not 0 < sections[tables[0]].link < len(sections):
        raise CompileError(f"malformed object: {len(tables)} symbol tables")
    table = sections[tables[0]]
    strings = sections[table.link]
    names = _contents(data, strings.offset, strings.size)
    entries = _contents(data, table.offset, table.size)
    if table.size % _SYMBOL.size:
        raise CompileError(f"malformed object: a {table.size}-byte symbol table")
    symbols = []
    for name, info, _, section, value, _ in _SYMBOL.iter_unpack(entries):
        symbols.append(_Symbol(_string(names, name), info >> 4, section, value))
    return tables[0], symbols


# -- placing, relocating, protecting ---------------------------------------------------------


def _layout(sections: list[_Section]) -> tuple[dict[int, int], list[tuple[int, int, int]], int]:
    """Where each allocatable section goes in the mapping: ({section: offset}, [(start, end,
    protection)] per kind, the mapping's size). Code first, then read-only data, then
    writable data, each kind on pages of its own."""
    kinds: dict[int, list[int]] = {
        mmap.PROT_READ | mmap.PROT_EXEC: [],
        mmap.PROT_READ: [],
        mmap.PROT_READ | mmap.PROT_WRITE: [],
    }
    for k, s in enumerate(sections):
        if s.flags & _SHF_ALLOC:
            kinds[_protection(s)].append(k)
    placed: dict[int, int] = {}
    ranges = []
    end = 0
    for protection, members in kinds.items():
        start = end = _round_up(end, PAGE)
        for k in members:
            end = _round_up(end, sections[k].align or 1)
            placed[k] = end
            end += sections[k].size
        if members:
            ranges.append((start, end, protection))
    if end > _MAX_SIZE:
        raise CompileError(f"malformed object: {end} bytes of sections to load")
    return placed, ranges, max(_round_up(end, PAGE), PAGE)  # mmap takes no empty mapping


def _protection(s: _Section) -> int:
    """What the pages of an allocatable section may do once loaded."""
    if s.type not in _LOADABLE_TYPES or s.flags & _SHF_TLS:
        raise UnsupportedObject(
            f"section {s.name!r} (type {s.type:#x}, flags {s.flags:#x}) is not code or plain data"
        )
    if s.align & (s.align - 1) or s.align > PAGE:
        raise UnsupportedObject(f"section {s.name!r} is aligned to {s.align} bytes")
    if s.flags & _SHF_EXECINSTR and s.flags & _SHF_WRITE:
        raise UnsupportedObject(f"section {s.name!r} is writable code")
    if s.flags & _SHF_EXECINSTR:
        return mmap.PROT_READ | mmap.PROT_EXEC
    return mmap.PROT_READ | (mmap.PROT_WRITE if s.flags & _SHF_WRITE else 0)


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


class LoadedObject:
    """An object file placed, relocated and protected in this process's memory; its code
    stays valid while this object lives ([Note: loading object code ourselves])."""

    def __init__(self, data: bytes) -> None:
        _check_host()
        sections = _parse_sections(data)
        symtab, symbols = _parse_symbols(data, sections)
        placed, ranges, size = _layout(sections)
        self._base = _map(size)
        # NOTE: freed with this object, not at exit: a kernel may still run on another thread
        # while the interpreter shuts down, and the OS takes the memory back anyway.
        weakref.finalize(self, _libc().munmap, self._base, size).atexit = False
        addresses = {k: self._base + offset for k, offset in placed.items()}
        image = bytearray(size)
        for k, offset in placed.items():
            if sections[k].type != _SHT_NOBITS:
                image[offset : offset + sections[k].size] = _contents(
                    data, sections[k].offset, sections[k].size
                )
        _relocate(image, data, sections, symtab, symbols, placed, addresses)
        ctypes.memmove(self._base, bytes(image), size)
        for start, end, protection in ranges:
            _protect(self._base + start, end - start, protection)
        self._symbols = _exported(symbols, sections, addresses)

    def address(self, name: str) -> int | None:
        """The address of the global symbol `name` the object defines, or None."""
        return self._symbols.get(name)

    def symbols(self) -> dict[str, int]:
        """Every global symbol the object defines, name -> address."""
        return dict(self._symbols)


def _relocate(
    image: bytearray,
    data: bytes,
    sections: list[_Section],
    symtab: int,
    symbols: list[_Symbol],
    placed: dict[int, int],
    addresses: dict[int, int],
) -> None:
    """Apply every relocation of the loaded sections to their bytes in `image`."""
    resolved: dict[int, int] = {}  # symbol index -> address
    for rela in sections:
        if rela.type == _SHT_REL and rela.info in placed:
            raise UnsupportedObject(f"{rela.name}: relocations without addends (SHT_REL)")
        if rela.type != _SHT_RELA or rela.info not in placed:
            continue  # not a relocation section, or it patches what we do not load (debug)
        if rela.link != symtab:
            raise CompileError(f"malformed object: {rela.name} uses section {rela.link}'s symbols")
        target = sections[rela.info]
        if rela.size % _RELA.size:
            raise CompileError(f"malformed object: a {rela.size}-byte {rela.name}")
        for offset, info, addend in _RELA.iter_unpack(_contents(data, rela.offset, rela.size)):
            kind, symbol = info & 0xFFFFFFFF, info >> 32
            if kind not in _RELOCATIONS:
                raise UnsupportedObject(
                    f"{rela.name}: relocation type {kind} (we handle "
                    f"{', '.join(n for n, _, _ in _RELOCATIONS.values())})"
                )
            name, field, relative = _RELOCATIONS[kind]
            if offset + struct.calcsize(field) > target.size or symbol >= len(symbols):
                raise CompileError(
                    f"malformed object: a {name} at {target.name}+{offset:#x}, symbol {symbol}"
                )
            if symbol not in resolved:
                resolved[symbol] = _symbol_address(symbols[symbol], sections, addresses)
            value = resolved[symbol] + addend
            if relative:
                value -= addresses[rela.info] + offset
            _patch(image, placed[rela.info] + offset, field, value, name)


def _patch(image: bytearray, at: int, field: str, value: int, name: str) -> None:
    """Write `value` into the field at `at`: 64 bits wrap around, 32 must fit."""
    if field == "<Q":
        value &= 0xFFFF_FFFF_FFFF_FFFF
    elif not -(2**31) <= value < 2**31:
        raise UnsupportedObject(
            f"a {name} relocation does not reach its target ({value:+#x} bytes away)"
        )
    struct.pack_into(field, image, at, value)


def _symbol_address(symbol: _Symbol, sections: list[_Section], addresses: dict[int, int]) -> int:
    """Where a symbol a relocation names is: in a loaded section, absolute, or found by name."""
    if symbol.section == _SHN_UNDEF:
        if not symbol.name:
            return 0  # symbol 0: the relocation is against nothing, S = 0
        address = _resolve(symbol.name)
        if address is None:  # NOTE: not for MCJIT, which would abort the process on it
            raise CompileError(
                f"the object calls {symbol.name!r}, which is neither "
                "registered with add_symbol nor in the process"
            )
        return address
    if symbol.section == _SHN_ABS:
        return symbol.value
    if symbol.section >= _SHN_LORESERVE:
        raise UnsupportedObject(
            f"symbol {symbol.name!r} is in special section {symbol.section:#x} (common or extended)"
        )
    if symbol.section not in addresses:
        raise CompileError(
            f"malformed object: symbol {symbol.name!r} is in section "
            f"{symbol.section}, which is not loaded"
        )
    return addresses[symbol.section] + symbol.value


def _exported(
    symbols: list[_Symbol], sections: list[_Section], addresses: dict[int, int]
) -> dict[str, int]:
    """The object's global definitions in loaded sections, name -> address."""
    exported = {}
    for symbol in symbols:
        if symbol.bind in (_STB_GLOBAL, _STB_WEAK) and symbol.section in addresses:
            if symbol.value > sections[symbol.section].size:
                raise CompileError(
                    f"malformed object: symbol {symbol.name!r} lies past the end of its section"
                )
            exported[symbol.name] = addresses[symbol.section] + symbol.value
    return exported


# -- symbols from elsewhere ------------------------------------------------------------------

_registered: dict[str, int] = {}  # add_symbol's table
_registered_lock = threading.Lock()
_sources: dict[str, Callable[[], None]] = {}  # add_symbol_source's: prefix -> load


def add_symbol(name: str, address: int) -> None:
    """Let objects loaded from now on call `name` at `address` (as llvm.add_symbol does for
    MCJIT; the MCJIT fallback is told of these too)."""
    with _registered_lock:
        _registered[name] = address


def add_symbol_source(prefix: str, load: Callable[[], None]) -> None:
    """Let `load()` register (add_symbol) the symbols named `prefix...` when an object first
    calls one nobody registered: a library loaded only once something needs it
    (codegen/llvm/trig_library.py)."""
    with _registered_lock:
        _sources[prefix] = load


def load_symbol_sources() -> None:
    """Load every symbol source now (for MCJIT, which looks names up only among those
    registered)."""
    with _registered_lock:
        loads = list(_sources.values())
    for load in loads:
        load()


def registered_symbols() -> dict[str, int]:
    """A copy of the symbols `add_symbol` registered, name -> address."""
    with _registered_lock:
        return dict(_registered)


def _resolve(name: str) -> int | None:
    """The address of a symbol an object names but does not define, or None."""
    with _registered_lock:
        if name in _registered:
            return _registered[name]
        load = next((load for prefix, load in _sources.items() if name.startswith(prefix)), None)
    if load is not None:  # (called without the lock: it registers what it loads)
        load()
        with _registered_lock:
            if name in _registered:
                return _registered[name]
    try:
        return ctypes.cast(_libc()[name], ctypes.c_void_p).value  # dlsym over the process
    except AttributeError:
        return None


# -- memory from the OS ----------------------------------------------------------------------


def _check_host() -> None:
    """The loaded code runs here: this loader only makes sense on x86-64 Linux."""
    machine = os.uname().machine
    if not sys.platform.startswith("linux") or machine != "x86_64":
        raise UnsupportedObject(
            f"the object loader runs on x86-64 Linux, not {sys.platform} on {machine}"
        )


@functools.cache
def _libc() -> ctypes.CDLL:
    """This process (the interpreter and the libraries it loaded), with the types of the
    memory calls we make. Made on first use, once `_check_host` passed."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    )
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    return libc


def _map(size: int) -> int:
    """The address of `size` fresh bytes of zeroed, read-write memory."""
    address = _libc().mmap(
        None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0
    )
    if address is None or address == ctypes.c_void_p(-1).value:  # MAP_FAILED
        raise MemoryError(f"mmap of {size} bytes failed: {os.strerror(ctypes.get_errno())}")
    return address


def _protect(address: int, size: int, protection: int) -> None:
    if _libc().mprotect(address, size, protection) != 0:
        raise UnsupportedObject(f"mprotect refused: {os.strerror(ctypes.get_errno())}")
