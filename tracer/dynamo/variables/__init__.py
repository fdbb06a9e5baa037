"""The kinds of values the symbolic interpreter tracks; see base.py for the map."""

from tracer.dynamo.variables.base import NULL, NullVariable, VariableTracker
from tracer.dynamo.variables.builder import wrap
from tracer.dynamo.variables.constant import ConstantVariable, constant
from tracer.dynamo.variables.functions import (
    BuiltinVariable,
    MinitorchFunctionVariable,
    UserFunctionVariable,
)
from tracer.dynamo.variables.iterators import ListIteratorVariable
from tracer.dynamo.variables.modules import PythonModuleVariable
from tracer.dynamo.variables.nn_module import NNModuleVariable
from tracer.dynamo.variables.opaque import OpaqueVariable
from tracer.dynamo.variables.tensor import TensorMethodVariable, TensorVariable
from tracer.dynamo.variables.tuples import ListVariable, TupleVariable

__all__ = [
    "NULL",
    "BuiltinVariable",
    "ConstantVariable",
    "ListIteratorVariable",
    "ListVariable",
    "MinitorchFunctionVariable",
    "NNModuleVariable",
    "NullVariable",
    "OpaqueVariable",
    "PythonModuleVariable",
    "TensorMethodVariable",
    "TensorVariable",
    "TupleVariable",
    "UserFunctionVariable",
    "VariableTracker",
    "constant",
    "wrap",
]
