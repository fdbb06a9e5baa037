"""minitorch: a readable miniature of PyTorch 2, from eager tensors to LLVM kernels.

`import minitorch as torch` works for the subset in the README's API list. The pipeline, in order:
minitorch (this package: tensors, the op table, autograd) -> tracer (graphs, bytecode
capture, AOT autograd) -> ir (loop-level IR, fusion) -> codegen (LLVM for the CPU).

[Note: lazy facades] `minitorch.fx`, `.compile`, `.export`, `.jit` and `._dynamo` are the way up
into the stages built on this package, as torch.fx and torch.compile are in PyTorch. They reach
into tracer (and beyond) only when used, so that `import minitorch` loads the eager core alone:
the functions import inside their bodies, and `fx`, whose names are tracer.fx's classes
themselves, is imported on first access (`__getattr__` below). tests/test_layering.py checks.
"""

import importlib
from types import ModuleType

from minitorch import (
    _dynamo,
    accelerator,
    amp,
    autograd,
    backends,
    cpu,
    cuda,
    distributions,
    export,
    functional,
    jit,
    nn,
    ops,
    optim,
    tensor_types,
    testing,
    unsupported,
    utils,
)
from minitorch import config as _config
from minitorch.amp import autocast, get_autocast_dtype, is_autocast_enabled
from minitorch.autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from minitorch.autograd.grad_mode import inference_mode
from minitorch.backends import get_float32_matmul_precision, set_float32_matmul_precision
from minitorch.compile import compile  # the function; `python -m` still finds the package
from minitorch.device import device
from minitorch.dtype import DType, bfloat16, float16, float32, float64, int32, int64
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
    eye,
    from_numpy,
    full,
    linspace,
    manual_seed,
    ones,
    rand,
    randint,
    randn,
    tensor,
    zeros,
)
from minitorch.factories_like import (
    empty_like,
    full_like,
    ones_like,
    rand_like,
    randint_like,
    randn_like,
    zeros_like,
)
from minitorch.functional import *  # noqa: F403 - every public op function
from minitorch.generator import Generator
from minitorch.heap import keep_freed_memory_mapped
from minitorch.memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from minitorch.random import multinomial, randperm
from minitorch.serialization import load, save
from minitorch.tensor import Size, Tensor
from minitorch.tensor_types import *  # noqa: F403 - FloatTensor, ..., as_tensor
from minitorch.type_info import finfo, iinfo
from minitorch.unsupported import *  # noqa: F403 - complex64, polar, sparse_coo_tensor, ...

if _config.keep_freed_memory_mapped:  # [Note: the C heap's page faults] in heap.py
    keep_freed_memory_mapped()

# PyTorch's other names of the dtypes
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001

# NOTE: not "fx": a star import would load it, and tracer with it ([Note: lazy facades]).
__all__ = [
    "AutogradError",
    "CompileError",
    "DeviceError",
    "DTypeError",
    "DType",
    "DataDependentError",
    "MinitorchError",
    "ShapeError",
    "Size",
    "Tensor",
    "_dynamo",
    "arange",
    "autograd",
    "bool",
    "compile",
    "device",
    "double",
    "empty",
    "enable_grad",
    "export",
    "float",
    "float32",
    "float64",
    "from_numpy",
    "full",
    "functional",
    "int32",
    "int64",
    "is_grad_enabled",
    "jit",
    "manual_seed",
    "nn",
    "no_grad",
    "ones",
    "ones_like",
    "ops",
    "optim",
    "rand",
    "rand_like",
    "randint",
    "randn",
    "randn_like",
    "set_grad_enabled",
    "tensor",
    "zeros",
    "zeros_like",
    *functional.__all__,  # add, sin, sum, ...: one list per family of ops
    # more of the tensor API
    "Generator",
    "cuda",
    "empty_like",
    "eye",
    "full_like",
    "inference_mode",
    "linspace",
    "load",
    "long",
    "multinomial",
    "randint_like",
    "randperm",
    "save",
    "testing",
    "utils",  # utils.data: Dataset, DataLoader
    # framework flags, precision
    "accelerator",
    "amp",
    "autocast",
    "backends",
    "bfloat16",
    "cpu",
    "float16",
    "finfo",
    "get_autocast_dtype",
    "get_float32_matmul_precision",
    "half",
    "iinfo",
    "is_autocast_enabled",
    "set_float32_matmul_precision",
    # tensor functions (the functions themselves are in functional's list)
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "memory_format",
    "preserve_format",
    *tensor_types.__all__,
    *unsupported.__all__,
    # nn, optim and distributions that real programs need
    "distributions",
]


def __getattr__(name: str) -> ModuleType:
    """`minitorch.fx` on first access (PEP 562); see [Note: lazy facades]."""
    if name == "fx":
        return importlib.import_module("minitorch.fx")  # which also sets minitorch.fx
    raise AttributeError(f"module 'minitorch' has no attribute {name!r}")
