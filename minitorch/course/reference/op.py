"""The reference solution of the assignment `op`: softplus, end to end, as a plugin.

    python -m minitorch.course grade op --plugin minitorch.course.reference.op

softplus(x, beta=1, threshold=20) = log(1 + e^(beta x)) / beta, and x itself where
beta x > threshold (PyTorch's definition, torch.nn.functional.softplus). One call per stage
([Note: adding an op from a plugin] in minitorch/ops/registry.py):

    eager       the row (kernel, shape rule, derivative), its public names, its samples
    loop IR     its lowering: the same formula in loop-IR ops, fused with its neighbours

Why a primitive: the composite log1p(exp(beta x)) / beta overflows e^(beta x) to inf for
beta x > 88 in float32, and its derivative is then inf / inf = NaN even where `where` picks x;
the primitive's derivative is sigmoid(beta x), which never overflows.
"""

from __future__ import annotations

import numpy as np

from ir.lower_pointwise import operand
from ir.lowering import register_lowering
from ir.nodes import Pointwise
from ir.ops_handler import ops as loop
from minitorch import ops
from minitorch.functional._common import check_tensor
from minitorch.functional.registration import register_function
from minitorch.ops.meta import unary_float
from minitorch.ops.registry import OpDef, register_op
from minitorch.ops.samples import register_samples

# ---- eager: the row ----------------------------------------------------------------------


_float_meta = unary_float("softplus")


def _softplus_meta(x, beta=1.0, threshold=20.0):
    """x's shape; a float dtype (an integer x computes in float32), as sin's."""
    return _float_meta(x)


def _softplus_kernel(xp, x, beta=1.0, threshold=20.0):
    """log(1 + e^(beta x)) / beta, x above the threshold; in x's float dtype."""
    x = x if x.dtype.kind == "f" else x.astype(np.float32)
    bx = x * x.dtype.type(beta)
    with np.errstate(over="ignore"):  # e^(beta x) is inf where the threshold picks x anyway
        soft = xp.log1p(xp.exp(bx)) / x.dtype.type(beta)
    return xp.where(bx > threshold, x, soft).astype(x.dtype)


def _softplus_backward(g, out, x, beta=1.0, threshold=20.0):
    """d/dx = sigmoid(beta x), and 1 above the threshold."""
    bx = ops.mul(x, beta)
    return (ops.where(ops.lt(threshold, bx), g, ops.mul(g, ops.sigmoid(bx))),)


softplus_op = register_op(
    OpDef(
        "softplus",
        "pointwise",
        _softplus_meta,
        impl=_softplus_kernel,
        backward=_softplus_backward,
        lowering="lowered",
    ),
    why="its derivative must be sigmoid(beta x): the composite's is inf / inf above beta x = 88",
)


# ---- eager: the public names -------------------------------------------------------------


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + e^(beta x)) / beta, and x where beta x > threshold, as torch's softplus."""
    check_tensor("softplus", input)
    return ops.softplus(input, beta=beta, threshold=threshold)


softplus = register_function(softplus, tensor_method=True, nn_functional=True)


# ---- eager: the samples ------------------------------------------------------------------


def _numpy_softplus(x, beta=1.0, threshold=20.0):
    bx = x * beta
    return np.where(bx > threshold, x, np.logaddexp(0.0, bx) / beta)


register_samples(
    "softplus",
    [
        ((np.linspace(-4, 4, 17, dtype=np.float32),), {}),
        ((np.linspace(-40, 40, 33),), {"beta": 2.0, "threshold": 10.0}),
        ((np.float32(0.5) * np.arange(-6, 6, dtype=np.float32).reshape(3, 4),), {"beta": 0.5}),
    ],
    _numpy_softplus,
)


# ---- loop IR: the lowering ---------------------------------------------------------------


def _lower_softplus(out, x, beta=1.0, threshold=20.0):
    """The kernel's formula in loop-IR ops:
    where(beta x > threshold, x, log1p(e^(beta x)) / beta)."""
    load = operand(x, out.shape, out.dtype)

    def inner_fn(index):
        value = load(index)
        bx = loop.mul(value, loop.constant(beta, out.dtype))
        soft = loop.div(loop.log1p(loop.exp(bx)), loop.constant(beta, out.dtype))
        return loop.where(loop.gt(bx, loop.constant(threshold, out.dtype)), value, soft)

    return Pointwise(out.dtype, out.shape, inner_fn)


register_lowering(softplus_op, _lower_softplus)
