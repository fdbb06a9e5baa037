"""Plain Python objects of the frame and `functools.partial` objects: looked into, not held.

    SCALER.apply(x)        UserObjectVariable    inline Scaler.apply(SCALER, x)
      self.k  (3.0)          wrapped                G['SCALER'].k == 3.0        CONSTANT_MATCH
      Scaler.apply           the class's function   G['SCALER'].__class__.apply ID_MATCH
    obj.count += 1         recorded (side_effects.py), replayed after the graph runs
    scaled(x)              PartialVariable       inline helper(x, k=4)
      scaled.func            wrapped                G['scaled'].func            ID_MATCH
      scaled.args/keywords   wrapped                their length/keys and each value's guard

A plain object is an instance of a class defined outside minitorch whose attribute lookup is
the default one (no __getattribute__ or __setattr__ of its own, no metaclass): then
`obj.name` is its __dict__ entry, its slot (`__slots__`), or the class's attribute, which is
what we read; and when none has it, the class's `__getattr__(obj, name)`, inlined, if it
defines one ([Note: the lookup a plain object gets]).

[Note: the lookup a plain object gets]
CPython's `object.__getattribute__` looks `name` up in this order, and so do we, guarding each
step whose answer the trace used:

    a data descriptor on the class   a property: its getter, inlined   L['o'].__class__.p is ...
                                     a slot: the value in it            L['o'].__class__.k is ...
    the instance's __dict__          its value                          wrapped, guarded by kind
    the class's attribute            a method, bound; else its value    ID_MATCH / by value
    nothing: type(o).__getattr__     inlined with the name              'b' not in L['o'].__dict__
                                                                        and on no class of its MRO
"""

from __future__ import annotations

import functools
import inspect
from types import FunctionType, MemberDescriptorType
from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import AttrSource, Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.functions import UserFunctionVariable

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator

_OWN_MODULES = ("minitorch", "tracer", "numpy", "builtins", "functools")


def is_plain_object(value: Any) -> bool:
    """Is `value` an instance of a user class with default attribute lookup?"""
    cls = type(value)
    module = getattr(cls, "__module__", "") or ""
    if type(cls) is not type or module.split(".")[0] in _OWN_MODULES:
        return False
    has_dict = isinstance(getattr(value, "__dict__", None), dict)
    if not has_dict and not hasattr(cls, "__slots__"):
        return False
    return (cls.__getattribute__ is object.__getattribute__
            and cls.__setattr__ is object.__setattr__)


def instance_dict(value: Any) -> dict:
    """The instance's own attributes: empty for an object with only slots."""
    return getattr(value, "__dict__", None) or {}


def is_data_descriptor(value: Any) -> bool:
    """A class attribute that wins over the instance's __dict__ (a property, a slot)."""
    return hasattr(type(value), "__set__") or hasattr(type(value), "__delete__")


_MISSING = object()


