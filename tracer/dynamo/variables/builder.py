"""`wrap`: turn a real value read from the frame into a tracker, installing its guards.

Every value the translator reads from outside the bytecode (an argument, a global, an attribute
of a module) passes through here exactly once per source. The guard is installed *at wrap
time*, before any operation can fail on the value, so the guards recorded so far always
describe everything tracing relied on; that is what makes an eager fallback entry (and later a
graph break) safe to cache under them.

    value                         tracker                     guard
    ----------------------------  --------------------------  -------------------------------
    minitorch.Tensor              TensorVariable (+ input)    TENSOR_MATCH
    None, bool, int, float, str   ConstantVariable            CONSTANT_MATCH
    minitorch dtype               ConstantVariable            ID_MATCH
    tuple                         TupleVariable of wrapped    TUPLE_LENGTH (+ the items')
    dict with str or int keys     ConstDictVariable           TYPE_MATCH, DICT_KEYS (+ values')
    module                        PythonModuleVariable        ID_MATCH
    nn.Module                     NNModuleVariable            NN_MODULE (class, training)
    an optimizer (zero_grad)      OptimizerVariable           TYPE_MATCH (+ the method's)
    minitorch.sin, ops.sin, F.*   MinitorchFunctionVariable   ID_MATCH
    len, math.sqrt, operator.add  BuiltinVariable             ID_MATCH (NOT_SHADOWED if builtin)
    other Python function         UserFunctionVariable        FUNCTION_MATCH (code, globals)
    functools.partial             PartialVariable             TYPE_MATCH (+ func, args: called)
    instance of a user class      UserObjectVariable          TYPE_MATCH, CONTAINER_ID (+ reads)
    a user's class                UserClassVariable           ID_MATCH (calling it: a new object)
    super                         SuperFunctionVariable       NOT_SHADOWED
    a block's GradModeExit        GradModeExitVariable        TYPE_MATCH, its previous mode
    anything else                 OpaqueVariable              TYPE_MATCH
"""

from __future__ import annotations

import collections
import functools
import math
from types import FunctionType, ModuleType
from typing import TYPE_CHECKING, Any

from minitorch.autograd import is_grad_enabled
from minitorch.dtype import DType
from minitorch.fake import is_fake
from minitorch.memory_format import memory_format
from minitorch.nn._data import copy_into
from minitorch.nn.module import Module
from minitorch.ops import OpDef
from minitorch.optim.optimizer import Optimizer
from minitorch.tensor import Tensor
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import AttrSource, BuiltinSource, GetItemSource, Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import ConstantVariable
from tracer.dynamo.variables.container_calls import CONTAINER_BUILTINS
from tracer.dynamo.variables.dicts import is_key
from tracer.dynamo.variables.factories import (
    NOT_CAPTURED,
    UncapturedFactoryVariable,
    is_factory,
)
from tracer.dynamo.variables.functions import (
    GRAPH_OPERATORS,
    INPLACE_OPERATORS,
    BuiltinVariable,
    MinitorchFunctionVariable,
    UserFunctionVariable,
)
from tracer.dynamo.variables.grad_mode import (
    AutocastClassVariable,
    GradModeExit,
    GradModeManagerClassVariable,
    is_autocast_class,
    is_grad_mode_manager,
    resumed_block,
)
from tracer.dynamo.variables.modules import PythonModuleVariable
from tracer.dynamo.variables.named_tuples import is_named_tuple_class
from tracer.dynamo.variables.opaque import OpaqueVariable
from tracer.dynamo.variables.tuples import ListVariable, TupleVariable
from tracer.dynamo.variables.user_class import (
    SuperFunctionVariable,
    UserClassVariable,
    is_user_class,
)
from tracer.dynamo.variables.user_object import PartialVariable, UserObjectVariable, is_plain_object

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator

