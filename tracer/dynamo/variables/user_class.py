"""User classes, and the objects the frame makes of them: `V(x)` traced, no object made.

    class V:                             V           UserClassVariable  G['V'] is ___V  ID_MATCH
        def __init__(self, x):           v = V(x)    NewObjectVariable  V.__init__ inlined
            self.x = x                                 attrs {'x': %x}
        def double(self):                v.double()  V.double inlined with self = v
            return self.x * 2
    class W(V):                          W(x)        W.__init__ inlined; in it,
        def __init__(self, x):             super()   SuperVariable(V's MRO after W, self)
            super().__init__(x)            .__init__ V.__init__, G['W'].__mro__[1].__init__ ID_MATCH
    return v                             rebuilt:    ___new_object(G['V'], {'x': graph_out[0]})
    class C: ...   (in the frame)        LOAD_BUILD_CLASS: the class, made while tracing

[Note: a new object is its attributes]
An object made in the frame exists only as its tracker while tracing: `self.x = x` in the
inlined __init__ sets an entry of `attrs` (nothing is replayed: no one else can see the
object yet), and `v.x` reads it back, in CPython's lookup order (a data descriptor of the
class, then the instance's attributes, then the class's; then `__getattr__`). If the object
outlives the graph (returned, stored in the caller's list, live at a graph break) the
transformed code makes it then, without running __init__ again: `object.__new__(V)` and its
attributes set one by one (`___new_object`); one object held in two places is made once.

A class qualifies when making one is only `object.__new__` then `__init__` (no `__new__` or
metaclass of its own, no builtin base but object, default attribute access) and it is not an
nn.Module (those are the frame's, NNModuleVariable). minitorch's own classes are opaque,
except the distributions, which are written as user code would be.

NOTE: a class statement in the frame (LOAD_BUILD_CLASS) runs its body while tracing, and the
trace reads that class; the compiled code makes the class again, on each call, only if it
outlives the graph (a class or object returned, live at a break), so eager's "a new class
each call" holds wherever it can be seen. So a body is taken only if running it again
changes nothing else: it reads no global (its value would be frozen into the trace), calls
nothing but the decorators staticmethod, classmethod and property, and no base has an
__init_subclass__ (which each class statement runs).
"""

from __future__ import annotations

import builtins
import functools
import inspect
from types import FunctionType, MemberDescriptorType
from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import AttrSource, GetItemSource, Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import ConstantVariable, constant
from tracer.dynamo.variables.functions import UserFunctionVariable

if TYPE_CHECKING:
    from tracer.dynamo.instructions import Instruction
    from tracer.dynamo.symbolic_convert import InstructionTranslator

_OPAQUE_MODULES = ("minitorch", "tracer", "numpy", "builtins", "functools")
_TRACED_MODULES = ("minitorch.distributions",)  # written as a user's classes would be
_MISSING = object()
_DEFAULT_ACCESS = ("__new__", "__getattribute__", "__setattr__", "__delattr__")  # object's
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: made by a class statement (or type())


def is_user_class(value: Any) -> bool:
    """A class a class statement made outside minitorch (or in its distributions), with no
    metaclass."""
    if (
        not isinstance(value, type) or type(value) is not type or not value.__flags__ & _HEAP_TYPE
    ):  # a C type (itertools.groupby): opaque
        return False
    module = getattr(value, "__module__", "") or ""
    if module.split(".")[0] in _OPAQUE_MODULES and not module.startswith(_TRACED_MODULES):
        return False
    return not issubclass(value, BaseException)


def why_not_traced(cls: type) -> str | None:
    """Why `cls(...)` cannot be traced as a new object and its inlined __init__, or None."""
    from minitorch.nn.module import Module

    if issubclass(cls, Module):
        return "an nn.Module made in the compiled function (make it once, outside)"
    if any(k.__module__ == "builtins" for k in cls.__mro__[:-1]):
        return "its class derives from a builtin type"
    if cls.__new__ is not object.__new__:
        return "its class defines __new__"
    if (cls.__getattribute__, cls.__setattr__, cls.__delattr__) != (
        object.__getattribute__,
        object.__setattr__,
        object.__delattr__,
    ):
        return "its class defines its own attribute access"
    init = inspect.getattr_static(cls, "__init__")
    if init is not object.__init__ and not isinstance(init, FunctionType):
        return "its __init__ is not a plain function"
    return None


