"""Fusion and memory planning: kernel counts, reads and writes are the point, so pin them."""

from dataclasses import replace

import numpy as np
import pytest
from ir_testing import GraphBuilder, check, lower_and_schedule

import minitorch.dtype as dt
from ir.indexing import Const, Var
from ir.interpreter import run_reference
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import ops
from ir.scheduler import (
    FusedKernel,
    Loop,
    loads,
    node_index,
    reloads,
    schedule,
    store_index,
    verify,
)
from minitorch.errors import CompileError

rng = np.random.default_rng(2)
X = rng.uniform(-3, 3, 1000).astype(np.float32)


def sincos_forward() -> GraphBuilder:
    """f(x) = sin(x)**2 + cos(x)**2, returning (add, sin, cos) as AOT autograd's forward does."""
    g = GraphBuilder()
    x = g.placeholder("primals_1", X)
    sin = g.call("sin", x)
    cos = g.call("cos", x)
    add = g.call("add", g.call("pow", sin, 2), g.call("pow", cos, 2))
    g.output(add, sin, cos)
    return g


def sincos_backward() -> GraphBuilder:
    """The gradient of f, as the op table's derivative formulas record it."""
    g = GraphBuilder()
    x = g.placeholder("primals_1", X)
    sin = g.placeholder("sin", np.sin(X))
    cos = g.placeholder("cos", np.cos(X))
    grad = g.placeholder("tangents_1", rng.standard_normal(1000).astype(np.float32))
    # d(sin**2) = grad * (2 sin) * cos(x);  d(cos**2) = grad * (2 cos) * -sin(x)
    d_sin = g.call("mul", grad, g.call("mul", sin, 2))
    d_x1 = g.call("mul", d_sin, g.call("cos", x))
    d_cos = g.call("mul", grad, g.call("mul", cos, 2))
    d_x2 = g.call("mul", d_cos, g.call("neg", g.call("sin", x)))
    g.output(g.call("add", d_x1, d_x2))
    return g


def test_sincos_forward_is_one_kernel():
    (kernel,) = check(sincos_forward())
    assert [n.name for n in kernel.nodes] == ["buf0", "buf1", "buf2"]
    assert kernel.reads == ("primals_1",)
    assert kernel.writes == ("buf0", "buf1", "buf2")  # all three are graph outputs


def test_sincos_backward_is_one_kernel():
    (kernel,) = check(sincos_backward(), rtol=1e-5)
    assert kernel.reads == ("tangents_1", "sin", "primals_1", "cos")


def test_pointwise_producer_fuses_into_sum():
    g = GraphBuilder()
    x = g.placeholder("x", rng.standard_normal((8, 5)).astype(np.float32))
    g.output(g.call("sum", g.call("mul", x, 2.0)))
    (kernel,) = check(g, rtol=1e-5)
    assert len(kernel.nodes) == 1
    assert (kernel.ranges, kernel.reduction_ranges) == ((), (8, 5))
    assert kernel.reads == ("x",) and kernel.writes == ("buf0",)


def test_intermediate_lives_in_a_register():
    g = GraphBuilder()
    x = g.placeholder("x", X)
    # four transcendentals, three readers: realized ([Note: inlining]), read by this kernel only
    s = g.call("sin", g.call("cos", g.call("sin", g.call("cos", x))))
    g.output(g.call("add", g.call("mul", s, s), s))
    (kernel,) = check(g)
    assert [n.name for n in kernel.nodes] == ["buf0", "buf1"]
    assert kernel.writes == ("buf1",)


def test_buffer_read_by_a_later_kernel_is_stored():
    g = GraphBuilder()
    x = g.placeholder("x", X.reshape(40, 25))
    s = g.call("sin", g.call("cos", g.call("sin", g.call("cos", x))))  # too costly to inline
    g.output(g.call("mul", s, 2.0), g.call("sum", s, dim=(0,)))  # columns: not s's rows
    k0, k1 = check(g, rtol=1e-5)
    assert k0.writes == ("buf0", "buf1") and k1.reads == ("buf0",)


