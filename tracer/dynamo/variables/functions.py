"""Callables: the ones that go into the graph, the ones that fold, the ones we cannot trace yet.

MinitorchFunctionVariable  minitorch.sin(x)       -> call_function[target=minitorch.sin]
BuiltinVariable            operator.add(x, 1)     -> call_function[target=operator.add]
                           math.sqrt(4.0), len(s) -> folded to a constant
                           sum(xs) of tensors     -> one operator.add node per item
                           x += y on a tensor     -> recorded functionally (inplace.py)
UserFunctionVariable       self.fc(x), x.T        -> inlined (inline.py): its ops are recorded
                           helper(x)              -> Unsupported (not inlined yet)
"""

from __future__ import annotations

import functools
import inspect
import operator
from typing import TYPE_CHECKING, Any

from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.container_calls import (
    CONTAINER_BUILTINS,
    GETTERS,
    container_call,
    holds_mutable,
    shares_mutable,
)
from tracer.dynamo.variables.factories import check_factory_call, is_factory
from tracer.dynamo.variables.introspection import introspection
from tracer.dynamo.variables.tensor import TensorVariable
from tracer.dynamo.variables.tuples import TupleVariable

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator

# Operators that compute a new value from their operands: on tensors they become graph nodes.
GRAPH_OPERATORS = frozenset(
    {
        operator.add,
        operator.sub,
        operator.mul,
        operator.truediv,
        operator.floordiv,
        operator.mod,
        operator.pow,
        operator.matmul,
        operator.and_,
        operator.or_,
        operator.xor,
        operator.lshift,
        operator.rshift,
        operator.neg,
        operator.pos,
        operator.invert,
        operator.getitem,
        operator.lt,
        operator.le,
        operator.eq,
        operator.ne,
        operator.gt,
        operator.ge,
    }
)

# `a += b` calls type(a).__iadd__ if it exists (mutation) and falls back to `a = a + b`.
INPLACE_OPERATORS = {
    operator.iadd: (operator.add, "__iadd__"),
    operator.isub: (operator.sub, "__isub__"),
    operator.imul: (operator.mul, "__imul__"),
    operator.itruediv: (operator.truediv, "__itruediv__"),
    operator.ifloordiv: (operator.floordiv, "__ifloordiv__"),
    operator.imod: (operator.mod, "__imod__"),
    operator.ipow: (operator.pow, "__ipow__"),
    operator.imatmul: (operator.matmul, "__imatmul__"),
    operator.iand: (operator.and_, "__iand__"),
    operator.ior: (operator.or_, "__ior__"),
    operator.ixor: (operator.xor, "__ixor__"),
    operator.ilshift: (operator.lshift, "__ilshift__"),
    operator.irshift: (operator.rshift, "__irshift__"),
}


def _qualname(fn: Any) -> str:
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
    if module in (None, "builtins"):
        return name
    return f"{module.lstrip('_')}.{name}"  # '_operator' -> 'operator'


class _FunctionVariable(VariableTracker):
    """Shared by the trackers of callables: the function itself, and its type."""

    def __init__(self, fn: Any, source: Source | None = None) -> None:
        super().__init__(source)
        self.fn = fn

    def python_type(self) -> type:
        return type(self.fn)


@functools.cache
def _signature_with_inplace(fn: Any) -> inspect.Signature | None:
    """fn's signature if it has an `inplace` parameter (relu, leaky_relu, dropout), else None."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # an op of the table: no Python signature
        return None
    return signature if "inplace" in signature.parameters else None


def _in_place_call(
    fn: Any, args: list[VariableTracker], kwargs: dict[str, VariableTracker]
) -> inspect.BoundArguments | None:
    """The call's arguments when it asks for `inplace` as a constant True (by keyword or by
    position: F.leaky_relu(x, 0.2, True)), else None."""
    signature = _signature_with_inplace(fn)
    if signature is None:
        return None
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return None  # recorded as it is: tracing it raises eager's error
    inplace = bound.arguments.get("inplace")
    if inplace is None or not inplace.is_python_constant() or not inplace.as_python_constant():
        return None
    return bound


class MinitorchFunctionVariable(_FunctionVariable):
    """A function of minitorch's functional API (or an op-table op): recorded in the graph."""

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        bound = _in_place_call(self.fn, args, kwargs)
        if bound is not None:
            return self._in_place(tx, bound)
        if is_factory(self.fn):
            check_factory_call(tx, self.fn, args, kwargs)
        from tracer.dynamo.variables.inplace import writes_arguments

        if writes_arguments(self.fn, args, kwargs):  # F.batch_norm while training: its writes
            return UserFunctionVariable(self.fn, inline=True).call_function(tx, args, kwargs)
        return tx.output.record_call("call_function", self.fn, args, kwargs)

    def _in_place(
        self, tx: InstructionTranslator, bound: inspect.BoundArguments
    ) -> VariableTracker:
        """F.relu(x, inplace=True): what eager computes in place, recorded functionally: the
        in-place method eager calls, or (None in INPLACE_FUNCTIONS) the function itself."""
        from tracer.dynamo.variables.inplace import INPLACE_FUNCTIONS, functionalize

        bound.arguments["inplace"] = constant(False)
        target, *others = bound.arguments.values()
        if self.fn not in INPLACE_FUNCTIONS or not isinstance(target, TensorVariable):
            raise Unsupported(f"{self.describe()}(inplace=True) with these arguments")
        what = f"{self.describe()}(inplace=True)"
        method, method_kwargs = INPLACE_FUNCTIONS[self.fn]
        if method is None:
            return functionalize(
                tx,
                target,
                what,
                lambda: tx.output.record_call(
                    "call_function", self.fn, list(bound.args), bound.kwargs
                ),
            )
        if len(others) != 1:  # a method's own arguments, none of the function's
            raise Unsupported(f"{self.describe()}(inplace=True) with these arguments")
        method_args = {k: constant(v) for k, v in method_kwargs.items()}
        return functionalize(
            tx,
            target,
            what,
            lambda: tx.output.record_call("call_method", method, [target], method_args),
        )

    def describe(self) -> str:
        return f"minitorch.{self.fn.__name__}" if hasattr(self.fn, "__name__") else repr(self.fn)


