"""Printing is part of the course: pin the exact text of buffers, kernels and programs."""

import textwrap

import numpy as np
from ir_testing import GraphBuilder, lower_and_schedule

import minitorch.dtype as dt
from ir.indexing import Var
from ir.nodes import ComputedBuffer, InputBuffer, Layout, Pointwise
from ir.ops_handler import ops
from ir.printer import format_inner_fn


def sincos_graph(outputs: str) -> GraphBuilder:
    g = GraphBuilder()
    x = g.placeholder("arg0_1", np.linspace(-3, 3, 4096, dtype=np.float32))
    sin = g.call("sin", x)
    cos = g.call("cos", x)
    add = g.call("add", g.call("pow", sin, 2), g.call("pow", cos, 2))
    g.output(*{"add": (add,), "all": (add, sin, cos)}[outputs])
    return g


def test_pointwise_prints_like_inductor():
    program, _ = lower_and_schedule(sincos_graph("add"))
    (buf0,) = program.buffers
    assert str(buf0) == textwrap.dedent("""\
        buf0: Pointwise(float32, ranges=(4096,))
        def inner_fn(index):
            (i0,) = index
            tmp0 = ops.load('arg0_1', i0)
            tmp1 = ops.sin(tmp0)
            tmp2 = ops.pow(tmp1, 2)
            tmp3 = ops.cos(tmp0)
            tmp4 = ops.pow(tmp3, 2)
            tmp5 = ops.add(tmp2, tmp4)
            return tmp5""")


def test_reduction_and_broadcast_print():
    g = GraphBuilder()
    x = g.placeholder("x", np.ones((3, 4), np.float32))
    y = g.placeholder("y", np.ones((4,), np.float32))
    g.output(g.call("sum", g.call("mul", x, y), dim=(1,), keepdim=True))
    program, _ = lower_and_schedule(g)
    assert str(program.buffers[0]) == textwrap.dedent("""\
        buf0: Reduction(float32, ranges=(3, 1), reduction_ranges=(4,), reduction_type='sum')
        def inner_fn(index, rindex):
            i0, i1 = index
            (r0,) = rindex
            tmp0 = ops.load('x', 4*i0 + r0)
            tmp1 = ops.load('y', r0)
            tmp2 = ops.mul(tmp0, tmp1)
            return tmp2""")


def test_program_prints_inputs_kernels_outputs():
    program, kernels = lower_and_schedule(sincos_graph("all"))
    assert program.format(kernels) == textwrap.dedent("""\
        inputs:
            arg0_1: InputBuffer(float32, size=(4096,), stride=(1,))
        kernel0: FusedKernel(ranges=(4096,), reads=('arg0_1',), writes=('buf0', 'buf1', 'buf2'))
            buf0: Pointwise(float32, ranges=(4096,))
            def inner_fn(index):
                (i0,) = index
                tmp0 = ops.load('arg0_1', i0)
                tmp1 = ops.sin(tmp0)
                return tmp1
            buf1: Pointwise(float32, ranges=(4096,))
            def inner_fn(index):
                (i0,) = index
                tmp0 = ops.load('arg0_1', i0)
                tmp1 = ops.cos(tmp0)
                return tmp1
            buf2: Pointwise(float32, ranges=(4096,))
            def inner_fn(index):
                (i0,) = index
                tmp0 = ops.load('buf0', i0)
                tmp1 = ops.pow(tmp0, 2)
                tmp2 = ops.load('buf1', i0)
                tmp3 = ops.pow(tmp2, 2)
                tmp4 = ops.add(tmp1, tmp3)
                return tmp4
        outputs: ('buf2', 'buf0', 'buf1')""")
    # Without kernels, the buffers print in order.
    assert str(program).splitlines()[2] == "buf0: Pointwise(float32, ranges=(4096,))"


def test_hand_written_buffer_prints_constants_and_scalars():
    def inner_fn(index):
        return ops.div(ops.constant(1.0, dt.float64), ops.load("x", Var("i0") * 0))

    buffer = ComputedBuffer(
        "buf7", Layout.contiguous((), dt.float64), Pointwise(dt.float64, (), inner_fn)
    )
    assert str(buffer) == textwrap.dedent("""\
        buf7: Pointwise(float64, ranges=())
        def inner_fn(index):
            tmp0 = ops.constant(1.0, float64)
            tmp1 = ops.load('x', 0)
            tmp2 = ops.div(tmp0, tmp1)
            return tmp2""")
    layout = Layout((2, 3), (1, -2), dt.float32, offset=4)
    assert (
        str(InputBuffer("a", layout))
        == "a: InputBuffer(float32, size=(2, 3), stride=(1, -2), offset=4)"
    )


def test_format_inner_fn_of_a_lambda():
    text = format_inner_fn(lambda index: ops.exp(ops.load("a", index[0] + 3 * index[1])), (2, 3))
    assert text.splitlines()[1:3] == ["    i0, i1 = index", "    tmp0 = ops.load('a', i0 + 3*i1)"]


def test_kernel_of_several_loops_prints_each_loop_and_names_dims_as_it_runs_them():
    g = GraphBuilder()
    x = g.placeholder("x", np.ones((3, 4), np.float32))
    g.output(g.call("sub", x, g.call("amax", x, dim=(1,), keepdim=True)))
    (kernel,) = lower_and_schedule(g)[1]
    assert str(kernel) == textwrap.dedent("""\
        kernel0: FusedKernel(ranges=(3, 1), reduction_ranges=(4,), reads=('x',), writes=('buf1',))
            loop0: for r0 in range(4):
                buf0: Reduction(float32, ranges=(3, 1), reduction_ranges=(4,), reduction_type='max')
                def inner_fn(index, rindex):
                    i0, i1 = index
                    (r0,) = rindex
                    tmp0 = ops.load('x', 4*i0 + r0)
                    return tmp0
            loop1: for r0 in range(4):
                buf1: Pointwise(float32, ranges=(3, 4))
                def inner_fn(index):
                    i0, r0 = index
                    tmp0 = ops.load('x', 4*i0 + r0)
                    tmp1 = ops.load('buf0', i0)
                    tmp2 = ops.sub(tmp0, tmp1)
                    return tmp2""")
