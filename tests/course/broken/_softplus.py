"""Softplus as the reference writes it (minitorch/course/reference/op.py, which registers at
import, so it is not imported here), in pieces: each broken variant (op_*.py) registers it
through the hooks with exactly one piece wrong, `register(backward=...)`."""

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

_float_meta = unary_float("softplus")


def meta(x, beta=1.0, threshold=20.0):
    return _float_meta(x)


def kernel(xp, x, beta=1.0, threshold=20.0):
    bx = x * x.dtype.type(beta)
    with np.errstate(over="ignore"):
        soft = xp.log1p(xp.exp(bx)) / x.dtype.type(beta)
    return xp.where(bx > threshold, x, soft).astype(x.dtype)


def backward(g, out, x, beta=1.0, threshold=20.0):
    bx = ops.mul(x, beta)
    return (ops.where(ops.lt(threshold, bx), g, ops.mul(g, ops.sigmoid(bx))),)


def softplus(input, beta=1.0, threshold=20.0):
    check_tensor("softplus", input)
    return ops.softplus(input, beta=beta, threshold=threshold)


def numpy_softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.logaddexp(0.0, x * beta) / beta)


def lower(out, x, beta=1.0, threshold=20.0):
    load = operand(x, out.shape, out.dtype)

    def inner_fn(index):
        value = load(index)
        bx = loop.mul(value, loop.constant(beta, out.dtype))
        soft = loop.div(loop.log1p(loop.exp(bx)), loop.constant(beta, out.dtype))
        return loop.where(loop.gt(bx, loop.constant(threshold, out.dtype)), value, soft)

    return Pointwise(out.dtype, out.shape, inner_fn)


def register(**changed) -> None:
    """Register softplus through the four hooks, with the pieces named in `changed` replaced:
    impl, backward, lowering ("lowered"/"extern"), lower (None: no lowering), tensor_method,
    nn_functional, samples (None: none), why."""
    pieces = {
        "impl": kernel,
        "backward": backward,
        "lowering": "lowered",
        "lower": lower,
        "tensor_method": True,
        "nn_functional": True,
        "samples": [((np.linspace(-3, 3, 7),), {})],
        "why": "its derivative must be sigmoid(beta x)",
        **changed,
    }
    row = OpDef(
        "softplus",
        "pointwise",
        meta,
        impl=pieces["impl"],
        backward=pieces["backward"],
        lowering=pieces["lowering"],
    )
    register_op(row, why=pieces["why"])
    register_function(
        softplus, tensor_method=pieces["tensor_method"], nn_functional=pieces["nn_functional"]
    )
    if pieces["samples"] is not None:
        register_samples("softplus", pieces["samples"], numpy_softplus)
    if pieces["lower"] is not None and pieces["lowering"] == "lowered":
        register_lowering(row, pieces["lower"])
