"""The reductions' lowerings (ir/lower_reductions.py): amax, amin, argmax and argmin as loop-IR
Reductions, each held to numpy through the reference interpreter, fused and unfused."""

import numpy as np
import pytest
from ir_testing import GraphBuilder, check, lower_and_schedule

from ir.nodes import Reduction

rng = np.random.default_rng(3)

DIMS = [  # (shape, dim, keepdim)
    ((3, 4), (1,), False),
    ((3, 4), (0,), True),
    ((2, 3, 4), (0, 2), False),
    ((2, 3, 4), (-1,), True),
    ((5,), None, False),
    ((), None, True),
]


def _values(shape, dtype):
    """Small integers, so that ties are common: every reduction must pick the first."""
    return rng.integers(-3, 3, shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("shape, dim, keepdim", DIMS)
def test_amax_and_amin(op, dtype, shape, dim, keepdim):
    g = GraphBuilder()
    x = g.placeholder("x", _values(shape, dtype))
    g.output(g.call(op, x, dim=dim, keepdim=keepdim))
    (kernel,) = check(g)
    (node,) = kernel.nodes
    assert isinstance(node.data, Reduction) and node.data.reduction_type == op[1:]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize(
    "shape, dim, keepdim",
    [
        ((3, 4), 1, False),
        ((3, 4), 0, True),
        ((2, 3, 4), -2, False),
        ((2, 3, 4), None, False),
        ((2, 3, 4), None, True),
        ((), None, False),
    ],
)
def test_argmax_and_argmin_give_the_first_position(op, dtype, shape, dim, keepdim):
    g = GraphBuilder()
    x = g.placeholder("x", _values(shape, dtype))
    g.output(g.call(op, x, dim=dim, keepdim=keepdim))
    (kernel,) = check(g)
    assert kernel.nodes[0].data.reduction_type == op
    assert kernel.nodes[0].data.dtype.name == "int64"


@pytest.mark.parametrize("op", ["argmax", "argmin", "amax", "amin"])
def test_nan_wins(op):
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 2.0, -1.0, 0.0]], np.float32)
    g = GraphBuilder()
    node = g.placeholder("x", x)
    kwargs = {"dim": 1} if op.startswith("arg") else {"dim": (1,)}
    g.output(g.call(op, node, **kwargs))
    check(g)  # NaN in row 0 (amax), at position 1 (argmax), as numpy has them


def test_softmax_subtracts_the_row_maximum_in_the_kernel_that_reads_it():
    # x - amax(x, 1, keepdim): the reduction, then the pointwise ops reading its register
    g = GraphBuilder()
    x = g.placeholder("x", rng.standard_normal((4, 6)).astype(np.float32))
    shifted = g.call("exp", g.call("sub", x, g.call("amax", x, dim=(1,), keepdim=True)))
    g.output(g.call("div", shifted, g.call("sum", shifted, dim=(1,), keepdim=True)))
    kernels = check(g)
    reductions = [
        n.data.reduction_type for k in kernels for n in k.nodes if isinstance(n.data, Reduction)
    ]
    assert sorted(reductions) == ["max", "sum"]


def test_the_body_of_amax_prints_as_a_max_reduction():
    g = GraphBuilder()
    x = g.placeholder("x", rng.standard_normal((3, 4)).astype(np.float32))
    g.output(g.call("amax", x, dim=(1,)))
    program, _ = lower_and_schedule(g)
    (buffer,) = program.buffers
    assert str(buffer.data).splitlines()[0] == (
        "Reduction(float32, ranges=(3,), reduction_ranges=(4,), reduction_type='max')"
    )
    assert "ops.load('x', 4*i0 + r0)" in str(buffer.data)
