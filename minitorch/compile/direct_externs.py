"""Extern steps that call their op's eager kernel, not the dispatcher: an extra.

    call = direct_externs.call(wrapper, node, through_op)   # output_code.py's extern_step

[Note: extern steps without the dispatcher]
An extern step calls its op, `ops.mm(a, b)`, which is the dispatcher (minitorch/dispatch.py):
it keys the meta cache on every argument, looks for dispatch modes, checks requires_grad, and
only then calls the eager kernel on the arrays. In a compiled graph all of that was decided
when the graph was traced (the op's rule ran on these shapes, and AOT autograd, not the op,
differentiates the graph), and it costs ~3 us a step: a GPT decode step runs 120 extern steps.
With config.direct_externs (an extra: [Note: the core and its extras] in config.py), a step on
the CPU calls the kernel itself and wraps the array as the dtype the graph recorded:

    mm = ___extern_mm(a, b) if ___modes() else ___run_kernel(___extern_mm, ___float32,
                                                             a._data, b._data)

It goes through the op after all while a dispatch mode is active (one that watches or fakes
every op must see these too), and always for what the dispatcher does more for: composites,
half-precision results (computed in float32, then rounded), several outputs, tensors inside
lists (cat's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from minitorch.dispatch import current_modes
from minitorch.ops.registry import OpDef
from minitorch.tensor import Tensor
from tracer.fx.node import Node, map_arg

if TYPE_CHECKING:
    from minitorch.compile.output_code import WrapperCode


def call(wrapper: WrapperCode, node: Node, through_op: str) -> str:
    """The code of `node`'s step: its kernel called directly where it may be, or else
    `through_op` as it is."""
    if not _direct(node):
        return through_op
    data = lambda a: f"{wrapper.local_of[a]}._data" if isinstance(a, Node) else wrapper.literal(a)
    dtype = node.meta["val"].dtype
    args = [wrapper.bind(node.target, f"extern_{node.name}"), wrapper.bind(dtype.np, dtype.name)]
    args += [data(a) for a in node.args]
    args += [f"{k}={data(v)}" for k, v in node.kwargs.items()]
    wrapper.namespace.setdefault("___modes", current_modes)
    wrapper.namespace.setdefault("___run_kernel", run_kernel)
    return f"{through_op} if ___modes() else ___run_kernel({', '.join(args)})"


def _direct(node: Node) -> bool:
    """Whether the step for `node` may call its op's eager kernel itself."""
    op, val = node.target, node.meta.get("val")
    if not isinstance(op, OpDef) or op.impl is None or op.decomposition is not None:
        return False
    if not isinstance(val, Tensor) or val.dtype.rounding is not None:
        return False
    nested: list[Node] = []
    for a in (*node.args, *node.kwargs.values()):
        if isinstance(a, Node):
            if not isinstance(a.meta.get("val"), Tensor):
                return False
        else:
            map_arg(a, nested.append)  # a node inside a list (cat's tensors)
    return not nested


def run_kernel(op: OpDef, result_dtype: np.dtype, /, *args: Any, **kwargs: Any) -> Tensor:
    """`op`'s eager kernel on numpy arrays, its result a tensor of `result_dtype` (numpy returns
    a scalar for a 0-d result, and keeps float64 where an operand was a float64 scalar). The
    first two are positional-only: an op's own keywords (to_copy's `dtype`) pass through."""
    result = op.impl(np, *args, **kwargs)
    if type(result) is not np.ndarray or result.dtype != result_dtype:
        result = np.asarray(result, dtype=result_dtype)
    return Tensor._from_array(result)