class BuiltinVariable(_FunctionVariable):
    """A builtin, `operator` or `math` function, or a method of a constant.

    With constant arguments it runs for real and the result is a constant (`math.sqrt(d)`,
    `len(x.shape)`); an operator with a tensor operand becomes a graph node; a few functions
    know how to handle tuples of trackers (`shape[1:]`, `shape + (1,)`, `len(x)`).
    """

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        introspect = introspection(self.fn)
        if introspect is not None:  # type(v), callable(v), hasattr(x, n), partial(f, ...)
            result = introspect(tx, args, kwargs)
            if result is not None:
                return result
        if self.fn in (enumerate, zip):  # iterators: folding would hide their items
            from tracer.dynamo.variables.iterators import enumerate_or_zip

            return enumerate_or_zip(tx, self.fn, args, dict(kwargs))
        if (
            self.fn in CONTAINER_BUILTINS
            or isinstance(self.fn, GETTERS)
            or any(
                isinstance(a, TupleVariable) or holds_mutable(a) for a in [*args, *kwargs.values()]
            )
        ):
            result = container_call(tx, self.fn, args, kwargs)  # on the trackers themselves
            if result is not None:
                return result
        if _all_constants(args, kwargs):
            return self._fold(self.fn, args, kwargs)
        if self.fn is getattr and len(args) == 2 and not kwargs:  # fx's getattr(self.layers, '0')
            return args[0].var_getattr(tx, args[1].as_python_constant())
        if (
            self.fn is isinstance
            and len(args) == 2
            and isinstance(args[1].source, Source)
            and isinstance(args[0], (TensorVariable, TupleVariable))
        ):
            # Their guards (TENSOR_MATCH, TUPLE_LENGTH) pin the type, and an ID_MATCH on the
            # class argument pins the class, so the answer is fixed.
            classes = getattr(args[1], "value", None)
            if isinstance(classes, type):
                tx.output.add_guard(args[1].source, "ID_MATCH")
                return constant(issubclass(args[0].python_type(), classes))
        if self.fn is sum and not kwargs and len(args) in (1, 2):
            return _sum(tx, args)
        if self.fn in (tuple, list) and not kwargs and len(args) == 1:  # a new container
            from tracer.dynamo.variables.iterators import sequence_items
            from tracer.dynamo.variables.tuples import ListVariable

            items = sequence_items(tx, args[0])
            return TupleVariable(items) if self.fn is tuple else ListVariable(items)
        if self.fn in INPLACE_OPERATORS and _mutates_tensor(self.fn, args):
            from tracer.dynamo.variables.inplace import functionalize

            plain, dunder = INPLACE_OPERATORS[self.fn]
            return functionalize(
                tx,
                args[0],
                dunder,
                lambda: tx.output.record_call("call_function", plain, args, kwargs),
            )
        if _on_user_object(self.fn, args):  # v + 1, 1.0 + v, -v: the class's dunders
            from tracer.dynamo.variables.user_object import operator_on_objects

            return operator_on_objects(tx, self.fn, args)
        fn = INPLACE_OPERATORS[self.fn][0] if self.fn in INPLACE_OPERATORS else self.fn
        if fn is operator.getitem and isinstance(args[0], TupleVariable):
            return args[0].getitem(args[1].as_python_constant())
        if fn is operator.add and all(
            isinstance(a, TupleVariable) and a.python_type() is not dict for a in args
        ):
            return TupleVariable(args[0].items + args[1].items)
        if (
            fn is operator.getitem
            and _is_module_container(args[0])
            and args[1].is_python_constant()
        ):
            return args[0].getitem(tx, args[1].as_python_constant())
        if fn is len and len(args) == 1 and _is_module_container(args[0]):
            return constant(len(args[0].unpack_sequence(tx)))
        if fn is len and len(args) == 1 and isinstance(args[0], TupleVariable):
            return constant(len(args[0].items))
        if fn is len and len(args) == 1 and isinstance(args[0], TensorVariable):
            return constant(_tensor_len(args[0]))
        if fn in GRAPH_OPERATORS and any(isinstance(a, TensorVariable) for a in args):
            return tx.output.record_call("call_function", fn, args, kwargs)
        described = ", ".join(a.describe() for a in args)
        raise Unsupported(
            f"{_qualname(fn)}() on {described} (only constants fold here; "
            "tensor math goes through minitorch functions and operators)"
        )

    def as_python_constant(self) -> Any:
        """A builtin is a known, immutable value: `isinstance(v, int)` folds."""
        return self.fn

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        """`itertools.chain.from_iterable`, `dict.fromkeys`: a class's function, called later."""
        attr = getattr(self.fn, name, None)
        if (
            isinstance(self.fn, type)
            and callable(attr)
            and (attr in CONTAINER_BUILTINS or self.fn in (dict, str, int, float, tuple))
        ):
            return BuiltinVariable(attr)
        if name in ("__name__", "__qualname__", "__module__"):  # type(v).__name__
            return constant(attr)
        return super().var_getattr(tx, name)

    def _fold(self, fn: Any, args: list[VariableTracker], kwargs: dict[str, VariableTracker]):
        values = [a.as_python_constant() for a in args]
        kw_values = {k: v.as_python_constant() for k, v in kwargs.items()}
        try:
            result = fn(*values, **kw_values)
        except Exception as e:  # the eager run will raise it again, at the user's line
            raise Unsupported(f"{_qualname(fn)}() raised {type(e).__name__}: {e}") from e
        if shares_mutable(result, [*values, *kw_values.values()]):  # a copy would not alias
            raise Unsupported(
                f"{_qualname(fn)}() returned a list, dict or set of its "
                "arguments (tracing holds copies of them)"
            )
        return constant(result)

    def describe(self) -> str:
        return f"the function {_qualname(self.fn)}"


