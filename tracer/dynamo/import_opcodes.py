"""`import` inside a compiled function: the import runs now, while tracing, as Python would.

    IMPORT_NAME numpy      import numpy as np          PythonModuleVariable(numpy), reloaded
                                                        as sys.modules['numpy']
    IMPORT_FROM sqrt       from math import sqrt       the module's attribute, as LOAD_ATTR

Importing is safe to do early: a module runs its body once, and every later import (the one the
compiled code stands for included) finds it in sys.modules. The module is then an ordinary
tracked value: a call of `np.random.random` breaks the graph like any call of numpy. Relative
imports (`from . import x`) stay Unsupported: they depend on the package of the frame.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import ImportedModuleSource
from tracer.dynamo.variables import wrap

if TYPE_CHECKING:
    from tracer.dynamo.instructions import Instruction
    from tracer.dynamo.symbolic_convert import InstructionTranslator


def import_name(self: InstructionTranslator, inst: Instruction) -> None:
    fromlist = self.pop().as_python_constant()
    level = self.pop().as_python_constant()
    if level != 0:
        raise Unsupported(f"a relative import (from {'.' * level}{inst.argval or ''} import ...)")
    try:
        module = builtins.__import__(inst.argval, self.frame.f_globals, None, fromlist, level)
    except ImportError as e:  # eager raises it again, at the user's line
        raise Unsupported(f"import {inst.argval} failed: {e}") from e
    self.push(wrap(self, module, ImportedModuleSource(module.__name__)))


def import_from(self: InstructionTranslator, inst: Instruction) -> None:
    self.push(self.stack[-1].var_getattr(self, inst.argval))
