"""Broken: softplus as a composite, log1p(exp(beta x)) / beta where beta x <= threshold: its
derivative, through exp, is inf / inf = NaN once e^(beta x) overflows (x > 88 in float32)."""

from minitorch import ops
from minitorch.functional.registration import register_function
from minitorch.ops.registry import OpDef, register_op
from tests.course.broken._softplus import np as numpy
from tests.course.broken._softplus import numpy_softplus, softplus


def decomposition(x, beta=1.0, threshold=20.0):
    bx = ops.mul(x, beta)
    return ops.where(ops.lt(threshold, bx), x, ops.div(ops.log1p(ops.exp(bx)), beta))


register_op(OpDef("softplus", "composite", None, decomposition=decomposition))
register_function(softplus, nn_functional=True)

from minitorch.ops.samples import register_samples  # noqa: E402

register_samples("softplus", [((numpy.linspace(-3, 3, 7),), {})], numpy_softplus)
