"""Graph breaks: compile the graph so far, run one instruction for real, resume after it.

[Note: graph breaks]
Some instructions cannot be traced: a call of `print` or of numpy, `x.item()`, an `if` on a
tensor's value, `x[mask]` (its shape is the number of True elements). Before this, such a
frame ran wholly eagerly. TorchDynamo instead *breaks* the graph there, and so do we:

    def f(x):                          def __transformed_f_0(L, G):          # generated source
        y = x.sin()                        graph_out = __compiled_fn_f_0(L['x'])
        print("hi")       # break          ___call = ___call_captured(builtins.print, 'hi')
        return y.cos()                     return ___resume_0(___call, L['x'], graph_out[0])

    ___resume_0 = optimize(__resume_at_28_f)   # f's bytecode from the instruction after the
                                               # call (resume_execution.py), itself captured:
                                               # its own graph computes y.cos()

A tensor `if` compiles the condition as a graph output and branches in the transformed code,
calling one of two resume functions (the jump target, or the next instruction); 3.11's
`a or b` on a tensor (JUMP_IF_TRUE_OR_POP) breaks the same way, `a` staying on the stack only
on the jump, as bool(a) then is the expression's value. Each break
adds one graph, and resume functions are cached per resume point, so n breaks in a row give
n + 1 graphs, whichever way the branches go.

[Note: breaks inside inlined calls]
A call of a user function is inlined: its ops join the caller's graph. When something inside
it cannot be traced, the break moves out to the call: the *caller* breaks at its CALL
instruction, and `___call_captured` (eval_frame.py) runs the callee with its own frame
captured, as the eval-frame hook would see it, so the callee gets graphs of its own around
its own break. Nothing runs eagerly but the untraceable part:

    def helper(t):                     f = lambda x: helper(x).sum()
        t = t * 2        # graph 1     ___call_captured(G['helper'], L['x'])   helper's frame:
        print("hi")      # break                                               its own graphs,
        return t + 1     # graph 2                                             break, resume
                                       ___resume_0(___call).sum()              # graph 3

The callee is found again from its source at run time (`self.encode`, `G['helper']`,
`L['self'].block`), so a call of a method or a submodule breaks the same way.

A break needs every value the rest of the frame can see: the stack below the instruction and
the live locals are rebuilt in the transformed code (a tensor the graph computed is one of its
outputs) and passed to the resume function. When that is impossible the frame runs eagerly, as
before: inside a loop (the resume function would re-enter the loop from the middle on every
iteration; TorchDynamo does the same), inside a try block or a with block other than a grad
mode's ([Note: a break inside a grad mode block]), in a generator, in an inlined
function (the break moves out to the call of it, above), with `fullgraph=True` (an error instead),
when a value cannot be rebuilt, or when the failed call had already mutated something while
being inlined (running it for real would do that write a second time).

[Note: a break inside a grad mode block]
A break inside `with no_grad():` leaves the block and enters it again, as TorchDynamo's does:

    def f(x):                          def __transformed_f_0(L, G):
        with minitorch.no_grad():          graph_out = __compiled_fn_f_0(L['x'])  # _set(False)
            y = x * 2                      ___set_grad_mode(False)      # the block's mode
            print(y)     # break           try:
            z = y + 1                          ___call = ___call_captured(builtins.print, ...)
        return z * x                       except BaseException:
                                               ___set_grad_mode(True)   # as __exit__ would
                                               raise
                                           return ___resume_f_0_0(___grad_mode_exit(True),
                                                                  ___call, graph_out[0], ...)

The resume function is the function's own bytecode, exception table included, so the rest of
the block is still protected by it; the block's `__exit__`, on the stack, is rebuilt as a
GradModeExit that sets the mode back (grad_mode.py). Capturing the resume function, the
translator starts inside the block that exit belongs to, and traces its end as a mode change.
A with statement of another kind, or a try, around the break still runs the frame eagerly.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from minitorch.autograd import is_grad_enabled
from tracer.dynamo import compat
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.instructions import Instruction
from tracer.dynamo.variables import NULL, TensorMethodVariable, TensorVariable, VariableTracker
from tracer.dynamo.variables.grad_mode import GradModeVariable

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator

# Conditional jumps on a value's truth: the value decides whether the jump is taken.
JUMP_IF = {
    "POP_JUMP_IF_TRUE": True,
    "POP_JUMP_IF_FALSE": False,
    "POP_JUMP_FORWARD_IF_TRUE": True,
    "POP_JUMP_FORWARD_IF_FALSE": False,  # 3.11
    "POP_JUMP_BACKWARD_IF_TRUE": True,
    "POP_JUMP_BACKWARD_IF_FALSE": False,  # 3.11
}
# 3.11's `a or b` / `a and b`: the value decides, and stays on the stack when the jump is taken.
JUMP_OR_POP = {"JUMP_IF_TRUE_OR_POP": True, "JUMP_IF_FALSE_OR_POP": False}
_CALLS = ("CALL", "CALL_KW")
_NOT_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


@dataclass
class BreakPlan:
    """What the transformed code does at a break (written by generate_break_code in
    transformed_code.py)."""

    stack: list[VariableTracker]  # the stack under the breaking instruction, bottom first
    live_locals: dict[str, VariableTracker | None]  # None: an argument never read (reload L)
    # a call: (callable, positional args, keyword args), run for real; its result is pushed
    call: tuple[VariableTracker, list[VariableTracker], dict[str, VariableTracker]] | None
    condition: VariableTracker | None = None  # a branch: the tensor whose truth decides
    resume: list = field(default_factory=list)  # the resume functions: [next] or [jump, next]
    jump_if: bool = True  # a branch jumps when bool(condition) == jump_if
    # runs the call: call_captured (eval_frame.py) with the frame's compiler and settings
    run_call: Callable | None = None
    where: str | None = None  # 'file.py:12', the user's line of the breaking instruction
    # when the graph ends in another mode than the frame began in (inside grad mode blocks,
    # after set_grad_enabled): (that mode, the mode to leave if the call raises)
    grad_mode: tuple[bool, bool] | None = None

    def values(self) -> list[VariableTracker]:
        """Every tracker the transformed code rebuilds (to find the graph's outputs)."""
        values = [v for v in self.stack if v is not NULL]
        values += [v for v in self.live_locals.values() if v is not None]
        if self.call is not None:
            fn, args, kwargs = self.call
            values += [fn, *args, *kwargs.values()]
        if self.condition is not None:
            values.append(self.condition)
        return values


def try_graph_break(
    tx: InstructionTranslator,
    inst: Instruction,
    index: int,
    error: Unsupported,
    stack: list[VariableTracker],
    kw_names: tuple[str, ...],
) -> bool:
    """Break the graph at `inst` (the `index`-th instruction) instead of failing with `error`;
    False when it cannot break here (the frame then runs eagerly). `stack` and `kw_names` are
    the translator's state before `inst` ran."""
    if not _can_break(tx, inst, index, stack):
        return False
    try:
        plan = _plan(tx, inst, index, stack, kw_names)
        mode = is_grad_enabled()  # the mode the graph ends in, which it does not leave set
        if tx.with_blocks or mode != tx.output.grad_mode:  # ([Note: a break inside ...])
            plan.grad_mode = (mode, tx.with_blocks[0].previous if tx.with_blocks else mode)
        where = plan.where = f"{tx.frame.code.co_filename}:{inst.lineno}"
        tx.output.compile_subgraph_with_break(plan, f"graph break: {error.reason} ({where})")
    except (Unsupported, ValueError):
        return False  # a value the transformed code cannot rebuild: run the frame eagerly
    tx.output.add_graph_break(error.reason, tx.frame.code.co_filename, inst.lineno)
    tx.done = True
    return True


def _can_break(
    tx: InstructionTranslator, inst: Instruction, index: int, stack: list[VariableTracker]
) -> bool:
    if tx.depth > 0 or not tx.output.allow_graph_breaks:
        return False
    if inst.protected and not in_grad_mode_blocks(tx, inst):
        return False
    if tx.frame.code.co_flags & _NOT_RESUMABLE or _in_loop(tx.instructions, index):
        return False
    if inst.opname in _CALLS:
        return True
    if inst.opname == "BINARY_SUBSCR":  # x[mask]: a shape known only when it runs
        return _is_tensor(stack[:-1])
    if inst.opname == "TO_BOOL":  # 3.13: TO_BOOL, then the jump
        following = tx.instructions[index + 1]
        return following.opname in JUMP_IF and _is_tensor(stack)
    return (inst.opname in JUMP_IF or inst.opname in JUMP_OR_POP) and _is_tensor(stack)


def in_grad_mode_blocks(tx: InstructionTranslator, inst: Instruction) -> bool:
    """Is `inst` protected by grad mode blocks alone, each traced in this frame?"""
    return (
        inst.with_only
        and bool(tx.with_blocks)
        and all(isinstance(block, GradModeVariable) for block in tx.with_blocks)
    )


def _plan(
    tx: InstructionTranslator,
    inst: Instruction,
    index: int,
    stack: list[VariableTracker],
    kw_names: tuple[str, ...],
) -> BreakPlan:
    # The locals the rest of the frame may read (a resume function's own ___stack arguments
    # were read by its prologue and are dead).
    live = {
        name: value for name, value in tx.symbolic_locals.items() if not name.startswith("___stack")
    }
    for name in tx.unread_arguments:
        if not name.startswith("___stack"):
            live.setdefault(name, None)
    stack = list(stack)
    if inst.opname in _CALLS:
        call = _pop_call(inst, stack, kw_names)
        if getattr(call[0], "value", getattr(call[0], "fn", None)) is super:
            raise Unsupported("super() reads the frame's __class__ cell: it cannot run outside")
        plan = BreakPlan(stack, live, call, run_call=_call_runner(tx))
        after = _nulls(stack) + (False,)  # the call's result is pushed
        plan.resume = [_resume(tx, index + 1, after, live)]
        return plan
    if inst.opname == "BINARY_SUBSCR":  # run as the call x.__getitem__(key)
        key, container = stack.pop(), stack.pop()
        plan = BreakPlan(
            stack,
            live,
            (TensorMethodVariable(container, "__getitem__"), [key], {}),
            run_call=_call_runner(tx),
        )
        plan.resume = [_resume(tx, index + 1, _nulls(stack) + (False,), live)]
        return plan
    if inst.opname in JUMP_OR_POP:
        return _plan_or_pop(tx, inst, index, stack, live)
    jump_index = index if inst.opname in JUMP_IF else index + 1  # 3.13: TO_BOOL, then the jump
    jump = tx.instructions[jump_index]
    condition = stack.pop()
    plan = BreakPlan(stack, live, None, condition, jump_if=JUMP_IF[jump.opname])
    plan.resume = [
        _resume(tx, jump.target, _nulls(stack), live),
        _resume(tx, jump_index + 1, _nulls(stack), live),
    ]
    return plan


def _plan_or_pop(
    tx: InstructionTranslator,
    inst: Instruction,
    index: int,
    stack: list[VariableTracker],
    live: dict,
) -> BreakPlan:
    """3.11's `a or b` on a tensor `a`: both resume functions are handed the stack with `a` on
    top; the jump target keeps it (it is the expression's value), the next instruction is
    resumed without it (JUMP_IF_TRUE_OR_POP pops it there)."""
    condition = stack[-1]
    plan = BreakPlan(stack, live, None, condition, jump_if=JUMP_OR_POP[inst.opname])
    nulls = _nulls(stack)
    position = len([v for v in stack[:-1] if v is not NULL])  # `a`'s place among the arguments
    after_pop = _resume(tx, index + 1, nulls[:-1], live)
    plan.resume = [_resume(tx, inst.target, nulls, live), _without_argument(after_pop, position)]
    return plan


def _without_argument(fn: Callable, position: int) -> Callable:
    """`fn`, called with its positional argument at `position` left out."""

    def resume(*args):
        return fn(*args[:position], *args[position + 1 :])

    return resume


def _pop_call(inst: Instruction, stack: list[VariableTracker], kw_names: tuple[str, ...]):
    """(callable, args, kwargs) of the call at the top of `stack`, popped, as CALL would."""
    if inst.opname == "CALL_KW":  # 3.13: the keyword names are on the stack
        kw_names = stack.pop().as_python_constant()
    argc = inst.arg
    args = stack[len(stack) - argc :] if argc else []
    del stack[len(stack) - argc :]
    second, first = stack.pop(), stack.pop()
    fn, self_arg = compat.split_call_slots(first, second, lambda v: v is NULL)
    if self_arg is not None:
        args = [self_arg, *args]
    n_positional = len(args) - len(kw_names)
    return fn, args[:n_positional], dict(zip(kw_names, args[n_positional:]))


def _resume(
    tx: InstructionTranslator,
    index: int,
    nulls: tuple[bool, ...],
    live: dict[str, VariableTracker | None],
):
    """The resume function that continues at instruction `index`, captured on its first call."""
    # NOTE: imported here, at a break: resume functions need the `bytecode` library (~6 ms to
    # import), which a frame that captures whole never does.
    from tracer.dynamo.eval_frame import optimize
    from tracer.dynamo.resume_execution import ResumePoint, original_position, resume_function

    # Inside a resume function, resume the user's code (the same point on every path).
    code, offset = original_position(tx.frame.code, tx.instructions[index].offset)
    point = ResumePoint(offset, nulls, tuple(live))
    fn = resume_function(code, point, tx.frame.f_globals)
    return optimize(fn, tx.output.compiler, dynamic=tx.output.dynamic)  # the caller's mode


def _call_runner(tx: InstructionTranslator) -> Callable:
    from tracer.dynamo.eval_frame import call_captured

    return functools.partial(call_captured, tx.output.compiler, tx.output.dynamic)


def _nulls(stack: list[VariableTracker]) -> tuple[bool, ...]:
    return tuple(v is NULL for v in stack)


def _in_loop(instructions: list[Instruction], index: int) -> bool:
    """Is instruction `index` between a backward jump's target and the jump itself?"""
    return any(
        inst.target is not None and inst.target <= index < k for k, inst in enumerate(instructions)
    )


def _is_tensor(stack: list[VariableTracker]) -> bool:
    return bool(stack) and isinstance(stack[-1], TensorVariable)
