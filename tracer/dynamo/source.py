"""Sources: where a tracked value came from, written as a Python expression.

    L['x']                  a local (an argument of the frame)
    G['w']                  a global of the frame's module
    builtins.len            a builtin the frame reads by name
    sys.modules['m'].F      a global of another module (read by an inlined function)
    L['x'].shape[0]         an attribute or item of another source

A source does two jobs (see [Note: guards] in guards.py): it is the left-hand side of every
guard on the value (`L['x'].shape == (3, 4)`), and it is how the compiled code reloads the value
on later calls (`compiled_fn([L['x'], G['w']])`). Both are evaluated with `L` bound to the
frame's locals and `G` to its globals, so a source *is* its expression: `name()`.
"""

from __future__ import annotations

import builtins
import sys
from dataclasses import dataclass
from typing import Any


class Source:
    """Base class: an expression over `L` (locals) and `G` (globals)."""

    def name(self) -> str:
        raise NotImplementedError

    def get_value(self, f_locals: dict[str, Any], f_globals: dict[str, Any]) -> Any:
        """Evaluate the expression against one frame."""
        scope = {"builtins": builtins, "sys": sys}
        return eval(self.name(), scope, {"L": f_locals, "G": f_globals})  # noqa: S307

    def __str__(self) -> str:
        return self.name()


@dataclass(frozen=True)
class LocalSource(Source):
    """An argument or local variable of the frame: L['x']."""

    local_name: str

    def name(self) -> str:
        return f"L[{self.local_name!r}]"


@dataclass(frozen=True)
class GlobalSource(Source):
    """A global of the frame's module: G['w']."""

    global_name: str

    def name(self) -> str:
        return f"G[{self.global_name!r}]"


@dataclass(frozen=True)
class ModuleGlobalSource(Source):
    """A global of a module other than the frame's, read by an inlined function (nn layers'
    `F`): sys.modules['minitorch.nn.linear'].F."""

    module_name: str
    global_name: str

    def name(self) -> str:
        return f"sys.modules[{self.module_name!r}].{self.global_name}"


@dataclass(frozen=True)
class ImportedModuleSource(Source):
    """A module imported inside the frame (`import numpy as np`): sys.modules['numpy']."""

    module_name: str

    def name(self) -> str:
        return f"sys.modules[{self.module_name!r}]"


@dataclass(frozen=True)
class BuiltinSource(Source):
    """A builtin read through LOAD_GLOBAL because no global shadows it: builtins.len."""

    builtin_name: str

    def name(self) -> str:
        return f"builtins.{self.builtin_name}"


@dataclass(frozen=True)
class AttrSource(Source):
    """An attribute of another source: L['x'].shape."""

    base: Source
    member: str

    def name(self) -> str:
        return self.name_over(self.base.name())

    def name_over(self, base: str) -> str:
        """The expression with `base` for the base's (epoch_guard.py reads the base from
        elsewhere)."""
        if not self.member.isidentifier():  # a numbered submodule: getattr(m.layers, '0')
            return f"getattr({base}, {self.member!r})"
        return f"{base}.{self.member}"


@dataclass(frozen=True)
class GetItemSource(Source):
    """An item of another source: L['x'].shape[0]."""

    base: Source
    index: int | str

    def name(self) -> str:
        return self.name_over(self.base.name())

    def name_over(self, base: str) -> str:
        """The expression with `base` for the base's."""
        return f"{base}[{self.index!r}]"
