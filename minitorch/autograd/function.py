"""`autograd.Function`: user-defined ops with a hand-written backward.

    class Exp(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)

`apply` runs `forward` with grad mode off (its ops record nothing), then gives the outputs one
backward node whose `apply` calls the user's `backward`. Because `backward` is written in
minitorch ops, it also runs under AOT autograd's tracing mode like any derivative formula.
"""

from __future__ import annotations

from minitorch.autograd.grad_mode import is_grad_enabled, no_grad
from minitorch.autograd.graph import Node
from minitorch.errors import AutogradError, at_user_line


class FunctionCtx:
    """What `forward` leaves for `backward`: saved tensors and any attribute it sets."""

    def __init__(self, inputs: tuple) -> None:
        self.needs_input_grad = tuple(getattr(a, "requires_grad", False) for a in inputs)
        self._saved: tuple | None = ()
        self._non_differentiable: set[int] = set()

    def save_for_backward(self, *tensors) -> None:
        self._saved = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:
            raise AutogradError(
                "trying to backward through the graph a second time (the saved "
                "tensors were freed); pass retain_graph=True to backward()"
            )
        return self._saved

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable.update(id(t) for t in tensors)


class Function:
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grads)`; call `apply`."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args, **kwargs):
        raise NotImplementedError("autograd.Function subclasses must define forward()")

    @staticmethod
    def backward(ctx: FunctionCtx, *grads):
        raise NotImplementedError("autograd.Function subclasses must define backward()")

    @classmethod
    def apply(cls, *args):
        from minitorch.tensor import Tensor

        ctx = FunctionCtx(args)
        with no_grad():
            out = cls.forward(ctx, *args)
        outputs = out if isinstance(out, tuple) else (out,)
        if is_grad_enabled() and any(ctx.needs_input_grad):
            tensors = [
                o for o in outputs if isinstance(o, Tensor) and id(o) not in ctx._non_differentiable
            ]
            FunctionBackward(cls, ctx, args, len(outputs)).attach_outputs(outputs, tensors)
        return out


class FunctionBackward(Node):
    """The backward node of one `Function.apply` call."""

    def __init__(self, fn: type[Function], ctx: FunctionCtx, inputs: tuple, num_outputs: int):
        super().__init__(inputs, num_outputs)
        self.fn = fn
        self.ctx = ctx

    def attach_outputs(self, outputs: tuple, differentiable: list) -> None:
        self.output_shapes = [tuple(getattr(o, "shape", ())) for o in outputs]
        for i, out in enumerate(outputs):
            if any(out is d for d in differentiable):
                out.requires_grad = True
                out.grad_fn = self
                out._output_nr = i

    def apply(self, grads: tuple) -> tuple:
        result = self.fn.backward(self.ctx, *grads)
        result = result if isinstance(result, tuple) else (result,)
        if len(result) != len(self.inputs):
            raise AutogradError(
                at_user_line(
                    f"{self.fn.__name__}.backward returned {len(result)} gradients, but forward "
                    f"took {len(self.inputs)} inputs"
                )
            )
        return result

    def release(self) -> None:
        self.ctx._saved = None

    def name(self) -> str:
        return f"{self.fn.__name__}Backward"
