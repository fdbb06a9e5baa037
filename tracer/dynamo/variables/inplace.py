"""In-place ops on tensors the graph computed, recorded functionally (`y += 2`, `y.mul_(x)`).

    y = x * 1           %mul = operator.mul(%x, 1)          y's tracker: %mul
    y += 2              %add = operator.add(%mul, 2)        y's tracker *becomes* %add
    y.mul_(x)           %mul_1 = Tensor.mul(%add, %x)       y's tracker becomes %mul_1

TorchDynamo records a mutation as the out-of-place op and rebinds every reference to the
result; rebinding the one tracker object in place does that here (the stack, the locals and
the lists all hold the same tracker). This is exact only when nothing else can see the old
memory, so it is done for an intermediate (no source: not an input of the frame, which the
caller would have to see change) that is no view and has no view taken of it, and whose dtype
and shape the result keeps. Anything else stays Unsupported: a graph break, or the frame runs
eagerly.

[Note: in-place on a tensor that requires grad]
Eager autograd lets `out += identity` rewrite an intermediate that requires grad, and raises at
backward() only when a formula reads a value the write replaced ([Note: in-place ops and the
backward graph] in minitorch/autograd/graph.py). Functionally there is no such error: the old
value still exists. So we functionalize only when eager cannot raise either:

    no op has read the old value yet     its node's users all make results that do not
                                         require grad (a mask `y < 0`): eager recorded no
                                         autograd node for them, so nothing saved it
    its maker's formula ignores `out`    the fake's grad_fn is an OpBackward whose derivative
                                         never loads its `out` parameter (exp's does: refused)
    it is not a view, nor an input       its op makes new memory (makes_fresh_tensor)

That covers the idioms of real models: `out = bn(conv(x)); out += identity`,
`F.relu(bn(x), inplace=True)`, `y = x @ w; y.mul_(2)`. `F.relu(x, inplace=True)` is
`x.relu_()` in eager, so it is recorded as `relu(x)` (INPLACE_FUNCTIONS).

An *input* of the frame (`x.add_(1)`, `x += y` on an argument) is recorded the same way, and
the transformed code then writes the result back into the caller's tensor with `copy_`
(side_effects.py), so the caller sees the change and its version counter moves. Refused: an
input that requires grad, one that is a view or shares memory with another input (the other
would have to change too: overlapping bytes, however they came to overlap), and one a view was
taken of during the trace.
"""

from __future__ import annotations

import dis
import inspect
import operator
from typing import TYPE_CHECKING, Any

import minitorch
from minitorch import ops
from minitorch.autograd.graph import OpBackward
from minitorch.nn import functional as nn_functional
from minitorch.nn._data import copy_into
from minitorch.ops import OpDef
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.memory_overlap import shares_memory
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.tensor import TensorMethodVariable, TensorVariable, reads_a_copy

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator
    from tracer.fx import Node

