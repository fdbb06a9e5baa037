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

An *input* of the frame (`x.add_(1)`, `x += y` on an argument) is recorded the same way, and
the transformed code then writes the result back into the caller's tensor with `copy_`
(side_effects.py), so the caller sees the change and its version counter moves. Refused: an
input that requires grad, one that is a view or shares memory with another input (the other
would have to change too: overlapping bytes, however they came to overlap), and one a view was
taken of during the trace.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import minitorch
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.guards import shares_memory
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.tensor import TensorMethodVariable, TensorVariable, reads_a_copy

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
    minitorch.functional.indexing.setitem,  # x[k] = v, out of place (variables/tensor.py)
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
    why = _input_refusal(tx, target) if target.source is not None else _refusal(target)
    if why is not None:
        raise Unsupported(f"in-place {what} on a tensor mutates it ({target.describe()}), "
                          f"and {why}")
    result = compute()
    if not isinstance(result, TensorVariable):
        raise Unsupported(f"{what}: the out-of-place op did not give a tensor")
    new, old = result.as_example(), target.as_example()  # as_example: reads no sizes
    if tuple(new.shape) != tuple(old.shape) or new.dtype is not old.dtype:
        raise Unsupported(f"{what} would change the shape or dtype of {target.describe()}")
    if target.source is not None and new.requires_grad:
        raise Unsupported(f"in-place {what} on {target.describe()} would make an input of "
                          "the frame require grad")
    target.node, target.example = result.node, new
    tx.output.side_effects.version += 1  # a mutation: see SideEffects.version
    if target.source is not None:
        tx.output.side_effects.write_back(target)  # copy_ into the caller's tensor
        # No other input shares its memory: the aliasing guard of every entry with two
        # tensor inputs or more (guards.py, [Note: aliasing is overlapping memory]).
        tx.output.add_guard(target.source, "NOT_A_VIEW")
    return target


def _input_refusal(tx: InstructionTranslator, target: TensorVariable) -> str | None:
    """Why the input `target` cannot be mutated functionally and written back, or None."""
    real = next((inp.example for inp in tx.output.graph_inputs if inp.source == target.source),
                None)
    if real is None:
        return "it is not a graph input"
    if real.requires_grad:
        return "it requires grad (autograd may have saved its old value)"
    if real._base is not None:
        return "it is a view of another tensor (writing it back is not done)"
    own = target.source.name()
    for name, other in _frame_tensors(tx):
        if name != own and shares_memory(other, real):  # by bytes, not _base: guards.py
            return f"it shares memory with another input ({name})"
    if not all(makes_fresh_tensor(user) for user in target.node.users):
        return "a view of it was taken"
    return None


def _frame_tensors(tx: InstructionTranslator) -> list[tuple[str, Any]]:
    """The graph inputs and the frame's arguments (read yet or not), with their names."""
    found = [(inp.source.name(), inp.example) for inp in tx.output.graph_inputs]
    for name, value in tx.output.frame.f_locals.items():
        nested = isinstance(value, (dict, list, tuple))
        items = value.values() if isinstance(value, dict) else value if nested else [value]
        where = f"an item of L[{name!r}]" if nested else f"L[{name!r}]"
        found += [(where, v) for v in items if isinstance(v, minitorch.Tensor)]
    return found


def _refusal(target: TensorVariable) -> str | None:
    """Why `target` cannot be written functionally, or None."""
    if target.as_example().requires_grad:
        return "it requires grad (autograd may have saved its old value)"
    if not makes_fresh_tensor(target.node):
        return "it may share memory with another tensor (a view)"
    if not all(makes_fresh_tensor(user) for user in target.node.users):
        return "a view of it was taken"
    return None


def makes_fresh_tensor(node: Node) -> bool:
    """Does `node` compute a new tensor (rather than a view that shares memory)?"""
    target = node.target
    if node.op == "call_method":
        target = getattr(minitorch.Tensor, target, None)
    if target in _FRESH_OPERATORS:
        return True
    if target is operator.getitem:
        return reads_a_copy(node)  # x[idx]: a gather, unlike x[1:]
    return getattr(target, "__module__", None) in _FRESH_MODULES