class UserObjectVariable(VariableTracker):
    """An instance of a user class, read from the frame (it always has a source)."""

    def __init__(self, value: Any, source: Source) -> None:
        super().__init__(source)
        self.value = value

    def python_type(self) -> type:
        return type(self.value)

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        from tracer.dynamo.variables.builder import wrap

        stored = tx.output.side_effects.load_attr(self, name)
        if stored is not None:  # set earlier in this trace: that value, not the real one
            return stored
        source = AttrSource(self.source, name)
        static = inspect.getattr_static(type(self.value), name, _MISSING)
        own = instance_dict(self.value)
        if isinstance(static, MemberDescriptorType):  # a slot ([Note: the lookup ...])
            return self._slot(tx, name, source)
        if name in own and not is_data_descriptor(static):  # Python's order
            return wrap(tx, own[name], source)
        if static is _MISSING:
            return self._getattr_hook(tx, name)
        if isinstance(static, FunctionType):  # a method: inlined with self when called
            return method_of(tx, self, name, static)
        if isinstance(static, property) and isinstance(static.fget, FunctionType):
            return property_of(tx, self, name, static)
        if hasattr(type(static), "__get__"):
            raise Unsupported(f"attribute {name!r} of {self.describe()} is a "
                              f"{type(static).__name__} (descriptors are not traced)")
        return wrap(tx, static, source)  # a class attribute: guarded by value

    def _slot(self, tx: InstructionTranslator, name: str, source: AttrSource) -> VariableTracker:
        """`obj.k` of a class with `__slots__ = ("k",)`: the value in the slot, while the
        class's descriptor for it is the same (`Cls.k = 5` replaces it)."""
        from tracer.dynamo.variables.builder import wrap

        tx.output.add_guard(AttrSource(AttrSource(self.source, "__class__"), name), "ID_MATCH")
        try:
            value = getattr(self.value, name)
        except AttributeError as e:  # an empty slot (or __getattr__'s turn): eager decides
            raise Unsupported(f"the empty slot {name!r} of {self.describe()}") from e
        return wrap(tx, value, source)

    def _getattr_hook(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        """Normal lookup found nothing: `type(obj).__getattr__(obj, name)`, inlined, while
        neither the instance nor a class of its MRO gains `name`."""
        hook = inspect.getattr_static(type(self.value), "__getattr__", None)
        if not isinstance(hook, FunctionType):
            raise Unsupported(f"{self.describe()} has no attribute {name!r}")
        if isinstance(getattr(self.value, "__dict__", None), dict):
            tx.output.add_guard(AttrSource(self.source, name), "NOT_SHADOWED")
        tx.output.add_guard(AttrSource(self.source, name), "NOT_ON_CLASS")
        method = method_of(tx, self, "__getattr__", hook)
        return method.call_function(tx, [constant(name)], {})

    def describe(self) -> str:
        return f"a {type(self.value).__name__} object ({self.source.name()})"


def method_of(tx: InstructionTranslator, obj: VariableTracker, name: str,
              fn: FunctionType) -> UserFunctionVariable:
    """`obj.name`, found on the class as the function `fn`: a method bound to `obj`, inlined
    when called. Guarded as the lookup went: the class's attribute is still `fn` (a patch
    `Model.helper = other` retraces), the instance has no attribute of that name that would
    shadow it (`m.forward = other`), and `fn`'s code and defaults (inline.py). The class
    itself is pinned by the object's own guard (TYPE_MATCH, NN_MODULE)."""
    attribute = guard_method(tx, obj, name)
    return UserFunctionVariable(fn, bound_self=obj, fn_source=attribute)


def guard_method(tx: InstructionTranslator, obj: VariableTracker, name: str) -> AttrSource:
    """Guard a method lookup `obj.name` (see method_of); returns the class attribute's source."""
    attribute = AttrSource(AttrSource(obj.source, "__class__"), name)
    tx.output.add_guard(attribute, "ID_MATCH")
    value = getattr(obj, "value", getattr(obj, "module", None))
    if isinstance(getattr(value, "__dict__", None), dict):  # not an object with only slots
        tx.output.add_guard(AttrSource(obj.source, name), "NOT_SHADOWED")
    return attribute


def property_of(tx: InstructionTranslator, obj: VariableTracker, name: str,
                prop: property) -> VariableTracker:
    """`obj.name` for a property of the class: its getter, inlined now. A property is a data
    descriptor (the instance cannot shadow it) and its fget cannot be reassigned, so the
    class attribute's identity pins the getter."""
    attribute = AttrSource(AttrSource(obj.source, "__class__"), name)
    tx.output.add_guard(attribute, "ID_MATCH")
    getter = UserFunctionVariable(prop.fget, inline=True,
                                  fn_source=AttrSource(attribute, "fget"))
    return getter.call_function(tx, [obj], {})


class PartialVariable(VariableTracker):
    """A functools.partial read from the frame: calling it calls `func` with its arguments."""

    def __init__(self, value: functools.partial, source: Source) -> None:
        super().__init__(source)
        self.value = value

    def python_type(self) -> type:
        return functools.partial

    def call_function(
        self, tx: InstructionTranslator, args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        from tracer.dynamo.variables.builder import wrap

        p, source = self.value, self.source
        func = wrap(tx, p.func, AttrSource(source, "func"))  # a function: ID_MATCH
        bound = wrap(tx, p.args, AttrSource(source, "args"))
        keywords = wrap(tx, p.keywords, AttrSource(source, "keywords"))
        if not hasattr(keywords, "entries"):
            raise Unsupported(f"the keywords of {self.describe()}")
        return func.call_function(tx, [*bound.items, *args], {**keywords.entries, **kwargs})

    def describe(self) -> str:
        return f"the partial of {getattr(self.value.func, '__qualname__', '?')} " \
               f"({self.source.name()})"


class FramePartialVariable(VariableTracker):
    """`functools.partial(f, *args, **kwargs)` made in the frame: the function's tracker and
    the arguments' trackers; calling it calls `f` with them first, as partial does."""

    def __init__(self, func: VariableTracker, args: list[VariableTracker],
                 keywords: dict[str, VariableTracker]) -> None:
        super().__init__()
        self.func, self.args, self.keywords = func, args, keywords

    def python_type(self) -> type:
        return functools.partial

    def call_function(
        self, tx: InstructionTranslator, args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        return self.func.call_function(tx, [*self.args, *args], {**self.keywords, **kwargs})

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        from tracer.dynamo.variables.dicts import ConstDictVariable
        from tracer.dynamo.variables.tuples import TupleVariable

        if name == "func":
            return self.func
        if name == "args":
            return TupleVariable(list(self.args))
        if name == "keywords":
            return ConstDictVariable(dict(self.keywords))
        return super().var_getattr(tx, name)

    def describe(self) -> str:
        return f"a partial of {self.func.describe()} made in the frame"
