"""`Graph.lint` catches each way a graph can break, and `lint_after` names the stage.

The basic cases (use before definition, a node of another graph, users out of step, two names,
target types, the output's place) are in tests/tracer/test_fx_graph.py; these are the rest of
what a graph must satisfy.
"""

from __future__ import annotations

import operator

import pytest

import minitorch
from minitorch import config
from tracer.fx import Graph, GraphLintError, GraphModule, lint_after


def small_graph() -> Graph:
    """sin(x) + y, node by node."""
    g = Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    sin = g.call_function(minitorch.sin, (x,))
    g.output((g.call_function(operator.add, (sin, y)),))
    return g


def test_lint_accepts_a_graph_with_placeholders_first_and_one_output_last():
    small_graph().lint()


def test_lint_catches_a_placeholder_after_an_op():
    g = small_graph()
    sin = g.nodes[2]
    with g.inserting_after(sin):
        g.placeholder("z")
    with pytest.raises(GraphLintError, match="placeholder z comes after sin"):
        g.lint()


def test_lint_catches_a_graph_without_output():
    g = Graph()
    g.call_function(minitorch.sin, (g.placeholder("x"),))
    with pytest.raises(GraphLintError, match="no output node"):
        g.lint()


def test_lint_reads_args_as_they_are_not_as_cached():
    # `node._args` written directly, past the setter that keeps `users` in step: sin now reads
    # y, but x still lists it as a user and y does not
    g = small_graph()
    sin = g.nodes[2]
    sin._args = (g.nodes[1],)
    with pytest.raises(GraphLintError, match="x lists sin as a user, but sin does not read it"):
        g.lint()


def test_lint_catches_a_read_of_an_erased_node():
    g = small_graph()
    y, sin, add = g.nodes[1], g.nodes[2], g.nodes[3]
    add.args = (y, y)
    g.erase_node(sin)
    add._args = (sin, y)  # a pass that kept a reference to the node it erased
    with pytest.raises(GraphLintError, match="add uses sin, which is not in this graph"):
        g.lint()


def test_lint_catches_a_dangling_user():
    # a user that was erased while this node still lists it
    g = small_graph()
    x, sin = g.nodes[0], g.nodes[2]
    stray = g.call_function(minitorch.cos, (x,))
    g._nodes.remove(stray)  # gone from the graph, still in x.users
    with pytest.raises(GraphLintError, match="x lists cos as a user, but cos is not in this graph"):
        g.lint()
    assert sin in x.users


def _broken() -> GraphModule:
    g = small_graph()
    g.nodes[2].args = (g.nodes[3],)  # sin reads add, defined after it
    gm = GraphModule({}, g)
    gm.meta["name"] = "f (model.py:3)"
    return gm


def test_lint_after_names_the_stage_and_the_graph(monkeypatch):
    monkeypatch.setattr(config, "check", True)
    with pytest.raises(GraphLintError) as caught:
        lint_after("AOT autograd", _broken())
    message = str(caught.value)
    assert message.startswith(
        "after AOT autograd, graph 'f (model.py:3)': node sin uses add before it is defined"
    )
    assert "graph():" in message  # the graph is printed


def test_lint_after_does_nothing_with_checks_off(monkeypatch):
    monkeypatch.setattr(config, "check", False)
    lint_after("AOT autograd", _broken())