class UserClassVariable(VariableTracker):
    """A user's class: read from the frame (guarded by identity), or made by the frame."""

    def __init__(
        self,
        cls: type,
        source: Source | None = None,
        made: tuple[Any, list[VariableTracker]] | None = None,
    ) -> None:
        super().__init__(source)
        self.value = cls
        # a class statement of the frame: (a function that makes the class again from its
        # bases, the bases' trackers), for the transformed code (see the NOTE above)
        self.made = made

    def python_type(self) -> type:
        return type(self.value)

    def as_python_constant(self) -> Any:
        return self.value  # `isinstance(v, V)`, `type(v) is V` fold

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        if name in ("__name__", "__qualname__", "__module__"):
            return constant(getattr(self.value, name))
        return class_attribute(tx, self, name, self, on_class=True)

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        reason = why_not_traced(self.value)
        if reason is not None:
            raise Unsupported(f"making a {self.value.__name__} object: {reason}")
        obj = NewObjectVariable(self)
        if self.source is not None:  # making one stays object.__new__, then __init__
            for name in _DEFAULT_ACCESS:
                tx.output.add_guard(AttrSource(self.source, name), "ID_MATCH")
        init = class_attribute(tx, self, "__init__", obj)
        result = init.call_function(tx, args, kwargs)
        if not (isinstance(result, ConstantVariable) and result.value is None):
            raise Unsupported(
                f"{self.value.__name__}.__init__ returned {result.describe()} "
                "(eager raises TypeError)"
            )
        return obj

    def guard_instance_attribute(self, tx: InstructionTranslator, name: str) -> None:
        """An object made in the frame holds `name` itself while the class's attribute of
        that name stays what it was (a property added later would take the reads and
        writes): guarded when the class comes from the frame."""
        if self.source is None:
            return
        found = inspect.getattr_static(self.value, name, _MISSING)
        kind = (
            "CLASS_LACKS"
            if found is _MISSING
            else "CONSTANT_MATCH"
            if type(found) in (bool, int, float, str, type(None))
            else "ID_MATCH"
        )  # (a dataclass's default)
        tx.output.add_guard(AttrSource(self.source, name), kind)

    def describe(self) -> str:
        where = f" ({self.source.name()})" if self.source is not None else " (made in the frame)"
        return f"the class {self.value.__qualname__}{where}"


class NewObjectVariable(VariableTracker):
    """An instance of a user class made in the frame ([Note: a new object is its
    attributes])."""

    def __init__(self, cls: UserClassVariable) -> None:
        super().__init__(None)
        self.cls = cls
        self.attrs: dict[str, VariableTracker] = {}

    def python_type(self) -> type:
        return self.cls.value

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        if name == "__class__":
            return self.cls
        static = inspect.getattr_static(self.cls.value, name, _MISSING)
        if name in self.attrs and (
            isinstance(static, MemberDescriptorType) or not _is_data_descriptor(static)
        ):
            self.cls.guard_instance_attribute(tx, name)
            return self.attrs[name]
        if static is not _MISSING and not isinstance(static, MemberDescriptorType):
            return class_attribute(tx, self.cls, name, self)
        hook = inspect.getattr_static(self.cls.value, "__getattr__", None)
        if isinstance(hook, FunctionType):  # CPython's last resort, with the name
            return class_attribute(tx, self.cls, "__getattr__", self).call_function(
                tx, [constant(name)], {}
            )
        raise Unsupported(
            f"{self.describe()} has no attribute {name!r} (eager raises AttributeError)"
        )

    def store_attr(self, tx: InstructionTranslator, name: str, value: VariableTracker) -> None:
        static = inspect.getattr_static(self.cls.value, name, None)
        if _is_data_descriptor(static) and not isinstance(static, MemberDescriptorType):
            raise Unsupported(
                f"setting {name!r} of {self.describe()}, which its class "
                "defines as a property or descriptor"
            )
        if self.cls.value.__dictoffset__ == 0 and not isinstance(static, MemberDescriptorType):
            raise Unsupported(f"setting {name!r} of {self.describe()}, which has no such slot")
        self.cls.guard_instance_attribute(tx, name)
        self.attrs[name] = value
        tx.output.side_effects.mutated(self)  # nothing to replay: no one else sees it yet

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if inspect.getattr_static(self.cls.value, "__call__", _MISSING) is _MISSING:
            raise Unsupported(f"calling {self.describe()}, which has no __call__")
        return class_attribute(tx, self.cls, "__call__", self).call_function(tx, args, kwargs)

    def describe(self) -> str:
        return f"a {self.cls.value.__name__} object made in the frame"


def _is_data_descriptor(value: Any) -> bool:
    return hasattr(type(value), "__set__") or hasattr(type(value), "__delete__")


