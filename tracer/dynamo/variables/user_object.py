"""Plain Python objects of the frame, and functools' partial and lru_cache objects: looked
into, not held.

    SCALER.apply(x)        UserObjectVariable    inline Scaler.apply(SCALER, x)
      self.k  (3.0)          wrapped                G['SCALER'].k == 3.0        CONSTANT_MATCH
      Scaler.apply           the class's function   G['SCALER'].__class__.apply ID_MATCH
    obj.count += 1         recorded (side_effects.py), replayed after the graph runs
    scaled(x)              PartialVariable       inline helper(x, k=4)
      scaled.func            wrapped                G['scaled'].func            ID_MATCH
      scaled.args/keywords   wrapped                their length/keys and each value's guard
    partial(F.relu, x)     FramePartialVariable  made in the frame: its trackers
    v + 1, 2.0 * v, -v     inline V.__add__ &c.  [Note: operators on objects call their dunders]
    cached(3)  (lru_cache) LruCacheVariable      read: G['cached'](3) == 6  [Note: a cached ...]

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
import operator
from dataclasses import dataclass
from types import FunctionType, MemberDescriptorType
from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import AttrSource, Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.functions import UserFunctionVariable
from tracer.dynamo.variables.user_class import is_user_class

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator


def is_plain_object(value: Any) -> bool:
    """Is `value` an instance of a user class with default attribute lookup?"""
    cls = type(value)
    if not is_user_class(cls):  # (minitorch's classes are not, but for its distributions)
        return False
    has_dict = isinstance(getattr(value, "__dict__", None), dict)
    if not has_dict and not hasattr(cls, "__slots__"):
        return False
    return cls.__getattribute__ is object.__getattribute__ and cls.__setattr__ is object.__setattr__


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
            raise Unsupported(
                f"attribute {name!r} of {self.describe()} is a "
                f"{type(static).__name__} (descriptors are not traced)"
            )
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


def method_of(
    tx: InstructionTranslator, obj: VariableTracker, name: str, fn: FunctionType
) -> UserFunctionVariable:
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


def property_of(
    tx: InstructionTranslator, obj: VariableTracker, name: str, prop: property
) -> VariableTracker:
    """`obj.name` for a property of the class: its getter, inlined now. A property is a data
    descriptor (the instance cannot shadow it) and its fget cannot be reassigned, so the
    class attribute's identity pins the getter."""
    attribute = AttrSource(AttrSource(obj.source, "__class__"), name)
    tx.output.add_guard(attribute, "ID_MATCH")
    getter = UserFunctionVariable(prop.fget, inline=True, fn_source=AttrSource(attribute, "fget"))
    return getter.call_function(tx, [obj], {})


class PartialVariable(VariableTracker):
    """A functools.partial read from the frame: calling it calls `func` with its arguments."""

    def __init__(self, value: functools.partial, source: Source) -> None:
        super().__init__(source)
        self.value = value

    def python_type(self) -> type:
        return functools.partial

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
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
        return (
            f"the partial of {getattr(self.value.func, '__qualname__', '?')} ({self.source.name()})"
        )


class FramePartialVariable(VariableTracker):
    """`functools.partial(f, *args, **kwargs)` made in the frame: the function's tracker and
    the arguments' trackers; calling it calls `f` with them first, as partial does."""

    def __init__(
        self,
        func: VariableTracker,
        args: list[VariableTracker],
        keywords: dict[str, VariableTracker],
    ) -> None:
        super().__init__()
        self.func, self.args, self.keywords = func, args, keywords

    def python_type(self) -> type:
        return functools.partial

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
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


# ---- operators on plain objects ----------------------------------------------------------------
#
# [Note: operators on objects call their dunders]
# `a + b` is CPython's binary protocol: type(a).__add__(a, b), and if that is missing or
# returns NotImplemented, type(b).__radd__(b, a); a subclass of type(a) that overrides the
# reflected method goes first, and operands of one type try only __add__. Constants and
# tensors never know a user's class here (a number's or a Tensor's __add__ returns
# NotImplemented for it), so with a plain object on either side that is the object's
# dunders, inlined, each looked up on the type and guarded there. `a += b` tries __iadd__
# first; `-a` is __neg__. A class deriving from a builtin (a float subclass) is refused:
# the builtin's own operators may accept it.

