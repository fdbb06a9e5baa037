"""Provenance in the loop IR ([Note: provenance] in tracer/fx/provenance.py): each buffer
names the fx nodes it computes, those inlined into it too, and their source lines; a fused
kernel the union of its buffers'."""

import inspect
from dataclasses import replace

import minitorch as torch
import minitorch.dtype as dt
from ir.lowering import lower_graph
from ir.nodes import ComputedBuffer, Layout, Pointwise
from ir.ops_handler import ops
from ir.scheduler import schedule
from tracer.aot import aot_trace
from tracer.fx.provenance import Location


def f(x):
    a = torch.sin(x) ** 2
    b = torch.cos(x) ** 2
    return a + b


def line_of(text: str) -> int:
    lines, first = inspect.getsourcelines(f)
    return first + next(k for k, line in enumerate(lines) if text in line)


def traced(fn, x):
    """The AOT graphs of what minitorch.compile captures from fn(x)."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(aot_trace(gm, example_inputs, log=False))
        return gm.forward

    torch.compile(fn, backend=backend)(x)
    (aot,) = graphs
    return aot


def test_buffers_name_the_nodes_they_compute_and_their_lines():
    aot = traced(f, torch.rand(16, requires_grad=True))
    before = str(aot.forward.graph)
    program = lower_graph(aot.forward.graph)
    assert str(aot.forward.graph) == before  # lowering reads its graph, never writes it
    origins = {b.name: b.origins for b in program.buffers}
    # sin and cos are saved for the backward (buffers of their own); the output inlines the
    # squares
    assert sorted(origins.values()) == [("cos",), ("pow_1", "pow_2", "add"), ("sin",)]
    nodes = {n.name: n for n in aot.forward.graph.nodes}
    for buffer in program.buffers:
        expected = tuple(dict.fromkeys(nodes[o].meta["location"] for o in buffer.origins))
        assert buffer.locations == expected
    out = next(b for b in program.buffers if "add" in b.origins)
    assert [loc.lineno for loc in out.locations] == [
        line_of("torch.sin"),
        line_of("torch.cos"),
        line_of("a + b"),
    ]
    (kernel,) = schedule(program)
    assert set(kernel.origins) == {"sin", "cos", "pow_1", "pow_2", "add"}
    assert {loc.lineno for loc in kernel.locations} == {loc.lineno for loc in out.locations}


def test_backward_buffers_come_from_backward_nodes_with_the_forward_lines():
    aot = traced(f, torch.rand(16, requires_grad=True))
    program = lower_graph(aot.backward.graph)
    nodes = {n.name for n in aot.backward.graph.nodes}
    computed = [name for b in program.buffers for name in b.origins]
    assert computed and set(computed) <= nodes
    lines = {loc.lineno for b in program.buffers for loc in b.locations}
    assert lines == {line_of("torch.sin"), line_of("torch.cos")}


def test_a_buffer_equal_to_an_earlier_one_adds_its_origins_to_it():
    def two_means(x):
        return x - x.mean(-1, keepdim=True), x.mean(-1, keepdim=True) * 2

    aot = traced(two_means, torch.rand(4, 8))
    program = lower_graph(aot.forward.graph)
    sums = [b for b in program.buffers if b.data.__class__.__name__ == "Reduction"]
    assert len(sums) == 1  # both means are one sum
    means = [n.name for n in aot.forward.graph.nodes if n.meta.get("origins") and "sum" in n.name]
    assert len(means) == 2 and set(means) <= set(sums[0].origins)


def test_a_buffers_provenance_is_the_kernel_comments_text():
    layout = Layout.contiguous((4,), dt.float32)
    body = Pointwise(dt.float32, (4,), lambda index: ops.load("x", index[0]))
    loc = Location("/home/me/sincos.py", 13, "a = torch.sin(x) ** 2")
    buffer = ComputedBuffer("buf3", layout, body, ("sin_1", "pow_2"), (loc,))
    assert buffer.provenance == "buf3: from sin_1, pow_2 (sincos.py:13)"
    assert replace(buffer, locations=()).provenance == "buf3: from sin_1, pow_2"
    assert ComputedBuffer("buf3", layout, body).provenance == ""  # made by hand: no origins
    assert replace(buffer, origins=()) == buffer  # what it computes is all equality compares


def test_sizes_made_symbols_keep_each_buffers_origins():
    from ir.symbolic import Symbolizer

    x = torch.randn(10007, requires_grad=True)
    program = lower_graph(traced(f, x).forward.graph)
    symbolic = Symbolizer((10007,)).program(program)
    assert [b.origins for b in symbolic.buffers] == [b.origins for b in program.buffers]
    assert all(b.origins for b in symbolic.buffers)
