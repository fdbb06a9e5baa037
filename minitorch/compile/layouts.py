"""Outputs in eager's layout: a compiled graph's outputs are laid out in memory as eager's are.

[Note: output layouts]
A kernel writes its output contiguously (row-major). Eager's pointwise ops do not always:
numpy lays a result out like its inputs, so `x.t().sin()` is transposed in memory, and so is
`y * 2` for a transposed input `y`. Values are the same either way; what differs is what a
caller does next with the memory. `out.flatten()` is a view of a row-major tensor and a copy
of a transposed one, so a later `flat[0].mul_(2)` writes `out` in one case and not in the other.

So the driver asks eager once, when it compiles: it runs the forward graph's own code on the
example inputs (the random-number state saved and restored, so the user's sequence does not
move) and notes, for each output that eager lays out other than row-major, the order of its
dims by stride. After each call the kernel's output is copied into that layout. Most graphs
skip both steps: with row-major inputs and no view that reorders memory (permute, expand, a
strided slice), every eager result is row-major too; and an output of at most one dim (a
training step's loss) has no other order. Eager's run is not free: a forward's matmuls, once
more, at compile time.

This is core, not an extra behind a switch: the layout is part of what eager does (law 1), and
the simplest way to match it is this one, a row-major kernel output copied into eager's order.
(PyTorch's Inductor has a switch, `keep_output_stride`; we keep the layout always.)

    run = in_eager_layouts(run, graphs, inputs)   # inductor.py: `run`, or `run` then copies
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from minitorch import counter_rng, factories
from minitorch.autograd.grad_mode import no_grad
from minitorch.device import copy_in_order
from minitorch.errors import MinitorchError
from minitorch.tensor import Tensor
from tracer.aot import AOTGraphs
from tracer.fx import GraphModule

# A dim order, outermost first (row-major is 0, 1, ..., n-1); None: row-major.
Order = tuple[int, ...] | None


def in_eager_layouts(run: Callable, graphs: AOTGraphs, inputs: Sequence[Tensor]) -> Callable:
    """`run` (the compiled forward of `graphs`), with its outputs copied into eager's layouts:
    `run` itself when eager lays out every output row-major."""
    orders = output_orders(graphs, inputs)
    return run if orders is None else lambda *args: relayout(run(*args), orders)


def output_orders(
    graphs: AOTGraphs, inputs: Sequence[Tensor], static: Callable[[], AOTGraphs] | None = None
) -> tuple[Order, ...] | None:
    """Eager's dim order of each of the forward's outputs, where eager may lay one out other
    than row-major (None: all row-major). `static()` gives the graphs traced at the inputs'
    sizes, to run, when `graphs` were traced at others (symbolic_sizes.py)."""
    num_outputs = graphs.spec.num_outputs if graphs.training else None
    if not may_reorder(graphs.forward, inputs, num_outputs):
        return None
    forward = graphs.forward if static is None else static().forward
    return eager_layouts(forward, inputs, num_outputs)  # holds at other sizes


def eager_layouts(
    forward: GraphModule, inputs: Sequence[Tensor], num_outputs: int | None
) -> tuple[Order, ...] | None:
    """The dim order eager gives each of the forward's first `num_outputs` outputs (the
    user's; None: all), or None when all are row-major (or when eager does not run on these
    inputs: then it raises at run time, compiled or not). What the forward saves for the
    backward stays as the backward was compiled for it."""
    state, counters = factories._generator.bit_generator.state, counter_rng.get_state()
    try:
        with no_grad():
            outputs = forward(*inputs)
    except MinitorchError:
        return None
    finally:
        factories._generator.bit_generator.state = state
        counter_rng.set_state(counters)  # dropout's generator (minitorch/counter_rng.py)
    orders = tuple(_order(o) if isinstance(o, Tensor) else None for o in outputs[:num_outputs])
    return orders if any(o is not None for o in orders) else None


def relayout(outputs: Sequence, orders: Sequence[Order]) -> tuple:
    """`outputs` with the first len(orders) tensors in their orders, one copy per tensor. An
    output that backward also saved stays as it was among the saved values, and shares the
    copy's version counter: a write into the output still makes backward refuse it."""
    done: dict[int, Tensor] = {}
    result = list(outputs)
    for i, (out, order) in enumerate(zip(outputs, orders)):
        if order is not None and isinstance(out, Tensor) and type(out._data) is np.ndarray:
            if id(out) not in done:
                copy = Tensor._from_array(copy_in_order(out._data, order))
                copy._version_counter = out._shared_version_counter()
                done[id(out)] = copy
            result[i] = done[id(out)]
    return tuple(result)


def may_reorder(forward: GraphModule, inputs: Sequence[Tensor], num_outputs: int | None) -> bool:
    """Could eager lay out one of the forward's first `num_outputs` outputs (None: all) other
    than row-major? (If not, no need to ask it.) An output of at most one dim has only one
    order: a training step's loss never needs eager's run."""
    results = forward.graph.nodes[-1].args[0]
    results = results if isinstance(results, (tuple, list)) else (results,)
    vals = [getattr(r, "meta", {}).get("val") for r in results[:num_outputs]]
    if all(isinstance(v, Tensor) and v.ndim <= 1 for v in vals if v is not None):
        return False  # (a missing val is no tensor: a constant, or None)
    if any(isinstance(x, Tensor) and not x.is_contiguous() for x in inputs):
        return True
    reordering = ("permute", "expand", "index")  # index: a strided slice
    return any(getattr(n.target, "name", None) in reordering for n in forward.graph.nodes)


def _order(t: Tensor) -> Order:
    strides = t.stride()
    order = tuple(sorted(range(t.ndim), key=lambda d: -strides[d]))
    return None if order == tuple(range(t.ndim)) else order
