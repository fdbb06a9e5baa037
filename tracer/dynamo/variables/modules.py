"""`PythonModuleVariable`: a module read from the frame's globals (`math`, `minitorch`, `np`).

`minitorch.sin` is an attribute load on the module `G['minitorch']`; the module itself is
guarded by identity, and what the attribute holds is wrapped like any other value read from
the frame (builder.py), with the source `G['minitorch'].sin`.

[Note: module attributes are guarded]
Every attribute read through a module is guarded, minitorch's own included: after
`minitorch.sin = minitorch.cos` (or `math.sqrt = ...`, `F.relu = ...`), a graph that called
`minitorch.sin` would compute the old function, so `G['minitorch'].sin is ___function_sin`
is a part of the guard, one `is` per function the code read. A number is guarded by value:
`G['config'].SCALE == 2.0`.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import AttrSource, Source
from tracer.dynamo.variables.base import VariableTracker

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator


class PythonModuleVariable(VariableTracker):
    """A Python module; attribute loads wrap what the module holds."""

    def __init__(self, module: ModuleType, source: Source | None = None) -> None:
        super().__init__(source)
        self.module = module

    def python_type(self) -> type:
        return ModuleType

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        from tracer.dynamo.variables.builder import wrap

        try:
            value = getattr(self.module, name)
        except AttributeError as e:
            raise Unsupported(f"module {self.module.__name__} has no attribute {name!r}") from e
        source = None if self.source is None else AttrSource(self.source, name)
        return wrap(tx, value, source)

    def describe(self) -> str:
        return f"the module {self.module.__name__}"
