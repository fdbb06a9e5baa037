"""The user-facing functions: `minitorch.sin(x)`, `minitorch.sum(x, dim=1)`, ...

Each normalises PyTorch's signature (keyword names, defaults, `alpha=`, negative dims) and calls
the op table (`minitorch.ops`). Bytecode capture records these public functions in the graphs it
builds (`minitorch.sin`), as Dynamo records `torch.sin`; AOT autograd then records the op-table
calls underneath (`minitorch.ops.sin`), as AOTAutograd records aten ops.

One file per family of ops, each with the functions and a mixin of the matching Tensor methods.
"""

from minitorch.functional.linalg import LinalgMethods
from minitorch.functional.pointwise import (
    PointwiseMethods,
    add,
    cos,
    div,
    exp,
    log,
    mul,
    neg,
    pow,
    sin,
    sub,
)
from minitorch.functional.reductions import ReductionMethods, mean, sum
from minitorch.functional.views import ViewMethods, expand, reshape

__all__ = [
    "LinalgMethods", "PointwiseMethods", "ReductionMethods", "ViewMethods",
    "add", "cos", "div", "exp", "expand", "log", "mean", "mul", "neg", "pow", "reshape", "sin",
    "sub", "sum",
]