# In-place methods and the out-of-place method computing the same values; None for the
# writes of every element, which eager computes as `ops.index_scatter(x, value, ())`.
INPLACE_METHODS = {
    "add_": "add",
    "sub_": "sub",
    "mul_": "mul",
    "div_": "div",
    "clamp_": "clamp",
    "masked_fill_": "masked_fill",
    "pow_": "pow",
    "relu_": "relu",
    "exp_": "exp",
    "sqrt_": "sqrt",
    "sigmoid_": "sigmoid",
    "tanh_": "tanh",
    "neg_": "neg",
    "abs_": "abs",
    "fill_": None,
    "zero_": None,
    "copy_": None,
}
# Functions whose inplace=True writes their first argument: the method eager calls then, and
# its arguments (F.relu(x, inplace=True) is x.relu_()).
INPLACE_FUNCTIONS = {
    nn_functional.relu: ("relu", {}),
    # eager's x.mul_(where(x > 0, 1, slope)) has the values and gradient of the function
    # itself, out of place: None records the call without `inplace`
    nn_functional.leaky_relu: (None, {}),
}
# Functions that write into their tensor arguments when the named argument is true: inlined,
# so that capture sees each write (F.batch_norm moves its running statistics while training).
WRITING_FUNCTIONS = {nn_functional.batch_norm: "training"}
# Modules whose functions make new tensors (never views): a tensor they made owns its memory.
_FRESH_MODULES = (
    "minitorch.functional.pointwise",
    "minitorch.functional.reductions",
    "minitorch.functional.linalg",
    "minitorch.factories",
    "minitorch.factories_like",
)
# Layers' functions that never return their input or a view of it (F.dropout may: p=0), and
# the helpers batch_norm ends in, recorded when it is inlined (_affine may return what
# _normalize made, which only batch_norm itself sees).
_FRESH_FUNCTIONS = frozenset(
    getattr(nn_functional, name)
    for name in (
        "linear",
        "conv2d",
        "unfold",
        "fold",
        "max_pool2d",
        "avg_pool2d",
        "relu",
        "gelu",
        "sigmoid",
        "tanh",
        "softmax",
        "log_softmax",
        "embedding",
        "batch_norm",
        "layer_norm",
        "mse_loss",
        "nll_loss",
        "cross_entropy",
        "_normalize",
        "_affine",
    )
)
# The functions (and Tensor methods) of minitorch.functional.views that copy: the rest of that
# module makes views.
_FRESH_VIEW_FUNCTIONS = ("clone", "cat", "concat", "stack", "roll")
_FRESH_OPERATORS = frozenset(
    {
        operator.add,
        operator.sub,
        operator.mul,
        operator.truediv,
        operator.floordiv,
        operator.mod,
        operator.pow,
        operator.matmul,
        operator.neg,
        operator.pos,
        operator.lt,
        operator.le,
        operator.eq,
        operator.ne,
        operator.gt,
        operator.ge,
        minitorch.functional.indexing.setitem,  # x[k] = v, out of place (variables/tensor.py)
    }
)


