"""`with minitorch.no_grad():` inside a compiled function: one graph, the mode set inside it.

    with minitorch.no_grad():          %_set = call_function[grad_mode._set](False)
        y = x * 2                      %mul = call_function[operator.mul](%x, 2)
    return y + x                       %_set_1 = call_function[grad_mode._set](True)
                                       %add = call_function[operator.add](%mul, %x)

Calling `no_grad()`, `enable_grad()` or `set_grad_enabled(mode)` gives a `GradModeVariable`;
BEFORE_WITH enters it and the `__exit__` call at the block's end leaves it. Each change of mode
is a node of the graph (kept by dead-code elimination: `_set` is impure), so whoever runs the
graph runs the ops between them in that mode: the eager backend, and AOT autograd, whose
backward then has no path through the block, as eager's has none. While tracing, the real mode
is set too, so the fake values made inside do not require grad; convert_frame.py restores the
mode the frame started in however tracing ends. TorchDynamo does the same
(`torch._C._set_grad_enabled` nodes).

A graph break inside a block leaves it and enters it again in the resume function ([Note: a
break inside a grad mode block] in graph_break.py): the block's `__exit__` is handed over as a
`GradModeExit`, which the resume function's trace starts inside of.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from minitorch.autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from minitorch.autograd.grad_mode import _set
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.fx.graph import _IMPURE_TARGETS

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator

GRAD_MODE_MANAGERS = (no_grad, enable_grad, set_grad_enabled)


def set_grad_mode(tx: InstructionTranslator, mode: bool) -> None:
    """Switch the graph (a node) and the tracing (the real mode) to `mode`."""
    node = tx.output.graph.call_function(_set, (mode,))
    node.meta["val"] = None
    tx.output.locate(node)
    tx.output.mode_changes.append(node)
    _set(mode)


class GradModeVariable(VariableTracker):
    """`no_grad()` & co, made while tracing: `mode` inside the block, `previous` after it."""

    def __init__(self, mode: bool, previous: bool, entered: bool = False) -> None:
        super().__init__(None)
        self.mode = mode
        self.previous = previous
        self.entered = entered  # set_grad_enabled(mode) sets the mode when it is called

    @classmethod
    def make(
        cls,
        tx: InstructionTranslator,
        manager: type,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> GradModeVariable:
        if manager is set_grad_enabled:
            if len(args) != 1 or kwargs or not args[0].is_python_constant():
                raise Unsupported("set_grad_enabled() with a mode not known while tracing")
            made = cls(bool(args[0].as_python_constant()), is_grad_enabled(), entered=True)
            set_grad_mode(tx, made.mode)
            return made
        if args or kwargs:
            raise Unsupported(f"{manager.__name__}() with arguments (as a decorator)")
        return cls(manager is enable_grad, is_grad_enabled())

    def python_type(self) -> type:
        return object

    def enter(self, tx: InstructionTranslator) -> VariableTracker:
        """BEFORE_WITH: set the mode; push what the block's end calls."""
        self.previous = self.previous if self.entered else is_grad_enabled()
        if not self.entered:
            set_grad_mode(tx, self.mode)
        tx.with_blocks.append(self)
        return GradModeExitVariable(self)

    def describe(self) -> str:
        return f"a grad mode manager ({'enable' if self.mode else 'disable'} grad)"


class GradModeExitVariable(VariableTracker):
    """The `__exit__` of a grad mode (or autocast) block, called with (None, None, None) when
    it ends."""

    def __init__(self, manager: VariableTracker) -> None:
        super().__init__(None)
        self.manager = manager  # a GradModeVariable, or an AutocastVariable

    def python_type(self) -> type:
        return type(print)

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if tx.with_blocks and tx.with_blocks[-1] is self.manager:
            tx.with_blocks.pop()
        if isinstance(self.manager, GradModeVariable):
            set_grad_mode(tx, self.manager.previous)
        return constant(None)

    def describe(self) -> str:
        return "the end of a grad mode block"


class GradModeExit:
    """The real `__exit__` of a grad mode block that a graph break left, handed to the resume
    function on its stack: called at the block's end (or with its exception), it sets the
    mode back to what it was before the block, as the manager's own __exit__ does."""

    def __init__(self, previous: bool) -> None:
        self.previous = previous

    def __call__(self, *exc_info: Any) -> None:
        _set(self.previous)  # None: an exception goes on

    def __repr__(self) -> str:
        return f"GradModeExit(previous={self.previous})"


def resumed_block(tx: InstructionTranslator, previous: bool) -> GradModeExitVariable:
    """A resume function's trace starts inside the block whose GradModeExit it was handed
    (in the mode the block set, which the transformed code set before calling it)."""
    manager = GradModeVariable(is_grad_enabled(), previous, entered=True)
    tx.with_blocks.append(manager)
    return GradModeExitVariable(manager)


class GradModeManagerClassVariable(VariableTracker):
    """`minitorch.no_grad` & co, read from the frame: calling one makes a GradModeVariable."""

    def __init__(self, manager: type, source: Any) -> None:
        super().__init__(source)
        self.manager = manager

    def python_type(self) -> type:
        return type

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if not tx.output.trace_with_blocks:  # a second trace (convert_frame.py): run it for
            raise Unsupported(
                f"minitorch.{self.manager.__name__}() around code that cannot be traced"
            )  # real at a graph break, with what follows
        return GradModeVariable.make(tx, self.manager, args, kwargs)

    def describe(self) -> str:
        return f"minitorch.{self.manager.__name__}"


def is_grad_mode_manager(value: Any) -> bool:
    return any(value is m for m in GRAD_MODE_MANAGERS)


# [Note: autocast in compiled code]
# minitorch's autocast changes no value (minitorch/amp/autocast_mode.py), so a block of it is
# traced as its body alone: the manager is made for real while tracing (its argument checks and
# warnings are eager's), and entering and leaving it are no nodes. Nothing in the graph can
# read the autocast state: `is_autocast_enabled()` is not traced, and, inside a block, makes
# the frame be traced again with a break at the block (convert_frame.py), like no_grad's.


def is_autocast_class(value: Any) -> bool:
    import minitorch

    return isinstance(value, type) and issubclass(value, minitorch.amp.autocast)


class AutocastClassVariable(GradModeManagerClassVariable):
    """`minitorch.autocast` & co, read from the frame (see [Note: autocast in compiled code])."""

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if not tx.output.trace_with_blocks or not all(
            v.is_python_constant() for v in [*args, *kwargs.values()]
        ):
            raise Unsupported(
                f"{self.describe()}() around code that cannot be traced, or with "
                "arguments not known while tracing"
            )
        try:
            manager = self.manager(
                *[a.as_python_constant() for a in args],
                **{k: v.as_python_constant() for k, v in kwargs.items()},
            )
        except Exception as e:  # eager raises it again, at the user's line
            raise Unsupported(f"{self.describe()}() raised {type(e).__name__}: {e}") from e
        return AutocastVariable(manager)


class AutocastVariable(VariableTracker):
    """An autocast manager made while tracing: its block is its body."""

    def __init__(self, manager: Any) -> None:
        super().__init__(None)
        self.manager = manager

    def python_type(self) -> type:
        return type(self.manager)

    def enter(self, tx: InstructionTranslator) -> VariableTracker:
        tx.with_blocks.append(self)
        return GradModeExitVariable(self)

    def describe(self) -> str:
        return f"an autocast block ({self.manager.device})"


_IMPURE_TARGETS.add(_set)  # a mode change has no users; dead-code elimination keeps it
