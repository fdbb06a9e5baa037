"""`minitorch.export`, as `torch.export`: capture a module once, save it, load it, run it.

    >>> program = minitorch.export.export(model.eval(), (x,))
    >>> minitorch.export.save(program, "model.mtx")
    >>> minitorch.export.load("model.mtx").module()(x)

Implemented in tracer/export/ (see [Note: export is a strict trace] in program.py, and
[Note: the file format] in serialize.py: no pickle, nothing from the file runs on load).
The functions import tracer on first use, because tracer is built on top of minitorch.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from minitorch.nn.module import Module
    from minitorch.tensor import Tensor
    from tracer.export import ExportedProgram


def export(
    mod: Module, args: tuple | Tensor, kwargs: dict | None = None, *, dynamic_shapes: Any = None
) -> ExportedProgram:
    """Capture `mod(*args)` as an ExportedProgram: `.graph_module`, `.module()`, signature."""
    from tracer.export import export as export_program

    return export_program(mod, args, kwargs, dynamic_shapes=dynamic_shapes)


def save(ep: ExportedProgram, f: str | os.PathLike) -> None:
    """Write `ep` to the file `f` (a JSON header and raw tensor bytes; no pickle)."""
    from tracer.export import ExportedProgram, SerializationError
    from tracer.export import save as save_file

    if not isinstance(ep, ExportedProgram):
        raise SerializationError(
            f"export.save: expected an ExportedProgram, got "
            f"{type(ep).__name__} (save a traced module with .save(f))"
        )
    save_file(ep, f)


def load(f: str | os.PathLike) -> ExportedProgram:
    """Read a program that `save` wrote; a SerializationError for any other or damaged file."""
    from tracer.export import ExportedProgram, SerializationError
    from tracer.export import load as load_file

    program = load_file(f)
    if not isinstance(program, ExportedProgram):
        raise SerializationError(
            f"export.load: {os.fspath(f)!r} holds a traced module, not an "
            "exported program; load it with minitorch.jit.load"
        )
    return program


def __getattr__(name: str) -> Any:
    # The classes live in tracer; reach them through here without importing tracer eagerly.
    if name in (
        "ExportedProgram",
        "ExportedModule",
        "GraphSignature",
        "InputSpec",
        "OutputSpec",
        "SerializationError",
    ):
        import tracer.export

        return getattr(tracer.export, name)
    raise AttributeError(f"module 'minitorch.export' has no attribute '{name}'")


__all__ = ["export", "load", "save"]