def test_pointwise_kernel_becomes_the_first_loop_of_its_rows_reduction():
    g = GraphBuilder()
    x = g.placeholder("x", X.reshape(40, 25))
    s = g.call("sin", g.call("cos", g.call("sin", g.call("cos", x))))  # too costly to inline
    g.output(g.call("mul", s, 2.0), g.call("sum", s, dim=(1,)))
    (kernel,) = check(g, rtol=1e-5)
    (loop,) = kernel.loops
    assert (kernel.ranges, kernel.reduction_ranges, loop.ranges) == ((40,), (25,), (25,))
    assert kernel.writes == ("buf1", "buf2")  # sin lives in a register


def test_pointwise_after_a_reduction_runs_in_a_second_loop():
    g = GraphBuilder()
    x = g.placeholder("x", X.reshape(40, 25))
    g.output(g.call("sub", x, g.call("sum", x, dim=(1,), keepdim=True)))
    (kernel,) = check(g, rtol=1e-5)
    assert [loop.ranges for loop in kernel.loops] == [(25,), (25,)]
    assert kernel.reads == ("x",) and kernel.writes == ("buf1",)  # the sums stay registers


def test_layernorm_is_one_kernel_of_three_loops():
    g = GraphBuilder()
    x = g.placeholder("x", rng.standard_normal((16, 32)).astype(np.float32))
    mean = g.call("div", g.call("sum", x, dim=(1,), keepdim=True), 32.0)
    centered = g.call("sub", x, mean)
    var = g.call(
        "div", g.call("sum", g.call("mul", centered, centered), dim=(1,), keepdim=True), 32.0
    )
    g.output(g.call("div", centered, g.call("pow", g.call("add", var, 1e-5), 0.5)))
    (kernel,) = check(g, rtol=1e-5, atol=1e-5)
    assert len(kernel.loops) == 3 and kernel.reads == ("x",)  # sum, sum of squares, normalise
    assert isinstance(kernel.loops[1].nodes[-1].data, Reduction)


