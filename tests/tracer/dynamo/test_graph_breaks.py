"""Graph breaks: the graph so far is compiled, the breaking instruction runs for real, and a
resume function (real bytecode, captured in turn) does the rest.

Each case calls the compiled function on a sequence of inputs, checks every result against
eager, and pins the number of graphs the backend compiled and the graph breaks recorded.
"""

from __future__ import annotations

import inspect
import itertools

import numpy as np
import pytest

import minitorch
from minitorch.errors import CompileError
from tests.tracer.dynamo.corpus import make_closure
from tests.tracer.dynamo.helpers import CountingBackend, assert_same
from tracer.dynamo import cache_entries, fallback_reasons, optimize
from tracer.dynamo.compiler import EAGER

pytestmark = pytest.mark.capture


def run(fn, calls, backend=None):
    """Compile fn, check each call against eager; return the backend."""
    backend = backend or CountingBackend()
    compiled = optimize(fn, backend=backend)
    for args in calls:
        assert_same(compiled(*args), fn(*args))
    return backend


def breaks_of(fn) -> list:
    return [b for entry in cache_entries(fn) for b in entry.graph_breaks]


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def signs(*shapes):
    """Inputs that take every branch: all-positive and all-negative tensors."""
    for choice in itertools.product([1.0, -1.0], repeat=len(shapes)):
        yield tuple(minitorch.ones(*shape) * s for shape, s in zip(shapes, choice))


# ---- calls that cannot be traced: run for real -----------------------------------------------


def print_in_the_middle(x):
    y = x.sin()
    print("y is ready")
    return y.cos() + x


def test_print_in_the_middle(capsys):
    backend = run(print_in_the_middle, [(minitorch.randn(3),), (minitorch.randn(3),)])
    assert capsys.readouterr().out.count("y is ready") == 4  # eager and compiled, twice each
    assert backend.count == 2  # sin before the print; cos + x after it
    (b,) = breaks_of(print_in_the_middle)
    assert b.lineno == line_of(print_in_the_middle, 'print("y is ready")')


def print_at_the_start(x):
    print("start")
    return x * 2


def test_print_at_the_start_gives_one_graph(capsys):
    backend = run(print_at_the_start, [(minitorch.randn(2),)])
    assert backend.count == 1  # nothing before the print: no graph there


def numpy_with_keywords(x):
    a = x * 2
    n = np.prod(x.shape, dtype=np.int64)  # numpy: an opaque call, run for real
    return a * int(n)  # int() of a numpy scalar: another one


def test_a_numpy_call_with_keyword_arguments():
    backend = run(numpy_with_keywords, [(minitorch.randn(3),), (minitorch.randn(2, 2),)])
    assert backend.count == 2 * 2  # per shape: x * 2 before np.prod; a * n after int()
    # one entry per shape, each breaking at np.prod (int() breaks in the resume function)
    lines = [b.lineno for b in breaks_of(numpy_with_keywords)]
    assert lines == [line_of(numpy_with_keywords, "np.prod(")] * 2


def values_on_the_stack(x):
    # x * 3 is on the stack under the call of len when the break happens
    return x * 3 + opaque(len([1, 2]), scale=2.0)


def opaque(n, scale):
    print(end="")  # cannot be traced: the break moves out to the call of opaque
    return n * scale


def test_values_on_the_stack_pass_into_the_resume_function():
    backend = run(values_on_the_stack, [(minitorch.randn(4),)])
    assert backend.count == 2


def item_then_math(x):
    a = x * 2
    n = a.sum().item()
    return a + n


def test_item_breaks_and_the_number_reaches_the_rest():
    backend = run(item_then_math, [(minitorch.randn(3),), (minitorch.randn(3),)])
    assert backend.count == 3  # before .item(); after it, compiled once per value of n
    assert "Tensor.item()" in breaks_of(item_then_math)[0].reason


def helper(x):
    return x.sin()


def calls_a_python_function(x):
    return helper(x) + 1


def test_a_call_to_a_python_function_is_inlined():
    backend = run(calls_a_python_function, [(minitorch.randn(3),)])
    assert backend.count == 1 and breaks_of(calls_a_python_function) == []
    assert [n.target for n in backend.graphs[0].graph.nodes if n.op == "call_method"] == ["sin"]


# ---- branches on a tensor's value ---------------------------------------------------------------


def one_branch(x):
    if x.sum() > 0:
        return x + 1
    return x - 1


def test_one_branch_both_ways():
    backend = run(one_branch, list(signs((3,))))
    assert backend.count == 3  # the condition, then each branch's resume function
    (b,) = {(b.reason, b.lineno) for b in breaks_of(one_branch)}
    assert "branch on a tensor's value" in b[0]


def chained_and_or(x, y):
    if x.sum() > 0 and y.sum() > 0:
        return x + y
    if x.sum() < 0 or y.sum() > 0:
        return x - y
    return x * y


def test_branches_chained_with_and_or():
    run(chained_and_or, list(signs((2,), (2,))))


def three_in_a_row(x, y, z):
    if x.sum() > 0:
        x = x + 1
    else:
        x = x - 1
    if y.sum() > 0:
        x = x * 2
    else:
        x = x * 3
    if z.sum() > 0:
        x = x.sin()
    else:
        x = x.cos()
    return x


