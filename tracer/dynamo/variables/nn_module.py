"""`NNModuleVariable`: an nn.Module read from the frame (`self`, `G['model']`, `self.fc`).

A module is guarded by its class and its `training` flag (NN_MODULE, guards.py), not by its
identity; everything read from it gets a source under the module's, and so a guard and a way
to be reloaded:

    self.fc              NNModuleVariable        L['self'].fc                 NN_MODULE
    self.fc.weight       TensorVariable (input)  L['self'].fc.weight          TENSOR_MATCH
    self.scale  (0.5)    ConstantVariable        L['self'].scale == 0.5       CONSTANT_MATCH
    self.training        ConstantVariable        L['self'].training is True   (NN_MODULE)
    self.fc(x)           inline Linear.forward(self.fc, x)
    for m in self.layers one NNModuleVariable per child, L['self'].layers._modules['0']

[Note: parameters are graph inputs]
TorchDynamo guards parameters by identity and, for inference, may bake them in as constants.
We pass them as graph inputs guarded like any tensor argument: the backend differentiates the
graph with respect to them (AOT autograd), so `loss.backward()` reaches `model.fc.weight.grad`,
and an optimizer step (same shape), load_state_dict, or another instance of the same class
(`step(Model(), x)` in a loop) reuses the compiled code.
"""

from __future__ import annotations

import inspect
from types import FunctionType
from typing import TYPE_CHECKING

from minitorch.nn.container import ModuleDict, ModuleList, Sequential
from minitorch.nn.hooks import has_hooks
from minitorch.nn.module import Module
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import AttrSource, GetItemSource, Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.functions import UserFunctionVariable
from tracer.dynamo.variables.user_object import method_of, property_of

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator


# NOTE: Module.__call__ as defined, kept before anyone can assign `nn.Module.__call__ = f`:
# after that, a module's call runs f, and comparing with the attribute would miss it.
MODULE_CALL = Module.__call__


class NNModuleVariable(VariableTracker):
    """An nn.Module with a source: attribute reads are wrapped, calls inline `forward`."""

    def __init__(self, module: Module, source: Source) -> None:
        super().__init__(source)
        self.module = module

    def python_type(self) -> type:
        return type(self.module)

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        from tracer.dynamo.variables.builder import wrap

        stored = tx.output.side_effects.load_attr(self, name)
        if stored is not None:  # `self.cache = y` earlier in this trace
            return stored
        m, source = self.module, AttrSource(self.source, name)
        for table in (m._parameters, m._buffers, m._modules):
            if name in table:
                return wrap(tx, table[name], source)
        if name == "training":  # already guarded by NN_MODULE
            return wrap(tx, m.training, source, guard=False)
        if name in m.__dict__:
            return wrap(tx, m.__dict__[name], source)  # scale, a plain tensor, ...
        try:
            static = inspect.getattr_static(type(m), name)
        except AttributeError as e:
            raise Unsupported(f"{self.describe()} has no attribute {name!r}") from e
        if isinstance(static, FunctionType):  # a method: inlined if called
            return method_of(tx, self, name, static)
        if isinstance(static, property) and isinstance(static.fget, FunctionType):
            return property_of(tx, self, name, static)
        if isinstance(static, (staticmethod, classmethod)):
            raise Unsupported(f"{type(static).__name__} {name!r} of {self.describe()}")
        return wrap(tx, getattr(m, name), source)  # a class attribute: guarded by value

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        from tracer.dynamo.variables.builder import wrap

        m = self.module
        # m(x) is type(m).__call__(m, x): Module.__call__, which calls self.forward. Each
        # step of that lookup is guarded ([Note: a module's call is looked up on every call]
        # in optimized_module.py).
        call = AttrSource(AttrSource(self.source, "__class__"), "__call__")
        tx.output.add_guard(call, "ID_MATCH")
        if type(m).__call__ is not MODULE_CALL:  # the class's own __call__, inlined
            static = inspect.getattr_static(type(m), "__call__")
            if not isinstance(static, FunctionType):
                raise Unsupported(f"{self.describe()} has a __call__ that is not a function")
            method = UserFunctionVariable(static, bound_self=self, fn_source=call)
            return method.call_function(tx, args, kwargs)
        if has_hooks(m):  # Module.__call__ runs them: the call runs for real, at a break
            raise Unsupported(f"{self.describe()} has forward hooks (the call runs eagerly)")
        tx.output.add_guard(self.source, "NO_HOOKS")  # one registered later: a retrace
        if "forward" in m.__dict__:  # m.forward = f: f, called without self
            forward = wrap(tx, m.__dict__["forward"], AttrSource(self.source, "forward"))
            return forward.call_function(tx, args, kwargs)
        forward = inspect.getattr_static(type(m), "forward")
        if not isinstance(forward, FunctionType):
            raise Unsupported(f"the forward of {self.describe()} is not a function")
        return method_of(tx, self, "forward", forward).call_function(tx, args, kwargs)

    def unpack_sequence(self, tx: InstructionTranslator) -> list[VariableTracker]:
        """`for layer in self.layers` over a Sequential or ModuleList: unrolled."""
        from tracer.dynamo.variables.builder import wrap

        if type(self.module).__iter__ not in (Sequential.__iter__, ModuleList.__iter__):
            raise Unsupported(f"iterating over {self.describe()}")
        table = AttrSource(self.source, "_modules")
        tx.output.add_guard(table, "DICT_KEYS")  # an append() later must retrace
        return [
            wrap(tx, sub, GetItemSource(table, key)) for key, sub in self.module._modules.items()
        ]

    def getitem(self, tx: InstructionTranslator, key) -> VariableTracker:
        """`self.heads["cls"]` of a ModuleDict, `self.layers[0]` of a Sequential or ModuleList:
        the submodule, guarded on the container's keys as iteration is."""
        from tracer.dynamo.variables.builder import wrap

        m, names = self.module, list(self.module._modules)
        if type(m).__getitem__ is ModuleDict.__getitem__ and key in m._modules:
            name = key
        elif (
            type(m).__getitem__ in (Sequential.__getitem__, ModuleList.__getitem__)
            and type(key) is int
            and -len(names) <= key < len(names)
        ):
            name = names[key]
        else:  # a slice, a missing key, an overridden __getitem__: eager decides
            raise Unsupported(f"indexing {self.describe()} with {key!r}")
        table = AttrSource(self.source, "_modules")
        tx.output.add_guard(table, "DICT_KEYS")
        return wrap(tx, m._modules[name], GetItemSource(table, name))

    def describe(self) -> str:
        return f"the module {type(self.module).__name__} ({self.source.name()})"
