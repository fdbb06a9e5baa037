"""Tensor factories inside compiled code: `minitorch.zeros(T, T)`, `arange(T)`, `randn_like(x)`.

A factory is a function of minitorch.factories that makes a tensor from a shape and numbers,
or of minitorch.factories_like that makes one from another tensor's shape (FACTORY_MODULES).
It checks its arguments and calls its op of the table (`ops.full`, `ops.arange`, `ops.normal`,
...: minitorch/ops/factories.py), so it is recorded like any minitorch function: one node,
whose fake result tracing computes from the op's shape rule, and which AOT autograd traces
into that op:

    def f(x):                            %ones = call_function[minitorch.ones](4, 4)
        mask = minitorch.tril(            %tril = call_function[minitorch.tril](%ones)
            minitorch.ones(4, 4))
        return x + minitorch.randn_like(x)  %randn_like = call_function[randn_like](%x)

What a factory makes depends on the *sizes* of a tensor argument (`zeros_like(x)`), so those
are guarded exactly ([Note: dynamic shapes] in output_graph.py): the graph holds the size as a
constant. A random factory draws when the compiled graph runs, from the generator
`manual_seed` seeds, in the program's order: compiled equals eager value for value.

`tensor(data)` and `x.new_tensor(data)` are captured when the data is Python numbers known
while tracing (`minitorch.tensor([0.485, 0.456, 0.406])`): the node makes the same constant on
every call, and AOT autograd keeps it as a constant of the graph.

Not captured, and so a graph break: `tensor(data)` of anything else and `from_numpy` (their
values are data, not a shape), `manual_seed` (it changes the generator), and a factory asked
for requires_grad=True (a new leaf of autograd, which a graph cannot return).
"""

from __future__ import annotations

from types import FunctionType
from typing import TYPE_CHECKING, Any

from minitorch import factories, factories_like
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.tensor import TensorVariable

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator

# The modules whose public functions are factories: `zeros(2, 3)` and `zeros_like(x)` alike.
# NOTE: a module of factories added to minitorch must be named here, or its functions are not
# captured as factories (a call inlined into its body, or a graph break, where it is not one).
FACTORY_MODULES = (factories.__name__, factories_like.__name__)

# What the functions of minitorch.factories that are not captured do instead: a graph break.
NOT_CAPTURED = {
    factories.tensor: "makes a tensor from data, not from a shape",
    factories.from_numpy: "makes a tensor from data, not from a shape",
    factories.manual_seed: "replaces the random generator; it runs between graphs",
}


# Made from data, but captured when the data is Python numbers known while tracing: a
# constant of the graph (node targets: the function, or the method's name).
DATA_FACTORIES = frozenset({factories.tensor, "new_tensor"})


def is_factory(value: Any) -> bool:
    """A public factory (of FACTORY_MODULES) that capture records as a graph node."""
    return (
        isinstance(value, FunctionType)
        and value.__module__ in FACTORY_MODULES
        and not value.__name__.startswith("_")
        and value not in NOT_CAPTURED
    )


class UncapturedFactoryVariable(VariableTracker):
    """tensor(data), from_numpy, manual_seed: calling one is a graph break (see above)."""

    def __init__(self, fn: FunctionType, source: Source | None) -> None:
        super().__init__(source)  # at the break, the call is rebuilt from its source
        self.fn = fn

    def python_type(self) -> type:
        return FunctionType

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if self.fn is factories.tensor and _constant_data(args, kwargs):
            # tensor([0.5, 0.25]): data known while tracing is a constant of the graph
            check_factory_call(tx, self.fn, args, kwargs)
            return tx.output.record_call("call_function", self.fn, args, kwargs)
        raise Unsupported(f"minitorch.{self.fn.__name__}() {NOT_CAPTURED[self.fn]}")

    def describe(self) -> str:
        return f"the function minitorch.{self.fn.__name__}"


def check_factory_call(
    tx: InstructionTranslator,
    fn: FunctionType,
    args: list[VariableTracker],
    kwargs: dict[str, VariableTracker],
) -> None:
    """Refuse what a graph cannot make; guard the sizes of tensor arguments (see above)."""
    wants_grad = kwargs.get("requires_grad")
    if wants_grad is not None and (
        not wants_grad.is_python_constant() or wants_grad.as_python_constant()
    ):
        raise Unsupported(f"minitorch.{fn.__name__}(requires_grad=True) makes a new leaf")
    for a in args:
        if isinstance(a, TensorVariable):
            tx.output.specialize(a, None, f"read by {fn.__name__}()")


def _constant_data(args: list[VariableTracker], kwargs: dict[str, VariableTracker]) -> bool:
    """Is `tensor(data, ...)` made of Python numbers only (no tensor, no array)?"""

    def numbers(value: Any) -> bool:
        if isinstance(value, (list, tuple)):
            return all(numbers(v) for v in value)
        return type(value) in (bool, int, float)

    if len(args) != 1 or not all(v.is_python_constant() for v in [*args, *kwargs.values()]):
        return False
    return numbers(args[0].as_python_constant())