def class_attribute(
    tx: InstructionTranslator,
    cls: UserClassVariable,
    name: str,
    obj: VariableTracker,
    after: type | None = None,
    on_class: bool = False,
) -> VariableTracker:
    """`name` looked up on `cls` (past `after` in its MRO, for super()), as seen from `obj`:
    a function is a method bound to `obj` (unless read `on_class`), a property's getter is
    called on it. With a source, the attribute is guarded where it was found:
    `G['V'].double` (ID_MATCH), `G['W'].__mro__[1].__init__` for a super() lookup."""
    from tracer.dynamo.variables.builder import wrap

    mro = cls.value.__mro__
    start = mro.index(after) + 1 if after is not None else 0
    index = next((i for i in range(start, len(mro)) if name in vars(mro[i])), None)
    if index is None:
        raise Unsupported(f"{cls.describe()} has no attribute {name!r}")
    raw = vars(mro[index])[name]
    source = None
    if cls.source is not None:
        owner = (
            cls.source if after is None else GetItemSource(AttrSource(cls.source, "__mro__"), index)
        )
        source = AttrSource(owner, name)
    if raw is object.__init__:  # super().__init__() reaching object
        return ObjectInitVariable()
    if isinstance(raw, staticmethod) and isinstance(raw.__func__, FunctionType):
        raw = raw.__func__  # a plain function, whichever way it is read
    elif isinstance(raw, classmethod) and isinstance(raw.__func__, FunctionType):
        return _bound(tx, raw.__func__, cls, source and AttrSource(source, "__func__"))
    elif isinstance(raw, FunctionType) and not on_class:
        return _bound(tx, raw, obj, source)
    elif isinstance(raw, property) and isinstance(raw.fget, FunctionType) and not on_class:
        return _bound(tx, raw.fget, obj, source and AttrSource(source, "fget")).call_function(
            tx, [], {}
        )
    elif hasattr(type(raw), "__get__") and not isinstance(raw, FunctionType):
        raise Unsupported(
            f"attribute {name!r} of {cls.describe()} is a "
            f"{type(raw).__name__} (descriptors are not traced)"
        )
    return wrap(tx, raw, source)


def _bound(
    tx: InstructionTranslator, fn: FunctionType, self_arg: VariableTracker, source: Source | None
) -> UserFunctionVariable:
    """`fn` bound to `self_arg`, inlined when called; a method that calls zero-argument
    super() gets its `__class__` cell's class (fixed when the class was made)."""
    if source is not None:
        tx.output.add_guard(source, "ID_MATCH")
    closure = None
    if fn.__code__.co_freevars == ("__class__",):
        owner = fn.__closure__[0].cell_contents
        closure = {"__class__": UserClassVariable(owner)}
    elif fn.__code__.co_freevars and source is None:
        raise Unsupported(f"the method {fn.__qualname__} is a closure of a class made in the frame")
    return UserFunctionVariable(fn, bound_self=self_arg, fn_source=source, closure=closure)


class ObjectInitVariable(VariableTracker):
    """`object.__init__` bound to an object, reached by super().__init__(): does nothing."""

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if args or kwargs:
            raise Unsupported("object.__init__() takes no arguments (eager raises TypeError)")
        return constant(None)

    def describe(self) -> str:
        return "object.__init__"


# ---- super() ------------------------------------------------------------------------------


class SuperFunctionVariable(VariableTracker):
    """The builtin `super`: `super()` in a method reads its `__class__` cell and first
    argument, as CPython does; `super(C, obj)` names them."""

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if not args and not kwargs:
            code = tx.frame.code
            if "__class__" not in code.co_freevars or not code.co_argcount:
                raise Unsupported("super() outside a method (eager raises RuntimeError)")
            args = [tx.read_cell("__class__"), tx.read_cell(code.co_varnames[0])]
        if len(args) != 2 or kwargs or not isinstance(args[0], UserClassVariable):
            raise Unsupported("super() with arguments other than (class, object)")
        return SuperVariable(args[0].value, args[1])

    def describe(self) -> str:
        return "the builtin super"


class SuperVariable(VariableTracker):
    """`super()`: attributes found on the object's class after `owner` in its MRO."""

    def __init__(self, owner: type, obj: VariableTracker) -> None:
        super().__init__(None)
        self.owner, self.obj = owner, obj

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        cls = class_of(self.obj)
        if cls is None or self.owner not in cls.value.__mro__:
            raise Unsupported(f"super() of {self.obj.describe()}")
        return class_attribute(tx, cls, name, self.obj, after=self.owner)

    def describe(self) -> str:
        return f"super({self.owner.__qualname__}, {self.obj.describe()})"


def class_of(obj: VariableTracker) -> UserClassVariable | None:
    """The tracker of `type(obj)` for an object whose class tracing knows (pinned by its
    guard, or made in the frame)."""
    from tracer.dynamo.variables.nn_module import NNModuleVariable
    from tracer.dynamo.variables.user_object import UserObjectVariable

    if isinstance(obj, NewObjectVariable):
        return obj.cls
    if isinstance(obj, (UserObjectVariable, NNModuleVariable)):
        return UserClassVariable(obj.python_type(), AttrSource(obj.source, "__class__"))
    return None


