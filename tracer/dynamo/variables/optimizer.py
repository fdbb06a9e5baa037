"""`OptimizerVariable`: an optimizer read from the frame, for `opt.zero_grad()` in a compiled
training step.

    def step(x, y):                     the graph: model(x), the loss
        opt.zero_grad()                 replayed after the graph: G['opt'].zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()                 a graph break: the call runs for real, then a resume
        opt.step()                      a graph break too: the update runs eagerly
        return loss

zero_grad(set_to_none=True), the default, only sets each parameter's `.grad` to None. A graph
never reads `.grad` (reading it is unsupported), so running the call after the graph instead
of before is the same program: it is recorded as a side effect (side_effects.py) and replayed
before any graph break's call, `backward()` included. With set_to_none=False it writes zeros
into tensors a graph might hold, so it runs as a graph break, as does every other method:
PyTorch's Dynamo traces `step()` too; here the update runs eagerly.

Guards: the optimizer's type (TYPE_MATCH, at wrap), and that `zero_grad` is still the class's
function and is not shadowed on the instance, as for any method (user_object.py).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from minitorch.optim.optimizer import Optimizer
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import AttrSource, Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant
from tracer.dynamo.variables.user_object import guard_method

if TYPE_CHECKING:
    from tracer.dynamo.symbolic_convert import InstructionTranslator


class OptimizerVariable(VariableTracker):
    """An optimizer with a source (`G['opt']`, `L['self'].opt`)."""

    def __init__(self, optimizer: Optimizer, source: Source) -> None:
        super().__init__(source)
        self.optimizer = optimizer

    def python_type(self) -> type:
        return type(self.optimizer)

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        method = inspect.getattr_static(type(self.optimizer), name, None)
        if not inspect.isfunction(method) or name in vars(self.optimizer):
            raise Unsupported(f"attribute .{name} of {self.describe()}")
        guard_method(tx, self, name)
        return OptimizerMethodVariable(self, name, method)

    def describe(self) -> str:
        return f"the optimizer {type(self.optimizer).__name__} ({self.source.name()})"


class OptimizerMethodVariable(VariableTracker):
    """`opt.zero_grad` & co, waiting for their call; rebuilt from its source at a break."""

    def __init__(self, optimizer: OptimizerVariable, name: str, method: Any) -> None:
        super().__init__(AttrSource(optimizer.source, name))
        self.optimizer = optimizer
        self.name = name
        self.method = method

    def python_type(self) -> type:
        return type(getattr(self.optimizer.optimizer, self.name))

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        if self.method is not Optimizer.zero_grad:
            raise Unsupported(f"calling {self.describe()} (only zero_grad is replayed)")
        try:
            bound = inspect.signature(self.method).bind(self.optimizer, *args, **kwargs)
        except TypeError as e:
            raise Unsupported(f"calling {self.describe()}: {e}") from e
        set_to_none = bound.arguments.get("set_to_none", constant(True))
        if not (set_to_none.is_python_constant() and set_to_none.as_python_constant() is True):
            raise Unsupported(
                f"{self.describe()}(set_to_none=False) writes zeros into the "
                "gradients (it runs eagerly)"
            )
        tx.output.side_effects.call_method(self.optimizer, self.name)
        return constant(None)

    def describe(self) -> str:
        return f"the method {type(self.optimizer.optimizer).__name__}.{self.name}"
