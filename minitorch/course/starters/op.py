"""Assignment 1, `op`: add softplus to minitorch, end to end, from this file alone.

Copy this file anywhere (my_softplus.py), fill in each TODO, and grade it:

    python -m minitorch.course grade op --plugin my_softplus.py

softplus(x, beta=1, threshold=20) is PyTorch's (torch.nn.functional.softplus):

    softplus(x) = log(1 + e^(beta x)) / beta,   and x itself where beta x > threshold

Read first: README.md, "Adding an op touches one place per stage"; [Note: the op table] and
[Note: adding an op from a plugin] in minitorch/ops/registry.py; the rows of sigmoid and log1p
in minitorch/ops/pointwise.py; [Note: lowering] in ir/lowering.py and the table in
ir/lower_pointwise.py. Each stage has one hook, called below:

    register_op(row, why=...)            the op table's row (minitorch/ops/registry.py)
    register_function(fn, ...)           minitorch.softplus, x.softplus(), F.softplus
    register_samples(name, ...)          samples checked against numpy
    register_lowering(row, lower)        its loop-IR lowering (ir/lowering.py)

The grader checks each of them, the values against PyTorch's definition (extremes too: inf,
NaN, x = 1000), the gradient against finite differences, and that
`minitorch.compile(lambda x: minitorch.softplus(x) * 2 + 1, fullgraph=True)` is ONE kernel.
"""

from __future__ import annotations

import numpy as np

from ir.lower_pointwise import operand  # noqa: F401 - you will need these in the lowering
from ir.lowering import register_lowering  # noqa: F401
from ir.nodes import Pointwise  # noqa: F401
from ir.ops_handler import ops as loop  # noqa: F401 - the loop-IR ops: loop.exp, loop.where
from minitorch import ops
from minitorch.functional._common import check_tensor
from minitorch.functional.registration import register_function
from minitorch.ops.meta import unary_float
from minitorch.ops.registry import OpDef, register_op
from minitorch.ops.samples import register_samples  # noqa: F401

# ---- eager: the row ----------------------------------------------------------------------

_float_meta = unary_float("softplus")


def _softplus_meta(x, beta=1.0, threshold=20.0):
    """The shape/dtype rule: x's shape, x's float dtype (given)."""
    return _float_meta(x)


def _softplus_kernel(xp, x, beta=1.0, threshold=20.0):
    """The eager kernel, on numpy arrays (`xp` is numpy): the result in x's dtype."""
    raise NotImplementedError(
        "TODO softplus kernel (minitorch/course/starters/op.py): "
        "where(beta x > threshold, x, log1p(exp(beta x)) / beta), in x's dtype"
    )


def _softplus_backward(g, out, x, beta=1.0, threshold=20.0):
    """The derivative, written in minitorch.ops (so AOT autograd can record it): one gradient
    per argument, as a tuple."""
    raise NotImplementedError(
        "TODO softplus derivative (minitorch/course/starters/op.py): d/dx softplus(x) in "
        "minitorch.ops, returned as a 1-tuple; see sigmoid's row in minitorch/ops/pointwise.py"
    )


softplus_op = register_op(
    OpDef(
        "softplus",
        "pointwise",
        _softplus_meta,
        impl=_softplus_kernel,
        backward=_softplus_backward,
        lowering="lowered",
    ),
    why="TODO: why softplus is a primitive and not a composite of exp and log1p",
)


# ---- eager: the public names -------------------------------------------------------------


def softplus(input, beta=1.0, threshold=20.0):
    """PyTorch's signature; checks its argument, then calls the row."""
    check_tensor("softplus", input)
    return ops.softplus(input, beta=beta, threshold=threshold)


# TODO: PyTorch also has torch.nn.functional.softplus: see register_function's arguments.
softplus = register_function(softplus, tensor_method=True)


# ---- eager: the samples ------------------------------------------------------------------

# TODO: register_samples("softplus", [((array,), kwargs), ...], reference=a numpy softplus)


# ---- loop IR: the lowering ---------------------------------------------------------------


def _lower_softplus(out, x, beta=1.0, threshold=20.0):
    """out: the result's TensorMeta; x: a TensorValue. Returns a Pointwise whose inner_fn
    computes one element with the loop-IR ops (`loop.mul`, `loop.exp`, ...)."""
    raise NotImplementedError(
        "TODO softplus lowering (minitorch/course/starters/op.py): the kernel's formula in "
        "loop-IR ops; see _unary in ir/lower_pointwise.py"
    )


# TODO: register_lowering(softplus_op, _lower_softplus)

_ = np  # numpy: for your kernel's reference in the samples
