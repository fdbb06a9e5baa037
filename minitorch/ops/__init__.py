"""The op table: every op minitorch knows, callable as `minitorch.ops.<name>(...)`.

These are the dispatch-level ops (PyTorch's aten ops): AOT autograd graphs are written in
them. See [Note: the op table] in registry.py. One file per family of ops:

    pointwise.py   elementwise arithmetic and functions (add, sin, ...)
    reductions.py  sums over dims (sum, mean)
    views.py       results that share memory with their input (expand, reshape)
"""

from minitorch.ops.pointwise import add, cos, div, exp, log, mul, neg, pow, sin, sub, to_copy
from minitorch.ops.reductions import mean, sum
from minitorch.ops.registry import OPS, OpDef, TensorMeta
from minitorch.ops.views import expand, reshape

__all__ = [
    "OPS", "OpDef", "TensorMeta",
    "add", "cos", "div", "exp", "expand", "log", "mean", "mul", "neg", "pow", "reshape",
    "sin", "sub", "sum", "to_copy",
]