_BINARY_DUNDERS = {
    operator.add: ("__add__", "__radd__"),
    operator.sub: ("__sub__", "__rsub__"),
    operator.mul: ("__mul__", "__rmul__"),
    operator.truediv: ("__truediv__", "__rtruediv__"),
    operator.floordiv: ("__floordiv__", "__rfloordiv__"),
    operator.mod: ("__mod__", "__rmod__"),
    operator.pow: ("__pow__", "__rpow__"),
    operator.matmul: ("__matmul__", "__rmatmul__"),
    operator.and_: ("__and__", "__rand__"),
    operator.or_: ("__or__", "__ror__"),
    operator.xor: ("__xor__", "__rxor__"),
}
_UNARY_DUNDERS = {
    operator.neg: "__neg__",
    operator.pos: "__pos__",
    operator.invert: "__invert__",
    abs: "__abs__",
}
_INPLACE_DUNDERS = {
    operator.iadd: (operator.add, "__iadd__"),
    operator.isub: (operator.sub, "__isub__"),
    operator.imul: (operator.mul, "__imul__"),
    operator.itruediv: (operator.truediv, "__itruediv__"),
}

OBJECT_OPERATORS = frozenset({*_BINARY_DUNDERS, *_UNARY_DUNDERS, *_INPLACE_DUNDERS})


def object_trackers() -> tuple[type, ...]:
    """The trackers of user objects whose operators call their class's dunders: the
    frame's (here) and the ones it makes (user_class.py)."""
    from tracer.dynamo.variables.user_class import NewObjectVariable

    return UserObjectVariable, NewObjectVariable


def operator_on_objects(
    tx: InstructionTranslator, fn: Any, args: list[VariableTracker]
) -> VariableTracker:
    """`fn(*args)` for an operator with a plain object among its operands ([Note: operators
    on objects call their dunders])."""
    for a in args:  # a float or tuple subclass: the builtin's own operators may accept it
        if isinstance(a, object_trackers()) and any(
            k.__module__ == "builtins" for k in a.python_type().__mro__[:-1]
        ):
            raise Unsupported(
                f"an operator on {a.describe()}, whose class derives from a builtin type"
            )
    if fn in _UNARY_DUNDERS and len(args) == 1:
        result = _call_dunder(tx, args[0], _UNARY_DUNDERS[fn], [])
        if result is not None:
            return result
    elif fn in _INPLACE_DUNDERS and len(args) == 2:
        plain, dunder = _INPLACE_DUNDERS[fn]
        result = _call_dunder(tx, args[0], dunder, [args[1]])
        return result if result is not None else operator_on_objects(tx, plain, args)
    elif fn in _BINARY_DUNDERS and len(args) == 2:
        return _binary(tx, fn, *args)
    described = ", ".join(a.describe() for a in args)
    raise Unsupported(f"operator {getattr(fn, '__name__', fn)} on {described}")


def _binary(
    tx: InstructionTranslator, fn: Any, left: VariableTracker, right: VariableTracker
) -> VariableTracker:
    forward, reflected = _BINARY_DUNDERS[fn]
    tries = [(left, forward, right), (right, reflected, left)]
    lt, rt = left.python_type(), right.python_type()
    if rt is lt:
        tries = tries[:1]  # one type: its reflected method is never tried
    elif issubclass(rt, lt) and _overrides(rt, lt, reflected):
        tries.reverse()  # the subclass's reflected method first
    for obj, name, other in tries:
        if not isinstance(obj, object_trackers()):
            continue  # a constant or a tensor: NotImplemented for a user's class
        result = _call_dunder(tx, obj, name, [other])
        if result is not None:
            return result
    raise Unsupported(
        f"unsupported operand types for {getattr(fn, '__name__', fn)}: "
        f"{left.describe()} and {right.describe()} (eager raises TypeError)"
    )


