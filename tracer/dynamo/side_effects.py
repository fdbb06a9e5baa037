"""`SideEffects`: mutations of the caller's objects, recorded while tracing, replayed after.

Tracing never touches a real object: `out.append(y)` on a list argument changes only its
tracker, so later reads in the trace see the new item. What the caller must see is kept here
and written by the transformed code once the graph has run (and before a graph break's call):

    def f(x, out, d, obj):              def __transformed_f_0(L, G):
        y = x.sin()                         graph_out = __compiled_fn_f_0(L['x'])
        out.append(y)                       ___se_0 = [*L['out'], graph_out[0]]  ... (values)
        d['k'] = y                          L['out'][:] = ___se_0
        obj.count += 1                      L['d'].clear(); L['d'].update(___se_1)
        x.add_(1)                           L['obj'].count = ___se_2
        return y                            L['x'].copy_(graph_out[1])
                                            return graph_out[0]

Each container is written once with its final contents, and each attribute with its last
value, in the order they were first mutated (TorchDynamo replays the final state the same
way). Every value is computed before any write, so one write cannot change what another reads.
An input tensor mutated in place (`x.add_(1)`, `x += y`; variables/inplace.py) is written back
with `copy_`, which bumps its version counter as the eager op would.
`opt.zero_grad()` (variables/optimizer.py) is replayed as the call itself: it only sets
`.grad = None` on the parameters, which no graph reads.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.variables.base import VariableTracker, next_birth
from tracer.dynamo.variables.tensor import TensorVariable

if TYPE_CHECKING:
    from tracer.dynamo.instructions import Instruction
    from tracer.dynamo.symbolic_convert import InstructionTranslator


class SideEffects:
    """The pending writes of one trace, in the order they were first made."""

    def __init__(self) -> None:
        # key -> (kind, target, name, value); kind: 'container', 'attr', 'tensor' or 'call'
        self.writes: dict[tuple, tuple] = {}
        # Counts the mutations trackers saw, the frame's own containers included: a call that
        # mutated something it did not make and then failed cannot become a graph break
        # (graph_break.py), which would run it again.
        self.version = 0
        self.instruction_start = 0  # the first birth of a tracker the running instruction made

    def begin_instruction(self) -> None:
        """The root frame starts an instruction: trackers made from here on are its own."""
        self.instruction_start = next_birth()

    def mutated(self, tracker: VariableTracker) -> None:
        """Count a mutation of `tracker`, unless the instruction now running made it: if that
        instruction fails, what it made is dropped with it, and the graph break there runs
        it again from the state before it, so such a mutation is not done twice."""
        if getattr(tracker, "birth", -1) < self.instruction_start:
            self.version += 1

    def mutate_container(self, container: VariableTracker) -> None:
        """A list or dict changed (its tracker holds the new items); the caller's is replayed."""
        self.mutated(container)
        if container.source is not None:
            self.writes.setdefault(
                ("container", id(container)), ("container", container, None, None)
            )

    def store_attr(self, obj: VariableTracker, name: str, value: VariableTracker) -> None:
        self.version += 1
        key = ("attr", id(obj), name)
        self.writes.pop(key, None)  # the last store decides; keep its place among the writes
        self.writes[key] = ("attr", obj, name, value)

    def load_attr(self, obj: VariableTracker, name: str) -> VariableTracker | None:
        """The value a store in this trace gave `obj.name`, if any."""
        write = self.writes.get(("attr", id(obj), name))
        return None if write is None else write[3]

    def call_method(self, obj: VariableTracker, name: str) -> None:
        """`obj.name()` must run after the graph (opt.zero_grad(): the graph cannot see .grad);
        calling it twice is calling it once."""
        self.version += 1
        self.writes.setdefault(("call", id(obj), name), ("call", obj, name, None))

    def write_back(self, tensor: TensorVariable) -> None:
        """An input tensor was mutated in place: copy its new value into it."""
        self.version += 1
        self.writes.setdefault(("tensor", id(tensor)), ("tensor", tensor, None, None))

    def writes_back(self, tensor: VariableTracker) -> bool:
        """Is `tensor` an input this trace mutated (and will copy its new value into)?"""
        return ("tensor", id(tensor)) in self.writes

    def values(self) -> list[VariableTracker]:
        """Every tracker the replay reads (its tensors must be graph outputs)."""
        found: list[VariableTracker] = []
        for kind, target, _, value in self.writes.values():
            if kind != "call":
                found.extend(
                    [target]
                    if kind == "tensor"
                    else target.items
                    if kind == "container"
                    else [value]
                )
        return found

    def codegen(self, rebuild: Callable[[VariableTracker], str], out_index: dict) -> list[str]:
        """The lines of the transformed code that replay the writes (see the docstring);
        `out_index` maps a graph node to its index in graph_out."""
        computed, writes = [], []
        for i, (kind, target, name, value) in enumerate(self.writes.values()):
            where = target.source.name()
            if kind == "tensor":
                computed.append(f"___se_{i} = graph_out[{out_index[target.node]}]")
                writes.append(f"{where}.copy_(___se_{i})")
            elif kind == "call":
                writes.append(f"{where}.{name}()")
            elif kind == "attr":
                computed.append(f"___se_{i} = {rebuild(value)}")
                writes.append(f"{where}.{name} = ___se_{i}")
            elif target.python_type() is dict:
                computed.append(f"___se_{i} = {rebuild_items(target, rebuild)}")
                writes.append(f"{where}.clear(); {where}.update(___se_{i})")
            else:
                computed.append(f"___se_{i} = {rebuild_items(target, rebuild)}")
                writes.append(f"{where}[:] = ___se_{i}")
        return [f"    {line}" for line in computed + writes]


def rebuild_items(container: VariableTracker, rebuild: Callable[[VariableTracker], str]) -> str:
    """The new contents of a mutated list or dict, as a literal."""
    if container.python_type() is dict:
        return "{" + ", ".join(f"{k!r}: {rebuild(v)}" for k, v in container.entries.items()) + "}"
    return "[" + ", ".join(rebuild(v) for v in container.items) + "]"


def store_attr(self: InstructionTranslator, inst: Instruction) -> None:
    """STORE_ATTR `obj.name = value`: recorded on a plain object or an nn.Module of the frame."""
    from tracer.dynamo.variables.nn_module import NNModuleVariable
    from tracer.dynamo.variables.user_class import NewObjectVariable
    from tracer.dynamo.variables.user_object import UserObjectVariable, is_data_descriptor

    obj = self.pop()
    value = self.pop()
    name = inst.argval
    if isinstance(obj, NewObjectVariable):
        obj.store_attr(self, name, value)
        return
    if isinstance(obj, NNModuleVariable):
        m = obj.module
        if name == "training" or any(name in t for t in (m._parameters, m._buffers, m._modules)):
            raise Unsupported(
                f"setting {name!r} of {obj.describe()} (a parameter, buffer, "
                "submodule or the training flag) is not replayed"
            )
        if isinstance(value, NNModuleVariable):
            raise Unsupported(f"setting a module as attribute {name!r} of {obj.describe()}")
    elif isinstance(obj, UserObjectVariable):
        if is_data_descriptor(inspect.getattr_static(type(obj.value), name, None)):
            raise Unsupported(
                f"setting {name!r} of {obj.describe()}, which its class defines "
                "as a property or descriptor"
            )
    else:
        raise Unsupported(
            f"setting attribute {name!r} of {obj.describe()} (only attributes of "
            "plain Python objects and nn.Modules of the frame are replayed)"
        )
    self.output.side_effects.store_attr(obj, name, value)
