"""The reverse-mode engine: `tensor.backward()` and `autograd.grad()`.

    1. walk the backward graph from the outputs' grad_fn nodes and count, for each node,
       how many gradients will flow into it (its dependencies)
    2. visit nodes in reverse topological order: a node runs once every gradient for its
       outputs has arrived, and passes its input gradients along the edges
    3. at leaves (tensors with no grad_fn that require grad), accumulate into `.grad`
       (backward) or collect the result (grad)

The engine runs the derivative formulas with grad mode off, so they record nothing, unless
`create_graph=True` asks for a differentiable backward. The formulas go through the dispatcher,
so under AOT autograd's tracing mode they are recorded into the joint graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from minitorch.autograd.grad_mode import enable_grad, no_grad
from minitorch.errors import AutogradError, at_user_line


def _topological_nodes(roots: list) -> list:
    """Every node reachable from `roots`, each after all nodes that feed it gradients."""
    order, seen = [], set()
    stack = [(node, False) for node in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for inp in node.inputs:
            fn = getattr(inp, "grad_fn", None)
            if fn is not None and id(fn) not in seen:
                stack.append((fn, False))
    order.reverse()  # consumers first
    return order


def run_backward(
    outputs: Sequence,
    grad_outputs: Sequence,
    inputs: Sequence | None = None,
    retain_graph: bool = False,
    create_graph: bool = False,
    on_node: Callable[[object], None] | None = None,
) -> list | None:
    """Propagate `grad_outputs` from `outputs`.

    Fills `.grad` of the leaves, or, when `inputs` is given, returns their gradients instead.
    `on_node(node)` is called before each node runs: a tracer that records the backward
    learns which forward op each recorded op differentiates (tracer/aot/joint.py).
    """
    from minitorch.ops import add, to_copy

    pending: dict[int, list] = {}  # id(node) -> gradient per output of that node
    # the memory of the user's gradients, and of each gradient a leaf's .grad took: a leaf
    # given any of it again copies it ([Note: a leaf's .grad] in minitorch/tensor.py)
    held = {_memory(grad) for grad in grad_outputs}
    leaf_grads: dict[int, object] = {}  # id(tensor) -> gradient, for leaves and `inputs`
    wanted = {id(t) for t in inputs} if inputs is not None else None

    def deliver(tensor, grad) -> None:
        if grad is None or not tensor.requires_grad:
            return
        if grad.dtype is not tensor.dtype:  # float32 x + float64 y: x's gradient is float32
            grad = to_copy(grad, dtype=tensor.dtype)
        if wanted is not None and id(tensor) in wanted:
            previous = leaf_grads.get(id(tensor))
            leaf_grads[id(tensor)] = grad if previous is None else add(previous, grad)
            if tensor.grad_fn is None:
                return
        if tensor.grad_fn is None:
            if tensor._base is not None and not tensor._view_differentiable:
                return  # a view made under no_grad has no gradient edge: [Note: views made
                #         under no_grad] in minitorch/tensor.py
            if wanted is None:
                memory = _memory(grad)
                tensor._accumulate_grad(grad, shared=memory in held)
                held.add(memory)
            return
        slots = pending.setdefault(id(tensor.grad_fn), [None] * tensor.grad_fn.num_outputs)
        nr = tensor._output_nr
        slots[nr] = grad if slots[nr] is None else add(slots[nr], grad)

    roots = []
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise AutogradError(
                at_user_line(
                    f"element {i} of tensors does not require grad and does not have a grad_fn"
                )
            )
        if out.grad_fn is not None:
            roots.append(out.grad_fn)
    for i, (out, grad) in enumerate(zip(outputs, grad_outputs)):
        if tuple(grad.shape) != tuple(out.shape):  # else formulas would broadcast it silently
            raise AutogradError(
                at_user_line(
                    f"the gradient for output {i} has shape {tuple(grad.shape)}, "
                    f"but the output has shape {tuple(out.shape)}"
                )
            )

    mode = enable_grad() if create_graph else no_grad()
    with mode:
        for out, grad in zip(outputs, grad_outputs):
            deliver(out, grad)
        for node in _topological_nodes(roots):
            grads = pending.pop(id(node), None)
            if grads is None:
                continue
            if on_node is not None:
                on_node(node)
            input_grads = node.apply(tuple(grads))
            if not retain_graph and hasattr(node, "release"):
                node.release()
            for inp, g in zip(node.inputs, input_grads):
                if getattr(inp, "requires_grad", False):
                    deliver(inp, g)
    if inputs is None:
        return None
    return [leaf_grads.get(id(t)) for t in inputs]


def _memory(tensor) -> int:
    """Which array owns `tensor`'s memory (a view's `.base`, numpy's and cupy's alike)."""
    array = tensor._data
    while getattr(array, "base", None) is not None:
        array = array.base
    return id(array)