class UserFunctionVariable(_FunctionVariable):
    """A Python function that is not a minitorch op.

    Methods of nn.Modules and plain objects (`bound_self` set), tensor property getters and
    helpers read from the frame (`inline`) are inlined (inline.py); any other call of one is
    Unsupported.
    """

    def __init__(
        self,
        fn: Any,
        source: Source | None = None,
        bound_self: VariableTracker | None = None,
        inline: bool = False,
        fn_source: Source | None = None,
        closure: dict[str, VariableTracker] | None = None,
    ) -> None:
        super().__init__(fn, source)
        self.bound_self = bound_self  # the module of `self.fc.forward`, passed first
        self.inline = inline or bound_self is not None
        # Where the function object is read from, for the guards on its code and defaults
        # ([Note: what a function object holds]): its own source, or a method's class
        # attribute (`L['self'].__class__.forward`: not the source of the bound method).
        self.fn_source = fn_source if fn_source is not None else source
        self.closure = closure  # a method's `__class__` cell, for super() (user_class.py)

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        from tracer.dynamo.variables.inline import inline_call

        if not self.inline:
            raise Unsupported(
                f"call to the Python function {_qualname(self.fn)} (it is not a "
                "minitorch op, and inlining Python functions is not supported "
                "yet)"
            )
        if self.bound_self is not None:
            args = [self.bound_self, *args]
        return inline_call(tx, self.fn, args, kwargs, closure=self.closure, source=self.fn_source)

    def describe(self) -> str:
        return f"the function {_qualname(self.fn)}"


def _on_user_object(fn: Any, args: list[VariableTracker]) -> bool:
    """An operator with a plain object among its operands?"""
    from tracer.dynamo.variables.user_object import OBJECT_OPERATORS, object_trackers

    return fn in OBJECT_OPERATORS and any(isinstance(a, object_trackers()) for a in args)


def _is_module_container(value: VariableTracker) -> bool:
    from tracer.dynamo.variables.nn_module import NNModuleVariable

    return isinstance(value, NNModuleVariable)


def _all_constants(args: list[VariableTracker], kwargs: dict[str, VariableTracker]) -> bool:
    return all(a.is_python_constant() for a in [*args, *kwargs.values()])


def _mutates_tensor(fn: Any, args: list[VariableTracker]) -> bool:
    """`x += y` on a tensor mutates it (Tensor.__iadd__); on a number it is `x = x + y`."""
    target = args[0]
    return isinstance(target, TensorVariable) and hasattr(
        target.python_type(), INPLACE_OPERATORS[fn][1]
    )


def _sum(tx: InstructionTranslator, args: list[VariableTracker]) -> VariableTracker:
    """`sum(xs, start)` over a known sequence: `start + xs[0] + xs[1] ...`, as eager adds."""
    from tracer.dynamo.variables.iterators import sequence_items

    total = args[1] if len(args) == 2 else constant(0)
    add = BuiltinVariable(operator.add)
    for item in sequence_items(tx, args[0]):
        total = add.call_function(tx, [total, item], {})
    return total


def _tensor_len(tensor: TensorVariable) -> int:
    shape = tensor.example.shape
    if not shape:
        raise Unsupported("len() of a 0-d tensor")
    return shape[0]
