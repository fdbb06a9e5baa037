"""Broken: the lowering forgets the threshold, so compiled code disagrees with eager where
beta x > threshold (log1p(e^(beta x)) / beta overflows to inf above x = 88 in float32)."""

from ir.lower_pointwise import operand
from ir.nodes import Pointwise
from ir.ops_handler import ops as loop
from tests.course.broken._softplus import register


def lower(out, x, beta=1.0, threshold=20.0):
    load = operand(x, out.shape, out.dtype)

    def inner_fn(index):
        bx = loop.mul(load(index), loop.constant(beta, out.dtype))
        return loop.div(loop.log1p(loop.exp(bx)), loop.constant(beta, out.dtype))

    return Pointwise(out.dtype, out.shape, inner_fn)


register(lower=lower)