def _overrides(sub: type, base: type, name: str) -> bool:
    return getattr(sub, name, None) is not getattr(base, name, None)


def _call_dunder(
    tx: InstructionTranslator, obj: VariableTracker, name: str, args: list[VariableTracker]
) -> VariableTracker | None:
    """type(obj).name(obj, *args), inlined; None if the class has no such method or it
    returned NotImplemented."""
    from tracer.dynamo.variables.opaque import OpaqueVariable
    from tracer.dynamo.variables.user_class import NewObjectVariable, class_attribute

    if isinstance(obj, NewObjectVariable):  # made in the frame: its class is known
        if inspect.getattr_static(obj.python_type(), name, _MISSING) is _MISSING:
            return None
        result = class_attribute(tx, obj.cls, name, obj).call_function(tx, args, {})
        return (
            None
            if isinstance(result, OpaqueVariable) and result.value is NotImplemented
            else result
        )
    if not isinstance(obj, UserObjectVariable):
        return None
    static = inspect.getattr_static(type(obj.value), name, _MISSING)
    attribute = AttrSource(AttrSource(obj.source, "__class__"), name)
    if static is _MISSING:
        tx.output.add_guard(AttrSource(obj.source, name), "NOT_ON_CLASS")
        return None
    if not isinstance(static, FunctionType):
        raise Unsupported(f"{name} of {obj.describe()} is not a plain function")
    tx.output.add_guard(attribute, "ID_MATCH")  # dunders are looked up on the type only
    method = UserFunctionVariable(static, bound_self=obj, fn_source=attribute)
    result = method.call_function(tx, args, {})
    if isinstance(result, OpaqueVariable) and result.value is NotImplemented:
        return None
    return result


@dataclass(frozen=True)
class CachedCallSource(Source):
    """The result of a call of an lru_cache'd function with constant arguments: G['f'](3).

    [Note: a cached call is read, not inlined]
    `@functools.lru_cache def f(n)` returns, for arguments it has seen, the object it
    computed the first time, even if what f reads has changed since. Inlining f's body (what
    TorchDynamo does, with a warning) would compute afresh: another answer whenever the cache
    holds a stale one. So a call with constant arguments is *read*, like an attribute: while
    tracing it runs for real (a cache hit, or the very call eager would make) and its result
    is wrapped under this source, so its guard (`G['f'](3) == 6`) and, for a tensor, its
    reload as a graph input ask the cache again on every call (a hit: a dict lookup). The
    result is the cache's own object, as in eager. Other arguments (a tensor) run the call
    for real at a graph break.
    """

    base: Source  # the cached function
    args: tuple  # constants whose repr is themselves (dicts.is_key)
    kwargs: tuple  # (name, constant) pairs, in the call's order

    def name(self) -> str:
        arguments = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        return f"{self.base.name()}({', '.join(arguments)})"


class LruCacheVariable(VariableTracker):
    """A function wrapped by functools.lru_cache or functools.cache, read from the frame
    ([Note: a cached call is read, not inlined])."""

    def __init__(self, fn: Any, source: Source) -> None:
        super().__init__(source)
        self.fn = fn  # the wrapper: calling it asks the cache

    def python_type(self) -> type:
        return type(self.fn)

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        from tracer.dynamo.variables.builder import wrap
        from tracer.dynamo.variables.dicts import is_key

        if not all(
            a.is_python_constant() and is_key(a.as_python_constant())
            for a in [*args, *kwargs.values()]
        ):
            raise Unsupported(
                f"calling {self.describe()} with arguments that are not "
                "constants (the cached call runs for real)"
            )
        values = tuple(a.as_python_constant() for a in args)
        keywords = tuple((k, v.as_python_constant()) for k, v in kwargs.items())
        try:
            result = self.fn(*values, **dict(keywords))
        except Exception as e:  # eager raises it again, at the user's line
            raise Unsupported(f"{self.describe()} raised {type(e).__name__}: {e}") from e
        return wrap(tx, result, CachedCallSource(self.source, values, keywords))

    def describe(self) -> str:
        return f"the cached function {getattr(self.fn, '__qualname__', '?')}"