def load_super_attr(self: InstructionTranslator, inst: Instruction) -> None:
    """3.12+ LOAD_SUPER_ATTR: `super().name` in one instruction, from (super, class, self)
    on the stack; the low bit of its argument asks for a method (pushed with a NULL)."""
    from tracer.dynamo import compat
    from tracer.dynamo.variables.base import NULL

    obj = self.pop()
    cls = self.pop()
    fn = self.pop()
    attribute = self.call(fn, [cls, obj]).var_getattr(self, inst.argval)
    if inst.arg & 1:
        self.push(*compat.with_null(attribute, NULL))
    else:
        self.push(attribute)


# ---- class statements in the frame ----------------------------------------------------------

_BODY_OPS = {
    "RESUME",
    "NOP",
    "LOAD_NAME",
    "STORE_NAME",
    "LOAD_CONST",
    "MAKE_FUNCTION",
    "PUSH_NULL",
    "SET_FUNCTION_ATTRIBUTE",
    "MAKE_CELL",
    "LOAD_CLOSURE",
    "BUILD_TUPLE",
    "PRECALL",
    "CALL",
    "RETURN_VALUE",
    "RETURN_CONST",
    "COPY",
    "CACHE",
    "POP_TOP",
    "STORE_DEREF",
    "LOAD_FAST",  # 3.13: the `__class__` cell, as LOAD_CLOSURE before
    "BUILD_CONST_KEY_MAP",
    "BUILD_MAP",  # a method's keyword-only defaults
}
_DECORATORS = {"staticmethod", "classmethod", "property"}


class BuildClassVariable(VariableTracker):
    """LOAD_BUILD_CLASS's `__build_class__`: called with the class body's function, the
    name and the bases, it makes the class now (see the NOTE in the module docstring)."""

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        from tracer.dynamo.variables.nested import NestedUserFunctionVariable

        if kwargs or len(args) < 2 or not isinstance(args[0], NestedUserFunctionVariable):
            raise Unsupported("a class statement with keywords (metaclass=...)")
        body, name = args[0], args[1].as_python_constant()
        bases = [b.as_python_constant() if b.is_python_constant() else None for b in args[2:]]
        if any(not isinstance(b, type) for b in bases):
            raise Unsupported(f"class {name}: a base that is not a class tracing knows")
        _check_body(body.code, body.maker.frame.f_globals, name)
        if any("__init_subclass__" in vars(k) for b in bases for k in b.__mro__[:-1]):
            raise Unsupported(
                f"class {name}: a base has __init_subclass__, which each class statement runs"
            )
        make = functools.partial(build_class, body.code, body.maker.frame.f_globals, name)
        cls = make(*bases)
        if not is_user_class(cls):
            raise Unsupported(f"class {name}: derives from a class tracing does not look into")
        return UserClassVariable(cls, made=(make, list(args[2:])))

    def describe(self) -> str:
        return "__build_class__"


def _check_body(code: Any, f_globals: dict, name: str) -> None:
    """Refuse a class body whose result could differ on another call (see the NOTE)."""
    from tracer.dynamo.instructions import read_instructions

    if code.co_freevars:
        raise Unsupported(
            f"class {name}: its body reads the function's locals ({', '.join(code.co_freevars)})"
        )
    instructions = read_instructions(code)
    calls = any(inst.opname == "CALL" for inst in instructions)
    for inst in instructions:
        if inst.opname not in _BODY_OPS:
            raise Unsupported(
                f"class {name}: its body runs {inst.opname} (only defs, "
                "constants and the decorators staticmethod, classmethod and "
                "property are taken)"
            )
        # a builtin (an annotation's `int`) reads the same each time; with a call in the
        # body, only a decorator may be what is called
        allowed = _DECORATORS if calls else vars(builtins)
        if (
            inst.opname == "LOAD_NAME"
            and inst.argval != "__name__"
            and (inst.argval in f_globals or inst.argval not in allowed)
        ):
            raise Unsupported(f"class {name}: its body reads {inst.argval!r}")


def load_build_class(self: InstructionTranslator, inst: Instruction) -> None:
    self.push(BuildClassVariable())


def build_class(code: Any, f_globals: dict, name: str, *bases: type) -> type:
    """What a class statement does: run the body, make the class (again for each call of
    the compiled code that needs it: one that escapes the frame is a new class each time)."""
    return builtins.__build_class__(FunctionType(code, f_globals, name), name, *bases)


def new_object(cls: type, attrs: dict[str, Any]) -> Any:
    """The transformed code's `___new_object`: an object made in the frame, made again from
    its attributes ([Note: a new object is its attributes])."""
    obj = object.__new__(cls)
    for name, value in attrs.items():
        object.__setattr__(obj, name, value)
    return obj