class InPlaceMethodVariable(TensorMethodVariable):
    """`y.add_` of a tracked tensor, waiting for its call (see the module docstring); at a
    graph break it is rebuilt and called for real like any tensor method."""

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if not hasattr(type(self.tensor.as_example()), self.name):  # eager: AttributeError
            raise Unsupported(f"Tensor has no method {self.name}")
        plain = INPLACE_METHODS[self.name]
        if plain is None:
            return functionalize(tx, self.tensor, self.name, lambda: self._write(tx, args, kwargs))
        return functionalize(
            tx,
            self.tensor,
            self.name,
            lambda: tx.output.record_call("call_method", plain, [self.tensor, *args], kwargs),
        )

    def _write(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        """x.fill_(v), x.zero_(), x.copy_(src): x with every element replaced, broadcast and
        converted to x's dtype, as eager computes it."""
        value = [constant(0)] if self.name == "zero_" else args
        if kwargs or len(value) != 1:
            raise Unsupported(f"Tensor.{self.name}() with these arguments")
        if (
            isinstance(value[0], TensorVariable)
            and value[0].as_example().device != self.tensor.as_example().device
        ):
            raise Unsupported(f"Tensor.{self.name}() from another device")
        return tx.output.record_call(
            "call_function", ops.index_scatter, [self.tensor, value[0], constant(())], {}
        )

    def describe(self) -> str:
        return f"the method Tensor.{self.name}"


def writes_arguments(
    fn: Any, args: list[VariableTracker], kwargs: dict[str, VariableTracker]
) -> bool:
    """Would this call of a WRITING_FUNCTIONS function write into its arguments?"""
    if fn not in WRITING_FUNCTIONS:
        return False
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return False  # recorded as it is: tracing it raises eager's error
    flag = bound.arguments.get(WRITING_FUNCTIONS[fn])
    return flag is not None and (not flag.is_python_constant() or bool(flag.as_python_constant()))


class CopyIntoVariable(VariableTracker):
    """nn's `copy_into(dst, src)` (minitorch/nn/_data.py): `dst.copy_(src)` without a gradient,
    recorded as the write of `src.detach()` into dst (BatchNorm's buffers)."""

    def python_type(self) -> type:
        return type(copy_into)

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if kwargs or len(args) != 2 or not isinstance(args[0], TensorVariable):
            raise Unsupported("copy_into() with these arguments")
        dst, src = args
        if isinstance(src, TensorVariable):
            src = tx.output.record_call("call_method", "detach", [src], {})
        return InPlaceMethodVariable(dst, "copy_").call_function(tx, [src], {})

    def describe(self) -> str:
        return "the function minitorch.nn._data.copy_into"


def functionalize(
    tx: InstructionTranslator, target: TensorVariable, what: str, compute: Any
) -> TensorVariable:
    """Record `compute()` (the out-of-place op) and make `target` its result; see above."""
    why = _input_refusal(tx, target) if target.source is not None else _refusal(target)
    if why is not None:
        raise Unsupported(
            f"in-place {what} on a tensor mutates it ({target.describe()}), and {why}"
        )
    result = compute()
    if not isinstance(result, TensorVariable):
        raise Unsupported(f"{what}: the out-of-place op did not give a tensor")
    new, old = result.as_example(), target.as_example()  # as_example: reads no sizes
    if tuple(new.shape) != tuple(old.shape) or new.dtype is not old.dtype:
        raise Unsupported(f"{what} would change the shape or dtype of {target.describe()}")
    if target.source is not None and new.requires_grad:
        raise Unsupported(
            f"in-place {what} on {target.describe()} would make an input of the frame require grad"
        )
    target.node, target.example = result.node, new
    tx.output.side_effects.mutated(target)  # see SideEffects.version
    if target.source is not None:
        tx.output.side_effects.write_back(target)  # copy_ into the caller's tensor
        # No other input shares its memory: the aliasing guard of every entry with two
        # tensor inputs or more (memory_overlap.py, [Note: aliasing is overlapping memory]).
        tx.output.add_guard(target.source, "NOT_A_VIEW")
    return target


def _input_refusal(tx: InstructionTranslator, target: TensorVariable) -> str | None:
    """Why the input `target` cannot be mutated functionally and written back, or None."""
    real = next(
        (inp.example for inp in tx.output.graph_inputs if inp.source == target.source), None
    )
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
        return _grad_refusal(target)
    if not makes_fresh_tensor(target.node):
        return "it may share memory with another tensor (a view)"
    if not all(makes_fresh_tensor(user) for user in target.node.users):
        return "a view of it was taken"
    return None


def _grad_refusal(target: TensorVariable) -> str | None:
    """Why an intermediate that requires grad cannot be written functionally, or None: see
    [Note: in-place on a tensor that requires grad]."""
    old = target.as_example()
    if not all(_records_no_grad(user) for user in target.node.users):
        return "it requires grad and an op already read it (autograd may have saved it)"
    if not makes_fresh_tensor(target.node):
        return "it requires grad and may share memory with another tensor (a view)"
    maker = old.grad_fn
    if (
        not isinstance(maker, OpBackward)
        or maker.kept_by is not None  # relu's: PyTorch's
        or _reads_output(maker.op.backward)
    ):  # derivative reads it
        return "it requires grad and the op that made it saved it for its derivative"
    return None


def _records_no_grad(user: Node) -> bool:
    """Does `user` make only results that do not require grad (so eager's autograd recorded no
    node for it, and it saved nothing)?"""
    val = user.meta.get("val")
    values = val if isinstance(val, (tuple, list)) else [val]
    return all(isinstance(v, minitorch.Tensor) and not v.requires_grad for v in values)


def _reads_output(formula: Any) -> bool:
    """Does a derivative formula `backward(grad, out, *inputs)` load its `out` parameter?"""
    code = getattr(formula, "__code__", None)
    if code is None or code.co_argcount < 2:
        return True  # not a plain function: assume it does
    out = code.co_varnames[1]
    return out in _loaded_names(code) or out in code.co_cellvars


def _loaded_names(code: Any) -> set:
    """The names a code object's LOAD_ instructions read (3.13's LOAD_FAST_LOAD_FAST reads
    two: its argval is a pair)."""
    names = set()
    for i in dis.get_instructions(code):
        if i.opname.startswith("LOAD_"):
            names.update(i.argval if isinstance(i.argval, tuple) else (i.argval,))
    return names


def makes_fresh_tensor(node: Node) -> bool:
    """Does `node` compute a new tensor (rather than a view that shares memory)?"""
    target = node.target
    if node.op == "call_method":
        target = getattr(minitorch.Tensor, target, None)
    if target in _FRESH_OPERATORS:
        return True
    if target is operator.getitem:
        return reads_a_copy(node)  # x[idx]: a gather, unlike x[1:]
    if isinstance(target, OpDef):  # a row of the op table says what it makes
        return target.kind not in ("view", "composite")
    module = getattr(target, "__module__", None)
    if module == "minitorch.functional.views":
        return getattr(target, "__name__", None) in _FRESH_VIEW_FUNCTIONS
    return module in _FRESH_MODULES or target in _FRESH_FUNCTIONS
