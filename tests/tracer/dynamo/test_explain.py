"""`minitorch._dynamo.explain(fn)(*args)`: graphs, breaks and guards of one call, privately."""

from __future__ import annotations

import inspect

import pytest

import minitorch
from tests.tracer.dynamo.helpers import CountingBackend, assert_same
from tracer.dynamo import cache_entries, optimize
from tracer.dynamo.cache import GraphBreak, private_caches
from tracer.dynamo.compiler import EAGER
from tracer.dynamo.explain import ExplainOutput

pytestmark = pytest.mark.capture


def sincos(x, y):
    return x.sin() * 2 + minitorch.relu(y)


def branchy(x):
    if x.sum():  # data-dependent: a graph break, and one resume function per branch
        return x + 1
    return x - 1


def no_ops(x):
    return x.shape[0]


class Scale(minitorch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = minitorch.nn.Parameter(minitorch.randn(3))

    def forward(self, x):
        return x * self.weight


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_straight_line_code_is_one_graph_with_its_ops_and_guards():
    x, y = minitorch.randn(3), minitorch.randn(3)
    out = minitorch._dynamo.explain(sincos)(x, y)
    assert isinstance(out, ExplainOutput) and isinstance(out, minitorch._dynamo.ExplainOutput)
    assert out.graph_count == 1 and out.graph_break_count == 0 and out.break_reasons == []
    assert out.compile_count == 1
    assert out.ops_per_graph == [["Tensor.sin", "operator.mul", "minitorch.relu", "operator.add"]]
    assert out.op_count == 4
    assert "L['x'].shape == (3,)" in out.guards and "L['y'].shape == (3,)" in out.guards
    assert "minitorch.is_grad_enabled()" in out.guards
    assert len(out.guards) == len(set(out.guards))
    # The graph it reports computes what eager does.
    (gm,) = out.graphs
    assert_same(gm(x, y)[0], sincos(x, y))


def test_a_graph_break_is_reported_with_its_reason_and_line():
    out = minitorch._dynamo.explain(branchy)(minitorch.randn(3))
    # the graph before the branch (the condition), and the resume function of the branch taken
    assert out.graph_break_count == 1 and out.compile_count == 2 and out.graph_count == 2
    (b,) = out.break_reasons
    assert isinstance(b, GraphBreak)
    assert "branch on a tensor's value" in b.reason
    assert (b.filename, b.lineno) == (__file__, line_of(branchy, "if x.sum():"))
    assert b.where() == f"{__file__}:{b.lineno}"
    assert out.graph_count == len(out.graphs) == len(out.ops_per_graph)
    assert "type(L['x']) is minitorch.Tensor" in out.guards


def test_the_report_reads_as_a_summary():
    text = str(minitorch._dynamo.explain(branchy)(minitorch.randn(3)))
    assert "Graph count: 2" in text and "Graph break count: 1" in text
    assert "branch on a tensor's value" in text
    assert f"line {line_of(branchy, 'if x.sum():')}" in text and "if x.sum():" in text
    assert "Guards:\n  minitorch.is_grad_enabled()" in text
    text = str(minitorch._dynamo.explain(sincos)(minitorch.randn(3), minitorch.randn(3)))
    assert "graph 1: Tensor.sin, operator.mul, minitorch.relu, operator.add" in text
    assert "Break reasons" not in text


def test_a_function_without_ops_has_no_graph():
    out = minitorch._dynamo.explain(no_ops)(minitorch.randn(4))
    assert (out.graph_count, out.graph_break_count, out.compile_count) == (0, 0, 1)
    assert "L['x'].shape == (4,)" in out.guards


def test_explain_leaves_the_real_caches_alone():
    compiled = optimize(sincos, backend=CountingBackend())
    x = minitorch.randn(3)
    compiled(x, x)
    before = cache_entries(sincos)
    out = minitorch._dynamo.explain(sincos)(minitorch.randn(5), minitorch.randn(5))
    assert out.graph_count == 1 and "L['x'].shape == (5,)" in out.guards
    assert cache_entries(sincos) == before  # nothing added, nothing lost
    # And a function explained first compiles afresh afterwards.
    minitorch._dynamo.explain(branchy)(x)
    assert cache_entries(branchy) == []
    backend = CountingBackend()
    again = optimize(sincos, backend=backend)
    assert_same(again(minitorch.randn(5), minitorch.randn(5)).shape, minitorch.Size([5]))
    assert backend.count == 1  # not served from the explain run's entry


def test_explain_sees_compiled_functions_it_calls_without_keeping_their_entries():
    backend = CountingBackend()
    inner = minitorch.compile(sincos, backend=backend)

    def outer(x):
        return inner(x, x)

    x = minitorch.randn(3)
    out = minitorch._dynamo.explain(outer)(x)
    assert cache_entries(sincos) == []  # inner's entry went into the private caches
    assert out.compile_count >= 1
    assert_same(inner(x, x), sincos(x, x))
    assert len(cache_entries(sincos)) == 1


@pytest.mark.parametrize("wrap", ["function", "compiled", "module", "compiled module"])
def test_explain_accepts_functions_modules_and_compiled_ones(wrap):
    model = Scale()
    fn = {
        "function": sincos,
        "compiled": minitorch.compile(sincos, backend="eager"),
        "module": model,
        "compiled module": minitorch.compile(model, backend="eager"),
    }[wrap]
    args = (minitorch.randn(3),) if "module" in wrap else (minitorch.randn(3),) * 2
    out = minitorch._dynamo.explain(fn)(*args)
    assert out.graph_count == 1 and out.graph_break_count == 0
    assert out.ops_per_graph[0][-1] in ("operator.add", "operator.mul")


def test_private_caches_restore_the_ones_before():
    compiled = optimize(sincos, backend=EAGER)
    x = minitorch.randn(3)
    compiled(x, x)
    with private_caches() as (table, journal):
        assert cache_entries(sincos) == []
        compiled(x, x)
        assert len(journal) == 1 and len(table) == 1
    assert len(cache_entries(sincos)) == 1 and cache_entries(sincos)[0] is not journal[0]


def test_explain_of_something_not_callable_is_a_compile_error():
    with pytest.raises(minitorch.CompileError, match="explain"):
        minitorch._dynamo.explain(3)


def test_ops_are_named_as_the_user_calls_them():
    def f(x):
        return minitorch.ops.full((3,), 1.0, dtype=minitorch.float32) + minitorch.zeros(3) + x.sin()

    (ops,) = minitorch._dynamo.explain(f)(minitorch.randn(3)).ops_per_graph
    assert ops == [
        "minitorch.ops.full",
        "minitorch.zeros",
        "operator.add",
        "Tensor.sin",
        "operator.add",
    ]
