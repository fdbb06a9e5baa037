"""What machine code depends on besides its IR: this host, as LLVM describes it.

    host_description()   # ('x86_64-unknown-linux-gnu', 'znver3', '+64bit,+adx,...', '0.50.0')

[Note: the host description without LLVM]
Every key of the kernel cache on disk holds the host's description (triple, CPU name, CPU
features, llvmlite's version), since code compiled for an AVX-512 machine must not be loaded
on one without it. Only LLVM can say which names it gives this CPU and its features, and
asking means importing llvmlite.binding (~45 ms), which a process whose kernels all come from
the disk otherwise never needs ([Note: loading object code ourselves] in object_loader.py).

So the description is kept on disk too, under a *fingerprint*: what the description depends
on, read without LLVM in well under a millisecond:
- the CPU as the OS reports it: /proc/cpuinfo's first processor (vendor, family, model,
  stepping, microcode, feature flags; not the clock rate, which changes by the second);
- the llvmlite build: its version, and the size and time of its shared library (a reinstall
  of the same version built otherwise is another file);
- the OS and the machine's architecture.
A fingerprint seen before gives the stored description; a new one (another CPU, a VM moved
to another host, an upgraded llvmlite) asks LLVM, and stores the answer for the next
process. Where there is no /proc/cpuinfo (not Linux) LLVM is asked every time.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from pathlib import Path

import llvmlite

from codegen import disk_cache
from minitorch import config

# /proc/cpuinfo's lines that change while the machine does not.
_VOLATILE = ("cpu mhz", "bogomips")


@functools.cache
def host_description() -> tuple[str, str, str, str]:
    """(triple, CPU name, CPU features, llvmlite's version): LLVM's description of this host,
    from the disk when its fingerprint was seen before ([Note: the host description without
    LLVM])."""
    fingerprint = host_fingerprint() if config.disk_cache else None  # the disk: an extra
    stored = disk_cache.load_description(fingerprint) if fingerprint else None
    if stored is not None:
        return stored
    from codegen.llvm.compiler import describe_host  # imports LLVM

    description = describe_host()
    if fingerprint:
        disk_cache.store_description(fingerprint, description)
    return description


def host_fingerprint(cpuinfo: str = "/proc/cpuinfo") -> str | None:
    """A SHA-256 of what the host's description depends on, or None where it cannot be read
    cheaply."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            cpu = []
            for line in f:
                if not line.strip():
                    break  # the end of the first processor
                if not line.lower().startswith(_VOLATILE):
                    cpu.append(line.strip())
        library = (Path(llvmlite.__file__).parent / "binding" / "libllvmlite.so").stat()
    except OSError:
        return None
    parts = [
        *cpu,
        llvmlite.__version__,
        str(library.st_size),
        str(library.st_mtime_ns),
        sys.platform,
        os.uname().machine,
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