# Builtins that are pure functions of their arguments, so folding them on constants is exact.
_PURE_BUILTINS = frozenset(
    {
        abs,
        bool,
        divmod,
        enumerate,
        float,
        getattr,
        int,
        isinstance,
        len,
        list,
        max,
        min,
        pow,
        range,
        round,
        str,
        sum,
        tuple,
        zip,
        # Containers and their iterators (variables/container_calls.py)
        dict,
        set,
        frozenset,
        sorted,
        reversed,
        iter,
        hash,
        # Its answer is fixed by the GRAD_MODE guard that every cache entry has.
        is_grad_enabled,
        # Answered by the tracker when not folded ([Note: introspection is answered by the
        # tracker] in functions.py); a partial made in the frame is held as its parts.
        type,
        callable,
        hasattr,
        slice,
        functools.partial,
    }
)


def wrap(
    tx: InstructionTranslator, value: Any, source: Source | None, guard: bool = True
) -> VariableTracker:
    """The tracker of `value`, read from `source`; installs its guards unless `guard` is False.

    The same source always gives the same tracker (one graph input per tensor source).
    """
    if source is not None and source in tx.output.wrapped:
        return tx.output.wrapped[source]
    variable = _wrap(tx, value, source, guard and source is not None)
    if source is not None:
        tx.output.wrapped[source] = variable
    return variable


