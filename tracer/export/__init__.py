"""Export: capture a module as a program (program.py), save it and load it back (serialize.py).

program.py     export(), ExportedProgram and its signature, the module that runs it
graph_json.py  a Graph as JSON, calling only what the op table names
serialize.py   the file: magic, version, checksum, JSON header, raw tensor bytes
"""

from tracer.export.graph_json import SerializationError
from tracer.export.program import (
    ExportedModule,
    ExportedProgram,
    GraphSignature,
    InputSpec,
    OutputSpec,
    export,
)
from tracer.export.serialize import load, save

__all__ = [
    "ExportedModule",
    "ExportedProgram",
    "GraphSignature",
    "InputSpec",
    "OutputSpec",
    "SerializationError",
    "export",
    "load",
    "save",
]
