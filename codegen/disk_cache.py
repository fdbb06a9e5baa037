"""A cache of compiled code on disk, so that a new process skips compiling what an old one did.

    key = disk_cache.cache_key(ir_text, *host_description())
    code = disk_cache.load(key)              # bytes, or None: then compile, and
    disk_cache.store(key, object_code)

[Note: the kernel cache on disk]
Compiling a kernel at O3 costs 5 to 80 ms, and a training script compiles dozens of them on
every start. The machine code depends on nothing but the compiler's input, so it can be kept
across processes, as Inductor's FX graph cache and Triton's kernel cache do.

1. The key is the SHA-256 of everything the code depends on: for a kernel, its IR text,
   `host_description()` (codegen/llvm/jit.py: triple, CPU name, CPU features, llvmlite's
   version), the source of jit.py (the passes and the target machine's options), and this
   format's version. minitorch needs no version number of its own in the key: whatever it
   changes about a kernel changes the IR text, and whatever it changes about compiling one
   changes jit.py. (The trig library, keyed without its text, hashes its generators' source
   instead: codegen/llvm/trig.py.)
2. The value is bytes: the object code LLVM emits, which llvmlite links into a process in
   ~1 ms. An entry is minitorch's file envelope ([Note: the envelope] in
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
5. Where: `config.cache_dir` (MINITORCH_CACHE_DIR, else $XDG_CACHE_HOME/minitorch, else
   ~/.cache/minitorch), in a folder per format. `config.disk_cache = False`
   (MINITORCH_DISK_CACHE=0) turns it off. If the directory cannot be written, the cache
   turns itself off for the rest of the process, with one logged line: compiled code still
   works, it is only compiled every time. Deleting the folder is always safe.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections import Counter
from pathlib import Path

from minitorch import _logging, config
from minitorch.errors import SerializationError
from minitorch.serialization import open_envelope, seal

FORMAT = 1  # bump when what an entry holds changes meaning (e.g. how object code is loaded)
_KIND = "compiled_code"

# What the cache did in this process: "hit", "miss", "store", "rejected" (a bad entry).
stats: Counter[str] = Counter()
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


def load(key: str) -> bytes | None:
    """The bytes stored under `key`, or None if there are none, or none that pass the checks
    (a bad entry is removed: see the note)."""
    folder = directory()
    if folder is None:
        return None
    path = folder / key
    try:
        data = path.read_bytes()
    except OSError:  # not there (a miss), or unreadable: compile instead
        stats["miss"] += 1
        return None
    try:
        payload = _check(data, key)
    except SerializationError as error:
        stats["rejected"] += 1
        _logging.log("kernel_cache", "rejected a cache entry; compiling it again",
                     f"{path}: {error}")
        _remove(path)
        return None
    stats["hit"] += 1
    return payload


def store(key: str, payload: bytes) -> None:
    """Write `payload` under `key`, atomically; on an unwritable directory, turn the cache off."""
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
            f.write(seal({"kind": _KIND, "format": FORMAT, "key": key}, payload))
        os.replace(temporary, folder / key)  # atomic: see the note
    except OSError as error:  # a full disk; on Windows, a reader holding the entry open
        _remove(Path(temporary))
        _logging.log("kernel_cache", "could not store a cache entry", f"{folder / key}: {error}")
        return
    stats["store"] += 1


def _check(data: bytes, key: str) -> bytes:
    """The payload of an entry's bytes, or a SerializationError saying what is wrong."""
    header, payload = open_envelope(data)  # magic, lengths, checksum, JSON
    if header.get("kind") != _KIND or header.get("format") != FORMAT:
        raise SerializationError(f"not a compiled-code entry of format {FORMAT}: "
                                 f"kind {header.get('kind')!r}, format {header.get('format')!r}")
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