def test_three_branches_in_a_row_give_a_linear_number_of_graphs():
    backend = run(three_in_a_row, list(signs((3,), (3,), (3,))))
    assert backend.count == 1 + 2 * 3  # not 2 ** 3: every path shares the resume points


def branch_on_a_shape(x):
    if x.shape[0] > 2:  # a constant while tracing: guarded, never a break
        return x.sum(0)
    return x


def test_a_branch_on_a_shape_is_not_a_break():
    backend = run(branch_on_a_shape, [(minitorch.randn(3, 2),), (minitorch.randn(1, 2),)])
    assert backend.count == 1 and breaks_of(branch_on_a_shape) == []  # (1, 2): no op at all


# ---- what a resume function sees ---------------------------------------------------------------


def test_closures_keep_working_across_a_break():
    f = make_closure(3.0)
    run(f, list(signs((2,))))


def defaults_and_keyword_only(x, k=2, *, bias=1.0):
    y = x * k
    print("")
    return y + bias


def test_default_and_keyword_only_arguments_cross_a_break(capsys):
    backend = CountingBackend()
    compiled = optimize(defaults_and_keyword_only, backend=backend)
    x = minitorch.randn(3)
    assert_same(compiled(x), defaults_and_keyword_only(x))
    assert_same(compiled(x, 3, bias=-1.0), defaults_and_keyword_only(x, 3, bias=-1.0))


def locals_assigned_on_one_path(x):
    if x.sum() > 0:
        a = x + 1
    else:
        a = x - 1
    return a * 2


def test_a_local_assigned_in_a_branch_reaches_the_join():
    run(locals_assigned_on_one_path, list(signs((3,))))


# ---- where there is no break: the frame runs eagerly ------------------------------------------


def break_in_a_loop(x, ys):
    for y in ys:
        if y.sum() > 0:  # resuming mid-loop is not done: the frame runs eagerly
            x = x + y
    return x


def test_a_break_inside_a_loop_runs_the_frame_eagerly():
    ys = (minitorch.ones(2), -minitorch.ones(2))
    backend = run(break_in_a_loop, [(minitorch.randn(2), ys)])
    assert backend.count == 0
    (reason,) = fallback_reasons(break_in_a_loop)
    assert "branch on a tensor's value" in reason


def break_in_a_try(x):
    try:
        print("inside")
    except ValueError:
        pass
    return x * 2


def test_no_break_inside_a_try_block(capsys):
    backend = run(break_in_a_try, [(minitorch.randn(2),)])
    assert backend.count == 0
    # An exception of the call must reach the except clause, which the transformed code
    # would not be inside of: the frame runs eagerly (a grad mode block is left and entered
    # again instead: test_grad_mode_blocks.py).
    (reason,) = fallback_reasons(break_in_a_try)
    assert "try" in reason, reason


def test_fullgraph_turns_a_break_into_an_error_naming_the_line():
    compiled = optimize(one_branch, backend=EAGER, fullgraph=True)
    with pytest.raises(CompileError, match=f"line {line_of(one_branch, 'if x.sum() > 0')}"):
        compiled(minitorch.randn(3))


# ---- the seeds' three hard cases (../shared/seeds/000_*) ----------------------------------------


def conditional(x):
    if x.sum() < 0:
        return x + 1
    return x - 1


def shape_dependent(x):
    bsz, *sizes = x.shape
    return x.reshape(bsz, -1).sum(1) * len(sizes)


def with_numpy(x):
    y = np.ones(x.shape, dtype=np.float32)
    return x + minitorch.from_numpy(y)


def test_seed_conditional_gives_eager_results_on_both_branches_and_explain_shows_the_break():
    run(conditional, list(signs((3,))))
    out = minitorch._dynamo.explain(conditional)(-minitorch.ones(3))
    assert out.graph_break_count == 1
    assert out.break_reasons[0].lineno == line_of(conditional, "if x.sum() < 0")


def test_seed_shape_dependent_compiles_without_a_break_guarded_on_the_shape():
    backend = run(shape_dependent, [(minitorch.randn(2, 3, 4),), (minitorch.randn(2, 3, 4),)])
    assert backend.count == 1 and breaks_of(shape_dependent) == []
    out = minitorch._dynamo.explain(shape_dependent)(minitorch.randn(2, 3, 4))
    assert "L['x'].shape == (2, 3, 4)" in out.guards


def external_code(x):  # seed 000, as written there
    import numpy as np

    return x + minitorch.from_numpy(np.random.random((5, 5, 5)))


def test_seed_external_code_as_written_imports_and_breaks_around_numpy():
    backend = CountingBackend()
    compiled = optimize(external_code, backend=backend)
    x = minitorch.randn(5, 5, 5)
    for _ in range(2):
        np.random.seed(0)
        out = compiled(x)
        np.random.seed(0)
        assert_same(out, external_code(x))  # the same draws: numpy really ran, once per call
    assert fallback_reasons(external_code) == [] and backend.count == 1  # the add, after numpy
    assert "numpy" in breaks_of(external_code)[0].reason


def test_seed_numpy_gives_eager_results_with_its_break_reason_shown():
    run(with_numpy, [(minitorch.randn(2, 2),)])
    out = minitorch._dynamo.explain(with_numpy)(minitorch.randn(2, 2))
    assert out.graph_break_count >= 1
    assert out.break_reasons[0].lineno == line_of(with_numpy, "np.ones(")
