"""In-place ops on tensors the graph computed, recorded functionally (`y += 2`, `y.mul_(x)`).

    y = x * 1           %mul = operator.mul(%x, 1)          y's tracker: %mul
    y += 2              %add = operator.add(%mul, 2)        y's tracker *becomes* %add
    y.mul_(x)           %mul_1 = Tensor.mul(%add, %x)       y's tracker becomes %mul_1

TorchDynamo records a mutation as the out-of-place op and rebinds every reference to the
result; rebinding the one tracker object in place does that here (the stack, the locals and
the lists all hold the same tracker). This is exact only when nothing else can see the old
memory, so it is done for an intermediate (no source: not an input of the frame, which the
caller would have to see change) that is no view and has no view taken of it, that does not
require grad (autograd may have saved the old value), and whose dtype and shape the result
keeps. Anything else stays Unsupported: a graph break, or the frame runs eagerly.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import minitorch
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.tensor import TensorMethodVariable, TensorVariable

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator
    from tracer.fx import Node

# In-place methods and the out-of-place method computing the same values.
INPLACE_METHODS = {"add_": "add", "sub_": "sub", "mul_": "mul", "div_": "div",
                   "clamp_": "clamp"}
# Modules whose functions make new tensors (never views): a tensor they made owns its memory.
_FRESH_MODULES = ("minitorch.functional.pointwise", "minitorch.functional.reductions",
                  "minitorch.functional.linalg")
_FRESH_OPERATORS = frozenset({
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.mod, operator.pow, operator.matmul, operator.neg, operator.pos,
    operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge,
})


class InPlaceMethodVariable(TensorMethodVariable):
    """`y.add_` of a tracked tensor, waiting for its call (see the module docstring); at a
    graph break it is rebuilt and called for real like any tensor method."""

    def call_function(
        self, tx: InstructionTranslator, args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        plain = INPLACE_METHODS[self.name]
        return functionalize(tx, self.tensor, self.name, lambda: tx.output.record_call(
            "call_method", plain, [self.tensor, *args], kwargs))

    def describe(self) -> str:
        return f"the method Tensor.{self.name}"


def functionalize(tx: InstructionTranslator, target: TensorVariable, what: str,
                  compute: Any) -> TensorVariable:
    """Record `compute()` (the out-of-place op) and make `target` its result; see above."""
    why = _refusal(target)
    if why is not None:
        raise Unsupported(f"in-place {what} on a tensor mutates it ({target.describe()}), "
                          f"and {why}")
    result = compute()
    if not isinstance(result, TensorVariable):
        raise Unsupported(f"{what}: the out-of-place op did not give a tensor")
    new, old = result.as_example(), target.as_example()  # as_example: reads no sizes
    if tuple(new.shape) != tuple(old.shape) or new.dtype is not old.dtype:
        raise Unsupported(f"{what} would change the shape or dtype of {target.describe()}")
    target.node, target.example = result.node, new
    return target


def _refusal(target: TensorVariable) -> str | None:
    """Why `target` cannot be written functionally, or None."""
    if target.source is not None:
        return "it is an input of the frame (writing it back is not done yet)"
    if target.as_example().requires_grad:
        return "it requires grad (autograd may have saved its old value)"
    if not _makes_fresh_tensor(target.node):
        return "it may share memory with another tensor (a view)"
    if not all(_makes_fresh_tensor(user) for user in target.node.users):
        return "a view of it was taken"
    return None


def _makes_fresh_tensor(node: Node) -> bool:
    """Does `node` compute a new tensor (rather than a view that shares memory)?"""
    target = node.target
    if node.op == "call_method":
        target = getattr(minitorch.Tensor, target, None)
    if target in _FRESH_OPERATORS:
        return True
    return getattr(target, "__module__", None) in _FRESH_MODULES
