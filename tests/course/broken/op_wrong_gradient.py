"""Broken: the derivative forgets beta (sigmoid(x), not sigmoid(beta x))."""

from minitorch import ops
from tests.course.broken._softplus import register


def backward(g, out, x, beta=1.0, threshold=20.0):
    return (ops.where(ops.lt(threshold, ops.mul(x, beta)), g, ops.mul(g, ops.sigmoid(x))),)


register(backward=backward)
