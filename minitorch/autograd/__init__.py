"""Reverse-mode automatic differentiation: grad mode, backward nodes and the engine."""

from __future__ import annotations

from collections.abc import Sequence

from minitorch.autograd.engine import run_backward
from minitorch.autograd.function import Function, FunctionCtx
from minitorch.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from minitorch.autograd.graph import Node, OpBackward


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple:
    """Gradients of `outputs` with respect to `inputs`, without touching `.grad`."""
    from minitorch.errors import AutogradError
    from minitorch.factories_like import ones_like

    outputs = list(outputs) if isinstance(outputs, Sequence) else [outputs]
    inputs = list(inputs) if isinstance(inputs, Sequence) else [inputs]
    if grad_outputs is None:
        grad_outputs = [ones_like(o) if o.numel() == 1 else None for o in outputs]
    elif not isinstance(grad_outputs, Sequence):
        grad_outputs = [grad_outputs]
    for out, g in zip(outputs, grad_outputs):
        if g is None:
            raise AutogradError(
                f"grad can be implicitly created only for scalar outputs, got shape {out.shape}"
            )
    keep = create_graph if retain_graph is None else retain_graph
    grads = run_backward(
        outputs, grad_outputs, inputs, retain_graph=keep, create_graph=create_graph
    )
    if not allow_unused and any(g is None for g in grads):
        raise AutogradError(
            "one of the differentiated tensors was not used in the graph; "
            "pass allow_unused=True if this is expected"
        )
    return tuple(grads)


__all__ = [
    "Function",
    "FunctionCtx",
    "Node",
    "OpBackward",
    "enable_grad",
    "grad",
    "is_grad_enabled",
    "no_grad",
    "run_backward",
    "set_grad_enabled",
]