def _wrap(
    tx: InstructionTranslator, value: Any, source: Source | None, guard: bool
) -> VariableTracker:
    def install(kind: str) -> None:
        if guard:
            tx.output.add_guard(source, kind)

    if isinstance(value, Tensor):
        if is_fake(value):
            raise Unsupported("a fake tensor was passed to a compiled function")
        install("TENSOR_MATCH")
        return tx.output.add_graph_input(source, value)
    if value is None or type(value) in (bool, int, float, str):
        install("CONSTANT_MATCH")
        return ConstantVariable(value, source)
    if is_grad_mode_manager(value):  # no_grad, enable_grad, set_grad_enabled
        install("ID_MATCH")
        return GradModeManagerClassVariable(value, source)
    if type(value) is GradModeExit:  # a block's __exit__, handed to a resume function
        install("TYPE_MATCH")
        previous = wrap(tx, value.previous, AttrSource(source, "previous"), guard)
        return resumed_block(tx, previous.as_python_constant())
    if is_autocast_class(value):
        install("ID_MATCH")
        return AutocastClassVariable(value, source)
    if isinstance(value, (DType, memory_format)):
        install("ID_MATCH")
        return ConstantVariable(value, source)
    if type(value) in (list, dict) and id(value) in tx.output.containers:
        # One list read through two sources (an argument that is also a global): one tracker,
        # so a mutation through either is seen through both (guards.py: container_identity).
        install("CONTAINER_ID")
        return tx.output.containers[id(value)]
    if type(value) in (tuple, list):
        # A list argument is read, never mutated, by the trace (ListVariable has no methods):
        # its length and each item's guards say when a retrace is needed.
        install("TUPLE_LENGTH")
        if type(value) is list:  # known before its items are: a list may hold itself
            install("CONTAINER_ID")
            tx.output.containers[id(value)] = tracker = ListVariable([], source=source)
        items = [wrap(tx, v, _item_source(source, i), guard) for i, v in enumerate(value)]
        if type(value) is tuple:
            return TupleVariable(items, source=source)
        tracker.items.extend(items)
        return tracker
    if type(value) is dict and all(is_key(k) for k in value):
        from tracer.dynamo.variables.dicts import ConstDictVariable

        install("TYPE_MATCH")  # then its keys, in order; each value gets guards of its own
        install("DICT_KEYS")
        install("CONTAINER_ID")
        tx.output.containers[id(value)] = tracker = ConstDictVariable({}, source=source)
        for k, v in value.items():
            tracker.setitem(k, wrap(tx, v, _item_source(source, k), guard))
        return tracker
    if isinstance(value, Module) and source is not None:
        from tracer.dynamo.variables.nn_module import NNModuleVariable

        install("NN_MODULE")
        return NNModuleVariable(value, source)
    if isinstance(value, Optimizer) and source is not None:
        from tracer.dynamo.variables.optimizer import OptimizerVariable

        install("TYPE_MATCH")  # its methods are guarded when read (optimizer.py)
        return OptimizerVariable(value, source)
    if isinstance(value, ModuleType):
        install("ID_MATCH")
        return PythonModuleVariable(value, source)
    if value is copy_into:  # nn writing a buffer: recorded as the write (inplace.py)
        from tracer.dynamo.variables.inplace import CopyIntoVariable

        install("ID_MATCH")
        return CopyIntoVariable(source)
    if isinstance(value, FunctionType) and value in NOT_CAPTURED:  # tensor(data): a break
        install("ID_MATCH")
        return UncapturedFactoryVariable(value, source)
    if _is_minitorch_op(value):
        install("ID_MATCH")
        return MinitorchFunctionVariable(value, source)
    if _is_pure_builtin(value):
        install("NOT_SHADOWED" if isinstance(source, BuiltinSource) else "ID_MATCH")
        return BuiltinVariable(value, source)
    if is_named_tuple_class(value) or value is collections.namedtuple:
        from tracer.dynamo.variables.named_tuples import (
            NamedTupleClassVariable,
            NamedTupleFactoryVariable,
        )

        install("ID_MATCH")
        if value is collections.namedtuple:
            return NamedTupleFactoryVariable(source)
        return NamedTupleClassVariable(value, source)
    if isinstance(value, FunctionType):
        install("FUNCTION_MATCH")
        return UserFunctionVariable(value, source, inline=True)  # a helper: inlined when called
    if isinstance(value, functools._lru_cache_wrapper) and source is not None:
        from tracer.dynamo.variables.user_object import LruCacheVariable

        install("ID_MATCH")
        return LruCacheVariable(value, source)
    if source is not None and type(value) is functools.partial:
        install("TYPE_MATCH")  # its func and arguments are guarded when it is called
        return PartialVariable(value, source)
    if is_user_class(value):
        install("ID_MATCH")  # its attributes are guarded when read (user_class.py)
        return UserClassVariable(value, source)
    if value is super:
        install("NOT_SHADOWED" if isinstance(source, BuiltinSource) else "ID_MATCH")
        return SuperFunctionVariable(source)
    if source is not None and is_plain_object(value):
        if id(value) in tx.output.containers:  # one object, one tracker (as for a list)
            install("CONTAINER_ID")
            return tx.output.containers[id(value)]
        install("TYPE_MATCH")  # each attribute read gets a guard of its own
        install("CONTAINER_ID")
        tx.output.containers[id(value)] = tracker = UserObjectVariable(value, source)
        return tracker
    install("TYPE_MATCH")
    return OpaqueVariable(value, source)


def _item_source(source: Source | None, index: int | str) -> Source | None:
    return None if source is None else GetItemSource(source, index)


def _is_minitorch_op(value: Any) -> bool:
    """minitorch's functional API (minitorch.sin), the op table (minitorch.ops.sin), the
    layers' functions (F.linear, and the losses of nn/functional_losses.py: one node per layer
    call; AOT autograd sees its ops) and the factories that make a tensor from a shape
    (minitorch.zeros, randn_like: see variables/factories.py)."""
    if isinstance(value, OpDef):
        return True
    module = getattr(value, "__module__", None) or ""
    return isinstance(value, FunctionType) and (
        module.startswith("minitorch.functional")
        or module.startswith("minitorch.nn.functional")
        or is_factory(value)
    )


def _is_pure_builtin(value: Any) -> bool:
    if not callable(value) or type(value).__hash__ is None:  # (list.__hash__ is None: the
        return False  # type list itself hashes)
    if (
        value in _PURE_BUILTINS
        or value in GRAPH_OPERATORS
        or value in INPLACE_OPERATORS
        or value in CONTAINER_BUILTINS
    ):
        return True
    return (
        getattr(value, "__module__", None) == "math"
        and getattr(math, value.__name__, None) is value
    )
