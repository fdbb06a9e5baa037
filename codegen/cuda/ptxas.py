"""NVIDIA's PTX assembler, `ptxas`, run on our PTX: proof that a GPU driver would accept it,
on a machine with no GPU (the CUDA toolkit's ptxas needs none).

    path = find_ptxas()            # '/usr/local/bin/ptxas', or None where it is not installed
    assemble(ptx, arch="sm_80")    # a CompileError with ptxas's message if it is rejected
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from codegen.cuda.target import DEFAULT_ARCH
from minitorch.errors import CompileError

# Where the CUDA toolkit puts it when it is not on PATH.
_PLACES = ("/usr/local/cuda/bin/ptxas", "/usr/local/bin/ptxas")


@functools.cache
def find_ptxas() -> str | None:
    """The path of ptxas: on PATH, else in /usr/local/cuda/bin or /usr/local/bin; or None."""
    found = shutil.which("ptxas")
    if found:
        return found
    return next((place for place in _PLACES if os.access(place, os.X_OK)), None)


def assemble(ptx: str, arch: str = DEFAULT_ARCH) -> None:
    """Assemble `ptx` for `arch` and throw the result away; a CompileError quoting ptxas if it
    rejects it, or if there is no ptxas."""
    ptxas = find_ptxas()
    if ptxas is None:
        raise CompileError("ptxas is not installed (looked on PATH and in /usr/local/cuda/bin)")
    with tempfile.TemporaryDirectory(prefix="minitorch-ptx-") as folder:
        source = Path(folder) / "kernel.ptx"
        source.write_text(ptx)
        result = subprocess.run(
            [ptxas, f"-arch={arch}", str(source), "-o", os.devnull],
            capture_output=True,
            text=True,
            check=False,
        )
    if result.returncode != 0:
        raise CompileError(f"ptxas -arch={arch} rejected the PTX:\n{result.stderr.strip()}")
