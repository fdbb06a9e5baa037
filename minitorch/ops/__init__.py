"""The op table: every op minitorch knows, callable as `minitorch.ops.<name>(...)`.

These are the dispatch-level ops (PyTorch's aten ops): AOT autograd graphs are written in
them. See [Note: the op table] in registry.py. One file per family of ops:

    pointwise.py   elementwise arithmetic, powers, functions (sin, exp, ...), conversions
    selection.py   comparisons, where, maximum/minimum, and relu, clamp, masked_fill, isclose
    reductions.py  sum, amax, argmax, topk, softmax, ... and gather/scatter_add
    views.py       results that share memory with their input: reshape, permute, x[...], cat
    indexing.py    advanced indexing: x[idx] and x[idx] = v with integer tensors
    linalg.py      mm, bmm, matmul
    attention.py   fused_attention, which only the compiler writes (one kernel for attention)
    nn.py          what only layers need: im2col/col2im (conv, pools), embedding, dropout
                   (nn_kernels.py: im2col's and col2im's numpy kernels)
    factories.py   tensors made from a shape: full, arange, and the random uniform, normal, randint
    extra.py       outer, diag, repeat, flip, std, any/all, and the scans cumsum, cumprod
    logical.py     logical_* and bitwise_* ops, isnan, isinf, isfinite

docs/primitives.md lists the primitives, with why each one is not a composite.
"""

# Each family lists the ops it registers in its __all__.
from minitorch.ops.attention import *  # noqa: F403
from minitorch.ops.extra import *  # noqa: F403
from minitorch.ops.factories import *  # noqa: F403
from minitorch.ops.indexing import *  # noqa: F403
from minitorch.ops.linalg import *  # noqa: F403
from minitorch.ops.logical import *  # noqa: F403
from minitorch.ops.nn import *  # noqa: F403
from minitorch.ops.pointwise import *  # noqa: F403
from minitorch.ops.reductions import *  # noqa: F403
from minitorch.ops.registry import OPS as OPS
from minitorch.ops.registry import OpDef as OpDef
from minitorch.ops.registry import TensorMeta as TensorMeta
from minitorch.ops.selection import *  # noqa: F403
from minitorch.ops.views import *  # noqa: F403
