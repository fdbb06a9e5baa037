"""A cache of compiled code on disk, so that a new process skips compiling what an old one did.

    key = disk_cache.cache_key(ir_text, *host_description())
    code = disk_cache.load(key)              # bytes, or None: then compile, and
    disk_cache.store(key, object_code)

[Note: the kernel cache on disk]
Compiling a kernel at O3 costs 5 to 80 ms, and a training script compiles dozens of them on
every start. The machine code depends on nothing but the compiler's input, so it can be kept
across processes, as Inductor's FX graph cache and Triton's kernel cache do.

1. The key is the SHA-256 of everything the code depends on: for a module of kernels, its IR
   text, `host_description()` (codegen/llvm/host.py: triple, CPU name, CPU features,
   llvmlite's version), the source of codegen/llvm/compiler.py (the passes and the target
   machine's options), and this format's version. minitorch needs no version number of its
   own in the key: whatever it changes about a kernel changes the IR text, and whatever it
   changes about compiling one changes compiler.py. Where the text is dear to make, what
   makes it stands in for it: a graph's kernels are keyed by their loop IR and the source
   of the generator ([Note: a key made before the IR] in codegen/llvm/backend.py), the trig
   library by its generators' source (codegen/llvm/trig_library.py).
2. The value is bytes: the object code LLVM emits, which our loader links into a process in
   well under a millisecond (codegen/llvm/object_loader.py). An entry is minitorch's file
   envelope ([Note: the envelope] in
   minitorch/serialization.py): a prefix with the lengths and a SHA-256 of the rest, a JSON
   header {"kind": "compiled_code", "format", "key"}, and the bytes. Nothing is ever
   unpickled: a cache directory is only as trusted as its bytes' checksum and the code
   that made them.
3. Reading checks the prefix, the lengths, the checksum, the format and that the entry is the
   key's own. An entry that fails any check (a crash mid-write on a disk without ordered
   writes, a flipped bit, an older minitorch) is never loaded: it is removed, the reason is
   logged (MINITORCH_LOGS=kernel_cache), and the caller compiles and stores it again.
4. Writing is atomic: the bytes go to a temporary file in the same directory, then
   `os.replace` renames it over the entry. A reader sees the old entry, or the new one, never
   half of one; two processes storing one key each write a whole entry, and the last rename
   wins.
5. The host description itself is an entry too (kind "host_description", counted in
   `host_stats`), keyed by a fingerprint of the host, so that a process that compiles
   nothing never asks LLVM for it ([Note: the host description without LLVM]). So is the
   digest of a set of source files (kind "source_digest", `source_digest`), keyed by the
   files' names, sizes and times, so that a process does not read and hash them all again:
   the kernel generator's ([Note: a key made before the IR] in codegen/llvm/backend.py) and
   the whole compiler's (minitorch/compile/graph_cache.py).
6. A whole compiled graph is an entry too (kind "compiled_graph", counted in `graph_stats`):
   its generated wrapper and what the wrapper's names stand for, as JSON, so that a process
   skips every pass from AOT autograd on ([Note: the compiled-graph cache] in
   minitorch/compile/graph_cache.py).
7. Where: `config.cache_dir` (MINITORCH_CACHE_DIR, else $XDG_CACHE_HOME/minitorch, else
   ~/.cache/minitorch), in a folder per format. `config.disk_cache = False`
   (MINITORCH_DISK_CACHE=0) turns it off. If the directory cannot be written, the cache
   turns itself off for the rest of the process, with one logged line: compiled code still
   works, it is only compiled every time. Deleting the folder is always safe.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from minitorch import _logging, config
from minitorch.errors import SerializationError
from minitorch.serialization import open_envelope, seal

FORMAT = 1  # bump when what an entry holds changes meaning (e.g. how object code is loaded)
_KIND = "compiled_code"
_HOST_KIND = "host_description"  # what LLVM calls this host (codegen/llvm/host.py)
_SOURCE_KIND = "source_digest"  # source files, hashed: `source_digest`
GRAPH_KIND = "compiled_graph"  # a graph compiled whole (minitorch/compile/graph_cache.py)

# What the cache did in this process: "hit", "miss", "store", "rejected" (a bad entry), for
# compiled code, and for host descriptions.
stats: Counter[str] = Counter()
host_stats: Counter[str] = Counter()
source_stats: Counter[str] = Counter()
graph_stats: Counter[str] = Counter()
_STATS = {_KIND: stats, _HOST_KIND: host_stats, _SOURCE_KIND: source_stats, GRAPH_KIND: graph_stats}
# Why the cache turned itself off in this process (an unwritable directory), or None.
_disabled_because: str | None = None


def cache_key(*parts: str) -> str:
    """The SHA-256, in hex, of the parts and the format: the name of the entry they make."""
    digest = hashlib.sha256(f"minitorch compiled code, format {FORMAT}".encode())
    for part in parts:
        data = part.encode()
        digest.update(len(data).to_bytes(8, "little"))  # ("ab", "c") is not ("a", "bc")
        digest.update(data)
    return digest.hexdigest()


def directory() -> Path | None:
    """The folder entries live in, or None when the cache is off."""
    if not config.disk_cache or _disabled_because is not None:
        return None
    return Path(config.cache_dir) / f"compiled-v{FORMAT}"


def load(key: str, kind: str = _KIND) -> bytes | None:
    """The bytes stored under `key`, or None if there are none, or none that pass the checks
    (a bad entry is removed: see the note). `kind`: compiled code, or GRAPH_KIND."""
    return _read(key, kind)


def store(key: str, payload: bytes, kind: str = _KIND) -> None:
    """Write `payload` under `key`, atomically; on an unwritable directory, turn the cache off."""
    _write(key, kind, payload)


def load_description(fingerprint: str, kind: str = _HOST_KIND) -> tuple[str, ...] | None:
    """The description stored for a `fingerprint`, or None: of the host (codegen/llvm/host.py,
    counted in `host_stats`), or with kind "source_digest" of a set of source files
    (`source_digest`, counted in `source_stats`)."""
    payload = _read(cache_key(kind, fingerprint), kind)
    try:
        description = json.loads(payload) if payload is not None else None
    except ValueError:
        return None
    if not isinstance(description, list) or not all(isinstance(d, str) for d in description):
        return None
    return tuple(description)


def store_description(
    fingerprint: str, description: tuple[str, ...], kind: str = _HOST_KIND
) -> None:
    """Keep the description made for a `fingerprint` (what `load_description` reads)."""
    _write(cache_key(kind, fingerprint), kind, json.dumps(description).encode())


def source_digest(files: Sequence[str | Path]) -> str:
    """The SHA-256 of the contents of `files`: read from the disk under their names, sizes and
    modification times (as Python's bytecode cache trusts them), else made and stored."""
    stats = [(os.fspath(file), os.stat(file)) for file in files]
    fingerprint = hashlib.sha256(
        repr([(name, stat.st_size, stat.st_mtime_ns) for name, stat in stats]).encode()
    ).hexdigest()
    stored = load_description(fingerprint, _SOURCE_KIND)
    if stored is not None:
        return stored[0]
    digest = hashlib.sha256()
    for name, _ in stats:
        with open(name, "rb") as file:
            digest.update(f"{os.path.basename(name)}\0".encode() + file.read())
    store_description(fingerprint, (digest.hexdigest(),), _SOURCE_KIND)
    return digest.hexdigest()


def _read(key: str, kind: str) -> bytes | None:
    """The payload of the entry `key` of `kind`, or None: missing, or rejected and removed."""
    folder = directory()
    if folder is None:
        return None
    path = folder / key
    try:
        data = path.read_bytes()
    except OSError:  # not there (a miss), or unreadable: compile instead
        _STATS[kind]["miss"] += 1
        return None
    try:
        payload = _check(data, key, kind)
    except SerializationError as error:
        _STATS[kind]["rejected"] += 1
        _logging.log(
            "kernel_cache", "rejected a cache entry; compiling it again", f"{path}: {error}"
        )
        _remove(path)
        return None
    _STATS[kind]["hit"] += 1
    return payload


def _write(key: str, kind: str, payload: bytes) -> None:
    """Write an entry of `kind` atomically; on an unwritable directory, turn the cache off."""
    import tempfile  # NOTE: here, not above: it imports shutil, bz2 and lzma (~2 ms), and a
    # process whose kernels all come from the disk never writes ([Note: a warm start without
    # LLVM] in codegen/llvm/jit.py)

    folder = directory()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{key[:16]}.", suffix=".tmp")
    except OSError as error:  # read-only, not a folder, no permission: the same next time
        _turn_off(f"cannot write to {folder}: {error}")
        return
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(seal({"kind": kind, "format": FORMAT, "key": key}, payload))
        os.replace(temporary, folder / key)  # atomic: see the note
    except OSError as error:  # a full disk; on Windows, a reader holding the entry open
        _remove(Path(temporary))
        _logging.log("kernel_cache", "could not store a cache entry", f"{folder / key}: {error}")
        return
    _STATS[kind]["store"] += 1


def _check(data: bytes, key: str, kind: str) -> bytes:
    """The payload of an entry's bytes, or a SerializationError saying what is wrong."""
    header, payload = open_envelope(data)  # magic, lengths, checksum, JSON
    if header.get("kind") != kind or header.get("format") != FORMAT:
        raise SerializationError(
            f"not a {kind} entry of format {FORMAT}: "
            f"kind {header.get('kind')!r}, format {header.get('format')!r}"
        )
    if header.get("key") != key:
        raise SerializationError(f"the entry belongs to key {header.get('key')!r}")
    return payload


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:  # gone already (another process removed it), or read-only: harmless
        pass


def _turn_off(reason: str) -> None:
    global _disabled_because
    _disabled_because = reason
    _logging.log("kernel_cache", "the kernel cache on disk is off for this process", reason)


def reset() -> None:
    """Forget that the cache turned itself off, and the stats (tests; a new cache_dir)."""
    global _disabled_because
    _disabled_because = None
    stats.clear()
    host_stats.clear()
    source_stats.clear()
    graph_stats.clear()
