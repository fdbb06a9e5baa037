"""`OpaqueVariable`: a value tracing can hold and pass along but not look into.

A list argument, an nn.Module, a numpy array: the frame may carry one around (and even return
it, reloaded from its source), but any operation on it raises `Unsupported` naming its type.
Its type is guarded, so a later call with another kind of value traces again.
"""

from __future__ import annotations

from typing import Any

from tracer.dynamo.source import Source
from tracer.dynamo.variables.base import VariableTracker


class OpaqueVariable(VariableTracker):
    """Any other Python object."""

    def __init__(self, value: Any, source: Source | None = None) -> None:
        super().__init__(source)
        self.value = value

    def python_type(self) -> type:
        return type(self.value)

    def describe(self) -> str:
        where = f" ({self.source.name()})" if self.source is not None else ""
        return f"a {type(self.value).__name__} object{where}"
