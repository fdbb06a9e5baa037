"""Provenance through capture and AOT autograd ([Note: provenance] in tracer/fx/provenance.py):
each captured node knows the user's line, each joint, forward and backward node the captured
nodes it came from, and each backward node the forward node it differentiates."""

import inspect

import minitorch as torch
from tracer.aot import aot_trace
from tracer.fx.provenance import Location, locations_of


def f(x):
    a = torch.sin(x) ** 2
    b = torch.cos(x) ** 2
    return a + b


def helper(t):
    return t.exp() * 2


def calls_helper(x):
    return helper(x) + 1


def breaks(x):
    y = x.sin()
    print("a graph break")
    return y.cos()


def line_of(fn, text: str) -> int:
    """The line number of the line of `fn`'s source that contains `text`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def capture(fn, *inputs):
    """The graphs minitorch.compile captures from fn(*inputs), with their example inputs."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append((gm, example_inputs))
        return gm.forward

    torch.compile(fn, backend=backend)(*inputs)
    return graphs


def computing(gm):
    return [n for n in gm.graph.nodes if n.op not in ("placeholder", "output")]


def test_a_location_prints_as_file_and_line():
    loc = Location.at(__file__, line_of(f, "torch.sin"))
    assert str(loc) == f"test_provenance.py:{loc.lineno}"
    assert loc.text == "a = torch.sin(x) ** 2"


def test_captured_nodes_carry_the_users_line():
    ((gm, _),) = capture(f, torch.rand(4))
    sin_line, cos_line = line_of(f, "torch.sin"), line_of(f, "torch.cos")
    where = {n.name: n.meta["location"] for n in computing(gm)}
    assert {name: loc.lineno for name, loc in where.items()} == {
        "sin": sin_line,
        "pow_1": sin_line,
        "cos": cos_line,
        "pow_2": cos_line,
        "add": sin_line + 2,
    }
    assert where["sin"].text == "a = torch.sin(x) ** 2"
    assert where["cos"].text == "b = torch.cos(x) ** 2"
    assert where["add"].filename == __file__
    for node in computing(gm):
        assert node.meta["call_stack"] == (node.meta["location"],)
    assert locations_of(computing(gm)) == (where["sin"], where["cos"], where["add"])


def test_an_inlined_helpers_node_has_the_call_and_the_helpers_line():
    ((gm, _),) = capture(calls_helper, torch.rand(4))
    exp = next(n for n in gm.graph.nodes if n.name == "exp")
    outer, inner = exp.meta["call_stack"]
    assert outer.lineno == line_of(calls_helper, "helper(x) + 1")
    assert inner.lineno == line_of(helper, "t.exp()") and inner.text == "return t.exp() * 2"
    assert exp.meta["location"] == inner


def test_each_graph_of_a_break_carries_its_own_lines():
    (first, _), (second, _) = capture(breaks, torch.rand(4))
    (sin,) = computing(first)
    (cos,) = computing(second)
    assert sin.meta["location"].lineno == line_of(breaks, "x.sin()")
    assert cos.meta["location"].lineno == line_of(breaks, "y.cos()")
    assert cos.meta["location"].text == "return y.cos()"


def test_aot_nodes_carry_their_origins_and_backward_nodes_what_they_differentiate():
    ((gm, inputs),) = capture(f, torch.rand(4, requires_grad=True))
    captured = {n.name: n.meta["location"] for n in computing(gm)}
    graphs = aot_trace(gm, inputs, log=False)
    joint = {n.name: n for n in graphs.joint.graph.nodes}
    for graph in (graphs.joint, graphs.forward, graphs.backward):
        for node in computing(graph):
            assert node.meta["origins"], node
            (origin,) = node.meta["origins"]
            assert node.meta["location"] == captured[origin]
    for node in computing(graphs.forward):
        assert "grad_of" not in node.meta  # it computes a value, not a derivative
    for node in computing(graphs.backward):
        forward = joint[node.meta["grad_of"]]  # a node of the joint graph's forward part
        assert "grad_of" not in forward.meta
        assert node.meta["origins"] == forward.meta["origins"]
    grad_of = {n.meta["grad_of"] for n in computing(graphs.backward)}
    assert {"sin", "cos", "pow_1", "pow_2"} <= grad_of


def test_inference_graphs_carry_origins():
    ((gm, inputs),) = capture(f, torch.rand(4))
    graphs = aot_trace(gm, inputs, log=False)
    assert not graphs.training
    for node in computing(graphs.forward):
        assert node.meta["origins"] and node.meta["location"] is not None


def test_a_forward_node_recomputed_in_the_backward_keeps_its_origins(monkeypatch):
    from minitorch import config

    monkeypatch.setattr(config, "partitioner", "min_cut")
    ((gm, inputs),) = capture(f, torch.rand(4, requires_grad=True))
    graphs = aot_trace(gm, inputs, log=False)
    joint = {n.name: n for n in graphs.joint.graph.nodes}
    recomputed = [n for n in computing(graphs.backward) if "grad_of" not in n.meta]
    assert recomputed  # min-cut recomputes sin and cos rather than saving them
    for node in computing(graphs.backward):
        assert node.meta["origins"] and node.meta["location"] is not None
    for node in recomputed:
        assert "grad_of" not in joint[node.name].meta  # a forward node of the joint graph