def test_softmax_loads_an_earlier_loops_elements_back():
    program = _softmax_program()
    (kernel,) = schedule(program)
    assert [len(loop.nodes) for loop in kernel.loops] == [1, 2, 1]
    assert reloads(kernel) == ("buf1",) and kernel.writes == ("buf1", "buf3")
    verify(program, [kernel])
    x = program.inputs[0]
    array = rng.standard_normal(x.layout.size).astype(np.float32)
    e = np.exp(array - array.max(axis=1, keepdims=True))
    (fused,) = run_reference(program, [kernel], [array])
    np.testing.assert_allclose(fused, e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_argmax_runs_in_a_loop_of_its_own():
    g = GraphBuilder()
    x = g.placeholder("x", rng.standard_normal((16, 32)).astype(np.float32))
    g.output(g.call("argmax", x, dim=1, keepdim=True), g.call("sum", x, dim=(1,), keepdim=True))
    (kernel,) = check(g)
    assert [len(loop.nodes) for loop in kernel.loops] == [1, 1]


def test_elements_after_a_reduction_to_one_value_start_a_new_kernel():
    g = GraphBuilder()
    x = g.placeholder("x", X)
    g.output(g.call("sub", x, g.call("sum", x)))  # one row: one thread; a kernel of its own
    k0, k1 = check(g, rtol=1e-5, atol=1e-5)
    assert k0.writes == ("buf0",) and k1.reads == ("x", "buf0")


def test_reductions_over_the_same_ranges_share_a_kernel():
    g = GraphBuilder()
    x = g.placeholder("x", X.reshape(40, 25))
    g.output(g.call("sum", x, dim=(1,)), g.call("sum", g.call("mul", x, x), dim=(1,)))
    (kernel,) = check(g, rtol=1e-5)
    assert len(kernel.nodes) == 2


def test_different_ranges_do_not_fuse():
    g = GraphBuilder()
    x = g.placeholder("x", X.reshape(40, 25))
    g.output(g.call("sin", x), g.call("cos", g.call("reshape", x, (1000,))))
    assert len(check(g)) == 2


def test_load_at_another_element_does_not_fuse():
    # buf1[i] = buf0[(i + 1) % 4] needs all of buf0 in memory: not fusable, and buf0 is stored.
    layout = Layout.contiguous((4,), dt.float32)
    i0 = Var("i0")
    buf0 = ComputedBuffer(
        "buf0", layout, Pointwise(dt.float32, (4,), lambda i: ops.sin(ops.load("x", i[0])))
    )
    shifted = lambda i: ops.load("buf0", (i[0] + 1) % 4)  # noqa: E731
    buf1 = ComputedBuffer("buf1", layout, Pointwise(dt.float32, (4,), shifted))
    program = LoweredProgram((InputBuffer("x", layout),), (buf0, buf1), ("buf1",))
    assert loads(buf1) == [("buf0", (i0 + 1) % 4)] and store_index(buf0) == i0
    k0, k1 = schedule(program)
    assert k0.writes == ("buf0",) and k1.reads == ("buf0",)
    x = np.arange(4, dtype=np.float32)
    (out,) = run_reference(program, [k0, k1], [x])
    np.testing.assert_allclose(out, np.sin(np.roll(x, -1)))


def test_unfused_schedule_is_one_kernel_per_buffer():
    program, _ = lower_and_schedule(sincos_forward())
    kernels = schedule(program, fuse=False)
    assert [k.nodes for k in kernels] == [(b,) for b in program.buffers]
    assert [k.name for k in kernels] == ["kernel0", "kernel1", "kernel2"]


def test_verify_catches_broken_programs_and_schedules():
    program, kernels = lower_and_schedule(sincos_forward())
    verify(program, kernels)
    buf0, buf1, buf2 = program.buffers
    with pytest.raises(CompileError, match="not computed before"):
        verify(replace(program, buffers=(buf2, buf0, buf1)))
    strided = replace(buf0, layout=Layout((1000,), (2,), dt.float32))
    with pytest.raises(CompileError, match="not contiguous"):
        verify(replace(program, buffers=(strided, buf1, buf2)))
    with pytest.raises(CompileError, match="unknown"):
        verify(replace(program, outputs=("buf9",)))
    (kernel,) = kernels
    with pytest.raises(CompileError, match="never stored"):
        verify(program, [replace(kernel, writes=("buf2",))])
    with pytest.raises(CompileError, match="exactly once"):
        verify(program, [replace(kernel, loops=(Loop((), (buf0, buf2)),))])


def test_verify_catches_an_illegal_fusion():
    layout = Layout.contiguous((4,), dt.float32)
    buf0 = ComputedBuffer(
        "buf0", layout, Pointwise(dt.float32, (4,), lambda i: ops.load("x", i[0]))
    )
    shifted = lambda i: ops.load("buf0", (i[0] + 1) % 4)  # noqa: E731
    buf1 = ComputedBuffer("buf1", layout, Pointwise(dt.float32, (4,), shifted))
    program = LoweredProgram((InputBuffer("x", layout),), (buf0, buf1), ("buf1",))
    kernel = FusedKernel("kernel0", (Loop((), (buf0, buf1)),), (4,), (), ("x",), ("buf1",))
    with pytest.raises(CompileError, match="cannot run in the loop nest"):
        verify(program, [kernel])


def _softmax_program() -> LoweredProgram:
    """Row softmax of a (4, 8) x, by hand: buf1 = exp(x - max) is one buffer, loaded by the row
    sums and by the division (lowering might inline it into both instead)."""
    f32 = dt.float32
    x = InputBuffer("x", Layout.contiguous((4, 8), f32))

    def buffer(name, data):
        return ComputedBuffer(name, Layout.contiguous(data.ranges, f32), data)

    row_max = buffer(
        "buf0", Reduction(f32, (4, 1), (8,), "max", lambda i, r: ops.load("x", 8 * i[0] + r[0]))
    )
    exp = buffer(
        "buf1",
        Pointwise(
            f32,
            (4, 8),
            lambda i: ops.exp(ops.sub(ops.load("x", 8 * i[0] + i[1]), ops.load("buf0", i[0]))),
        ),
    )
    total = buffer(
        "buf2", Reduction(f32, (4, 1), (8,), "sum", lambda i, r: ops.load("buf1", 8 * i[0] + r[0]))
    )
    out = buffer(
        "buf3",
        Pointwise(
            f32,
            (4, 8),
            lambda i: ops.div(ops.load("buf1", 8 * i[0] + i[1]), ops.load("buf2", i[0])),
        ),
    )
    return LoweredProgram((x,), (row_max, exp, total, out), ("buf3",))


def test_verify_catches_a_reduction_read_in_its_own_loop():
    program = _softmax_program()
    (kernel,) = schedule(program)
    one_loop = Loop(kernel.reduction_ranges, kernel.nodes)
    with pytest.raises(CompileError, match="reduction of the same loop"):
        verify(program, [replace(kernel, loops=(one_loop,))])


def test_verify_catches_an_element_loaded_back_but_never_stored():
    program = _softmax_program()
    (kernel,) = schedule(program)
    (e_buffer,) = reloads(kernel)
    writes = tuple(name for name in kernel.writes if name != e_buffer)
    with pytest.raises(CompileError, match="never stores it"):
        verify(program, [replace(kernel, writes=writes)])


def test_node_index_names_each_dim_by_the_kernel_loop_of_its_size():
    def node(ranges):
        data = Pointwise(dt.float32, ranges, lambda i: ops.load("x", i[0]))
        return ComputedBuffer("buf0", Layout.contiguous(ranges, dt.float32), data)

    i0, i1, r0 = Var("i0"), Var("i1"), Var("r0")
    assert node_index((3, 1), (4,), node((3, 4))) == (i0, r0)  # an element of row i0
    assert node_index((3, 1), (4,), node((3, 1, 4))) == (i0, Const(0), r0)
    assert node_index((3, 1), (), node((3,))) == (i0,)  # once per row
    assert node_index((3, 1), (), node((3, 1))) == (i0, i1)  # the kernel's own ranges
    with pytest.raises(CompileError, match="cannot run"):
        node_index((3, 1), (4,), node((4, 3)))


def test_column_sums_take_no_element_nodes():
    # x.sum(0) of a square x would fit rows (8,) of 8, but reads down the columns: the LLVM
    # backend walks those row by row across outputs, which an element node cannot join.
    g = GraphBuilder()
    x = g.placeholder("x", rng.standard_normal((8, 8)).astype(np.float32))
    g.output(g.call("sum", x, dim=(0,)), g.call("mul", x, 2.0))
    k0, k1 = check(g, rtol=1e-5)
    assert k0.reduction_ranges == (8,) and k1.reduction_ranges == ()


def test_remembered_loads_change_no_kernel_and_end_with_schedule(monkeypatch):
    """[Note: remembered loads]: the kernels are those of a schedule that asks every body each
    time, and nothing is remembered once `schedule` returns (a later program's buffers may take
    the ids of this one's)."""
    import ir.scheduler as scheduler

    program = _softmax_program()
    remembered = schedule(program)
    assert scheduler._remembered_loads.get() is None

    class Forgetting:  # a context variable that never holds a dict: every question is asked
        def get(self):
            return None

        def set(self, value):
            return None

        def reset(self, token):
            pass

    monkeypatch.setattr(scheduler, "_remembered_loads", Forgetting())
    assert schedule(program) == remembered
    assert remembered[0].reads == ("x",) and len(remembered) == 1
