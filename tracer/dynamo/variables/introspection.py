"""Questions about a value that its tracker answers: type(v), callable(v), isinstance(obj, C),
hasattr(x, n), getattr(x, n, default), and functools.partial(f, ...) made in the frame.

[Note: introspection is answered by the tracker]
`type(v)`, `callable(v)`, `hasattr(x, name)` and `getattr(x, name, default)` on a value that
is not a constant are still known while tracing: a tracker knows its value's type (pinned
by the value's guard: TENSOR_MATCH, TYPE_MATCH, NN_MODULE), and a tensor's attributes are its
class's, unless the instance has one of its own (guarded absent: NOT_SHADOWED). Each helper
returns None when it cannot tell; the call then goes the usual way (a fold, or Unsupported).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.tensor import TensorVariable
from tracer.dynamo.variables.tuples import TupleVariable

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator


def _python_type(value: VariableTracker) -> type | None:
    try:
        return value.python_type()
    except (NotImplementedError, Unsupported):
        return None


def _type_of(
    tx: InstructionTranslator, args: list[VariableTracker], kwargs: dict[str, VariableTracker]
) -> VariableTracker | None:
    """`type(v)`: a builtin class (int, tuple, NoneType, ...), which `is` compares and calls
    fold on, or a user's class (user_class.py); any other class is not a value tracing holds."""
    from tracer.dynamo.variables.user_class import class_of

    if len(args) != 1 or kwargs:
        return None
    known = class_of(args[0])  # a user's object: its class, pinned by its guard or made here
    if known is not None:
        return known
    cls = _python_type(args[0])
    if cls is None or cls.__module__ != "builtins":
        return None
    from tracer.dynamo.variables.functions import BuiltinVariable

    return BuiltinVariable(cls)


def _callable(
    tx: InstructionTranslator, args: list[VariableTracker], kwargs: dict[str, VariableTracker]
) -> VariableTracker | None:
    """`callable(v)` is whether type(v) defines __call__ (in its MRO: `hasattr(int,
    "__call__")` is True, from int's own type, while callable(3) is False)."""
    if len(args) != 1 or kwargs:
        return None
    cls = _python_type(args[0])
    if cls is None:
        return None
    return constant(any("__call__" in vars(k) for k in cls.__mro__))


def _tensor_has(tx: InstructionTranslator, tensor: TensorVariable, name: str) -> bool:
    """Does the tensor have attribute `name`? Its class's, or one set on the instance, which
    is guarded absent when the answer is no (`'name' not in L['x'].__dict__`)."""
    from tracer.dynamo.source import AttrSource

    if hasattr(type(tensor.example), name):
        return True
    if tensor.source is None:
        return False  # made in the frame: no attribute was set on it here
    tx.output.add_guard(AttrSource(tensor.source, name), "NOT_SHADOWED")
    frame = tx.output.frame  # the real tensor, not the fake one tracing computes with
    return name in vars(tensor.source.get_value(frame.f_locals, frame.f_globals))


def _hasattr(
    tx: InstructionTranslator, args: list[VariableTracker], kwargs: dict[str, VariableTracker]
) -> VariableTracker | None:
    """`hasattr(x, "shape")` on a tensor."""
    if (
        len(args) != 2
        or kwargs
        or not isinstance(args[0], TensorVariable)
        or not args[1].is_python_constant()
    ):
        return None
    return constant(_tensor_has(tx, args[0], args[1].as_python_constant()))


def _getattr(
    tx: InstructionTranslator, args: list[VariableTracker], kwargs: dict[str, VariableTracker]
) -> VariableTracker | None:
    """`getattr(x, name, default)` on a tensor: the attribute, or the default."""
    if (
        len(args) != 3
        or kwargs
        or not isinstance(args[0], TensorVariable)
        or not args[1].is_python_constant()
    ):
        return None
    name = args[1].as_python_constant()
    if _tensor_has(tx, args[0], name):
        return args[0].var_getattr(tx, name)
    return args[2]


def _isinstance(
    tx: InstructionTranslator, args: list[VariableTracker], kwargs: dict[str, VariableTracker]
) -> VariableTracker | None:
    """`isinstance(obj, cls)` on a module, a plain object, an object made in the frame or a
    tensor (their guards pin their class: TENSOR_MATCH the tensor's exact type), against
    classes whose identity is known (a builtin, one read from the frame: ID_MATCH, or one
    made in the frame)."""
    from tracer.dynamo.variables.nn_module import NNModuleVariable
    from tracer.dynamo.variables.user_class import NewObjectVariable
    from tracer.dynamo.variables.user_object import UserObjectVariable

    if (
        len(args) != 2
        or kwargs
        or not isinstance(
            args[0], (NNModuleVariable, NewObjectVariable, UserObjectVariable, TensorVariable)
        )
    ):
        return None
    classes = _known_classes(tx, args[1])
    if classes is None:
        return None
    return constant(issubclass(args[0].python_type(), classes))


def _known_classes(tx: InstructionTranslator, value: VariableTracker) -> Any:
    """The class (or tuple of classes) `value` holds, its identity guarded; None if unknown."""
    from tracer.dynamo.variables.functions import BuiltinVariable
    from tracer.dynamo.variables.named_tuples import NamedTupleClassVariable
    from tracer.dynamo.variables.opaque import OpaqueVariable

    if isinstance(value, TupleVariable) and value.tuple_type is tuple:
        items = [_known_classes(tx, item) for item in value.items]
        return None if any(i is None for i in items) else tuple(items)
    from tracer.dynamo.variables.user_class import UserClassVariable

    if isinstance(value, UserClassVariable):  # ID_MATCH when read (builder.py), or made here
        return value.value
    if isinstance(value, (BuiltinVariable, NamedTupleClassVariable)):
        held = value.as_python_constant()
        return held if isinstance(held, type) else None
    if (
        isinstance(value, OpaqueVariable)
        and isinstance(value.value, type)
        and value.source is not None
    ):
        tx.output.add_guard(value.source, "ID_MATCH")
        return value.value
    return None


def _partial(
    tx: InstructionTranslator, args: list[VariableTracker], kwargs: dict[str, VariableTracker]
) -> VariableTracker | None:
    """`functools.partial(f, *args, **kwargs)` made in the frame: held as its parts."""
    from tracer.dynamo.variables.user_object import FramePartialVariable

    if not args:
        return None
    return FramePartialVariable(args[0], list(args[1:]), dict(kwargs))


_INTROSPECTION = {
    type: _type_of,
    callable: _callable,
    hasattr: _hasattr,
    getattr: _getattr,
    isinstance: _isinstance,
    functools.partial: _partial,
}


def introspection(fn: Any):
    """The helper above for `fn`, if any (by identity: a method of a constant may not hash)."""
    for builtin, helper in _INTROSPECTION.items():
        if fn is builtin:
            return helper
    return None
