"""minitorch: a readable miniature of PyTorch 2, from eager tensors to LLVM kernels.

`import minitorch as torch` works for the subset in the SPEC. The pipeline, in order:
minitorch (this package: tensors, the op table, autograd) -> tracer (graphs, bytecode
capture, AOT autograd) -> ir (loop-level IR, fusion) -> codegen (LLVM for the CPU).
"""

from minitorch import (  # noqa: E402, I001 - after Tensor, which they build on
    _dynamo,  # noqa: E402
    autograd,
    nn,
    ops,
)
from minitorch.autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from minitorch.compile import compile  # noqa: E402 - the function shadows the CLI package
from minitorch.device import device
from minitorch.dtype import DType, float32, float64, int32, int64
from minitorch.dtype import bool_ as bool
from minitorch.errors import (
    AutogradError,
    CompileError,
    DataDependentError,
    DeviceError,
    DTypeError,
    MinitorchError,
    ShapeError,
)
from minitorch.factories import (
    arange,
    empty,
    from_numpy,
    full,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from minitorch.functional import (
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
from minitorch.tensor import Size, Tensor

float = float32  # noqa: A001 - PyTorch's alias
double = float64

__all__ = [
    "AutogradError", "CompileError", "DeviceError", "DTypeError", "DType", "DataDependentError",
    "MinitorchError", "ShapeError", "Size", "Tensor", "_dynamo", "add", "arange", "autograd",
    "bool", "compile", "cos", "device", "div", "double", "empty", "enable_grad", "exp", "expand",
    "float", "float32", "float64", "from_numpy", "full", "int32", "int64", "is_grad_enabled",
    "log", "manual_seed", "mean", "mul", "neg", "nn", "no_grad", "ones", "ones_like", "ops",
    "pow", "rand", "rand_like", "randn", "randn_like", "reshape", "set_grad_enabled", "sin",
    "sub", "sum", "tensor", "zeros", "zeros_like",
]
