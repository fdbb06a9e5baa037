"""The op table: every op minitorch knows, callable as `minitorch.ops.<name>(...)`.

These are the dispatch-level ops (PyTorch's aten ops): AOT autograd graphs are written in
them. See [Note: the op table] in registry.py.
"""

from minitorch.ops.registry import OPS, OpDef, TensorMeta
from minitorch.ops.table import (
    add,
    cos,
    div,
    exp,
    expand,
    log,
    mean,
    mul,
    neg,
    pow,
    reshape,
    sin,
    sub,
    sum,
)

__all__ = [
    "OPS", "OpDef", "TensorMeta",
    "add", "cos", "div", "exp", "expand", "log", "mean", "mul", "neg", "pow", "reshape",
    "sin", "sub", "sum",
]
