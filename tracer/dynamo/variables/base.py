"""`VariableTracker`: what the symbolic interpreter holds in place of a real Python value.

The stack and the locals of `InstructionTranslator` hold trackers, never real values. Each kind
of value has its own class (one file each, in this folder), and each class answers only the
operations it can trace; everything else raises `Unsupported` with a reason, which is how the
frame ends up running eagerly (or, in a later issue, breaking the graph there).

    kind                    tracks                              file
    ----------------------  ----------------------------------  ------------
    ConstantVariable        None, bool, int, float, str, dtype  constant.py
                            (and builtins: BuiltinVariable)
    TupleVariable           a tuple, Size or named tuple        tuples.py
    ListVariable            a list (the caller's: replayed)     tuples.py
    ListMethodVariable      lst.append & co, before the call    tuples.py
    ConstDictVariable       a dict (OrderedDict, defaultdict)   dicts.py
                            with constant keys
    DictViewVariable        d.keys(), values(), items(): live   dicts.py
    SetVariable             a set of constants                  sets.py
    ListIteratorVariable    iter(seq), zip, map, itertools      iterators.py, iterator_calls.py
    GradModeVariable        no_grad(), enable_grad(), ...       grad_mode.py
                            (a block's __exit__: GradModeExitVariable)
    AutocastVariable        autocast(...): its block is its body  grad_mode.py
    TensorVariable          a graph node + its fake value       tensor.py
    TensorMethodVariable    x.sum, before it is called          tensor.py
    InPlaceMethodVariable   y.add_, recorded functionally       inplace.py
    CopyIntoVariable        nn's buffer writes (BatchNorm)      inplace.py
    MinitorchFunctionVariable  minitorch.sin & co: graph calls  functions.py
                            minitorch.zeros, randn & co         factories.py
    BuiltinVariable         operator.*, math.*, len, ...        functions.py
    UserFunctionVariable    a Python function (inlined)         functions.py
    NestedUserFunctionVariable  a def/lambda made in the frame  nested.py
    PythonModuleVariable    a module: math, minitorch, ...      modules.py
    UserObjectVariable      an instance of a user class         user_object.py
    UserClassVariable       a user's class (calling it: ...)    user_class.py
    NewObjectVariable       ... an object made in the frame     user_class.py
    SuperVariable           super(): the MRO after a class      user_class.py
    OptimizerVariable       an optimizer: opt.zero_grad()       optimizer.py
    PartialVariable         a functools.partial (inlined)       user_object.py
    FramePartialVariable    a partial made in the frame         user_object.py
    LruCacheVariable        an lru_cache'd function             functions.py
    NamedTupleClassVariable  a named tuple's class              named_tuples.py
    OpaqueVariable          anything else: held, never used     opaque.py

A tracker that came from the frame (an argument, a global, an attribute of one) carries its
`source`; the guards on it were installed when it was wrapped (builder.py).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import Source

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator


_births = itertools.count()


def next_birth() -> int:
    """The birth of the next tracker made (see VariableTracker.birth)."""
    return next(_births)


class VariableTracker:
    """Base class: a traced value; every operation it does not override is Unsupported."""

    def __init__(self, source: Source | None = None) -> None:
        self.source = source  # where the value came from, if from the frame
        # When it was made, in the order of all trackers: a tracker made by the instruction
        # that then fails goes with it (side_effects.py: SideEffects.mutated).
        self.birth = next(_births)

    def python_type(self) -> type:
        """The type the real value has."""
        raise NotImplementedError

    def is_python_constant(self) -> bool:
        try:
            self.as_python_constant()
        except Unsupported:
            return False
        return True

    def as_python_constant(self) -> Any:
        """The real value, if tracing knows it exactly (a constant, a tuple of constants)."""
        raise Unsupported(f"{self.describe()} is not a constant")

    def as_graph_arg(self) -> Any:
        """This value as an argument of a graph node: a Node, a constant, a tuple of them."""
        raise Unsupported(f"{self.describe()} cannot be passed to a graph op")

    def as_example(self) -> Any:
        """This value for running an op on fake tensors: a fake tensor, a constant, ..."""
        raise Unsupported(f"{self.describe()} cannot be passed to a graph op")

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        """`obj.name`"""
        raise Unsupported(f"attribute .{name} of {self.describe()}")

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        """`obj(*args, **kwargs)`"""
        raise Unsupported(f"calling {self.describe()}")

    def unpack_sequence(self, tx: InstructionTranslator) -> list[VariableTracker]:
        """`a, b = obj`"""
        raise Unsupported(f"unpacking {self.describe()}")

    def describe(self) -> str:
        """A few words for error messages: 'a list', 'the function helper'."""
        where = f" ({self.source.name()})" if self.source is not None else ""
        return f"a value of type {self.python_type().__name__}{where}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"


class NullVariable(VariableTracker):
    """The NULL that CPython pushes next to a callable (see compat.py, the NULL slot)."""

    def python_type(self) -> type:
        return type(None)

    def describe(self) -> str:
        return "NULL"


NULL = NullVariable()
