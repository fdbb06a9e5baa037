"""Backward nodes: what `tensor.grad_fn` points at.

A `Node` knows the tensors it was computed from (`inputs`, the edges of the backward graph)
and how to turn the gradients of its outputs into gradients of those inputs (`apply`). Eager
ops get an `OpBackward`, whose `apply` runs the op table's derivative formula; AOT autograd's
compiled functions define their own Node that runs a compiled backward graph.
"""

from __future__ import annotations

from minitorch.errors import AutogradError


class Node:
    """One step of the backward graph."""

    def __init__(self, inputs: tuple, num_outputs: int = 1) -> None:
        self.inputs = inputs  # the forward inputs; tensors that require grad are edges
        self.num_outputs = num_outputs  # how many forward outputs point at this node
        self.output_shapes: list[tuple[int, ...]] = []

    def attach(self, outputs: tuple) -> None:
        """Make each floating-point tensor of `outputs` a non-leaf result of this node.

        Integer outputs (the indices of `max`) have no gradient and stay leaves.
        """
        self.num_outputs = len(outputs)
        self.output_shapes = [tuple(o.shape) for o in outputs]
        for i, out in enumerate(outputs):
            if not out.dtype.is_floating_point:
                continue
            out.requires_grad = True
            out.grad_fn = self
            out._output_nr = i

    def apply(self, grads: tuple) -> tuple:
        """Gradients of the inputs from the gradients of the outputs (None = zero)."""
        raise NotImplementedError

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()}>"


class OpBackward(Node):
    """The backward of one eager op: calls the op table's derivative formula."""

    def __init__(self, op, args: tuple, kwargs: dict) -> None:
        super().__init__(args)
        self.op = op
        self.kwargs = kwargs
        self.output = None  # the forward output(s), set by attach (some formulas reuse it)
        self.freed = False

    def attach(self, outputs: tuple) -> None:
        super().attach(outputs)
        self.output = outputs[0] if len(outputs) == 1 else outputs

    def apply(self, grads: tuple) -> tuple:
        if self.freed:
            raise AutogradError(
                f"{self.name()}: trying to backward through the graph a second time; "
                "pass retain_graph=True to the first backward() to keep it"
            )
        # A single-output op's formula takes one gradient; a multi-output op's takes the tuple
        # (None where no gradient flowed), and the tuple of outputs.
        grad = grads[0] if self.num_outputs == 1 else grads
        return self.op.backward(grad, self.output, *self.inputs, **self.kwargs)

    def release(self) -> None:
        """Drop saved tensors after backward (retain_graph=False)."""
        self.freed = True
        self.output = None

    def name(self) -> str:
        return "".join(p.capitalize() for p in self.op.name.split("_")) + "Backward0"
