"""The code generators minitorch knows, by name, and which one a device gets by default.

    get_backend("llvm")             # the LLVM CPU backend
    default_backend("cpu")          # the one `minitorch.compile(f)` uses for CPU tensors
    default_backend("cuda")         # ... and for tensors on the GPU: "cuda" (PTX, cupy)
    register_backend(MyBackend())   # then minitorch.compile(f, backend="mine") finds it

Backends are made on first use (the LLVM one loads llvmlite), so naming them costs nothing;
making the CUDA one needs no GPU (it imports cupy only to launch).
"""

from __future__ import annotations

from collections.abc import Callable

from codegen.backend import Backend
from minitorch.errors import CompileError


def _llvm() -> Backend:
    from codegen.llvm.backend import LLVMBackend

    return LLVMBackend()


def _cuda() -> Backend:
    from codegen.cuda.backend import CudaBackend

    return CudaBackend()


def _interpreter() -> Backend:
    from codegen.interpreter import InterpreterBackend

    return InterpreterBackend()


def _numpy() -> Backend:
    from codegen.numpy_source import NumpySourceBackend

    return NumpySourceBackend()


def _cuda_emulator() -> Backend:
    from codegen.cuda.emulate import CudaEmulatorBackend

    return CudaEmulatorBackend()


# name -> a function that makes the backend (called once, on first use)
_FACTORIES: dict[str, Callable[[], Backend]] = {
    "llvm": _llvm,
    "cuda": _cuda,
    "interpreter": _interpreter,
    "numpy": _numpy,
    "cuda_emulator": _cuda_emulator,
}
_MADE: dict[str, Backend] = {}

# device type -> the backend its tensors are compiled with by default
DEFAULT_FOR_DEVICE = {"cpu": "llvm", "cuda": "cuda"}


def register_backend(backend: Backend, name: str | None = None) -> Backend:
    """Make `backend` available under `name` (its own `backend.name` by default); a name can be
    registered once."""
    if not isinstance(backend, Backend):
        raise CompileError(
            f"register_backend: expected a codegen.backend.Backend, got {type(backend).__name__}"
        )
    name = name or backend.name
    if name in _FACTORIES:
        raise CompileError(f"a backend named {name!r} is already registered")
    _FACTORIES[name] = lambda: backend
    return backend


def backend_names() -> list[str]:
    """Every registered backend's name."""
    return sorted(_FACTORIES)


def get_backend(name: str) -> Backend:
    """The backend called `name`; a CompileError listing the choices if there is none."""
    if name not in _FACTORIES:
        raise CompileError(f"unknown code generator {name!r}; expected one of {backend_names()}")
    if name not in _MADE:  # two threads may both make one: setdefault keeps the first
        _MADE.setdefault(name, _FACTORIES[name]())
    return _MADE[name]


def clear_caches() -> None:
    """Every backend made so far forgets the kernels it compiled (Backend.clear_cache)."""
    for backend in list(_MADE.values()):
        backend.clear_cache()


def default_backend(device: str = "cpu") -> Backend:
    """The backend for tensors on `device` ('cpu', 'cuda')."""
    if device not in DEFAULT_FOR_DEVICE:
        raise CompileError(
            f"no code generator for device {device!r} yet; the compiler "
            f"has {sorted(DEFAULT_FOR_DEVICE)}"
        )
    return get_backend(DEFAULT_FOR_DEVICE[device])
