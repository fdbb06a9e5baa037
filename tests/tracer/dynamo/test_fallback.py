"""What cannot be captured runs eagerly with a recorded reason, or fails with fullgraph=True.

A break where a graph break can happen (a data-dependent branch, `.item()`, a call that cannot
be traced) is tested in test_graph_breaks.py; here are the places where it cannot: a loop body,
a try block, an instruction with no handler.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import minitorch
from tests.tracer.dynamo.helpers import CountingBackend, assert_same
from tracer.dynamo import cache_entries, fallback_reasons, optimize, recompile_reasons
from tracer.dynamo.compiler import EAGER

pytestmark = pytest.mark.capture


class _Rows:
    """An iterable whose __iter__ is Python code that tracing does not run."""

    def __iter__(self):
        return iter([1.0, 2.0])


_ROWS = _Rows()


def for_loop(x):
    total = x[0]
    for row in _ROWS:  # iterating a user object: its __iter__ is not traced
        total = total + row
    return total


def relative_import(x):
    from . import helpers  # a relative import depends on the frame's package: not traced

    return helpers.assert_same is not None and x + 1


def mutates_a_list(x, out):
    out.append(x.sin())
    out.sort(key=id)  # not traced (ids are not known while tracing): the frame runs eagerly
    return x


def with_try(x):
    y = x.sin()
    try:
        y = y * 2
    except ValueError:
        pass
    return y


def bad_shapes(x, y):
    return x + y


def line_of(fn, text: str) -> int:
    """The source line of `fn` that contains `text`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize(
    "fn, words, text",
    [
        (for_loop, "missing: GET_ITER (a for loop", "for row in _ROWS:"),
        (relative_import, "a relative import", "from . import helpers"),
        (with_try, "code inside a try or with block", "y = y * 2"),
    ],
)
def test_unsupported_runs_eagerly_with_its_reason(fn, words, text):
    backend = CountingBackend()
    compiled = optimize(fn, backend=backend)
    x = minitorch.randn(3, 4)
    try:
        expected = fn(x)
    except TypeError:  # seed 1: eager minitorch itself has no `<` on tensors yet
        with pytest.raises(TypeError):
            compiled(x)
    else:
        assert_same(compiled(x), expected)
    assert backend.count == 0
    (reason,) = fallback_reasons(fn)
    assert words in reason
    assert reason.endswith(f"{__file__}:{line_of(fn, text)})")


def test_a_fallback_is_cached_under_its_guards():
    compiled = optimize(for_loop, backend=EAGER)
    x = minitorch.randn(3)
    compiled(x)
    compiled(minitorch.randn(3))
    compiled(minitorch.randn(3) * 2)  # the guards hold: the cached fallback runs, no retrace
    (entry,) = cache_entries(for_loop)
    assert entry.transformed is None and entry.fallback_reason is not None
    assert len(fallback_reasons(for_loop)) == 1


def test_fallback_guards_cover_what_tracing_read():
    # The list argument was wrapped (type and length guards) before `.sort` failed, so a
    # call with another type of argument does not reuse the eager entry: it is traced again.
    compiled = optimize(mutates_a_list, backend=EAGER)
    x, out = minitorch.randn(3), []
    compiled(x, out)
    assert len(out) == 1
    (entry,) = cache_entries(mutates_a_list)
    assert "type(L['out']) is list" in entry.guard.source
    assert "builtins.id" in fallback_reasons(mutates_a_list)[0]
    with pytest.raises(AttributeError):
        compiled(x, (x,))
    assert recompile_reasons(mutates_a_list) == [
        "type(L['out']) is list failed: type(L['out']) was <class 'tuple'>"
    ]


def test_fullgraph_raises_compile_error_naming_the_line():
    compiled = optimize(for_loop, backend=EAGER, fullgraph=True)
    with pytest.raises(minitorch.CompileError) as info:
        compiled(minitorch.randn(3))
    message = str(info.value)
    assert "fullgraph=True" in message and "missing: GET_ITER" in message
    assert f"line {line_of(for_loop, 'for row in')}, in for_loop" in message
    assert "for row in _ROWS:" in message
    assert cache_entries(for_loop) == []


def test_shape_error_falls_back_so_eager_raises_it_at_the_users_line():
    compiled = optimize(bad_shapes, backend=EAGER)
    with pytest.raises(minitorch.ShapeError):
        compiled(minitorch.randn(3), minitorch.randn(4))
    assert "operator.add() raised ShapeError" in fallback_reasons(bad_shapes)[0]
    strict = optimize(bad_shapes, backend=EAGER, fullgraph=True)
    with pytest.raises(minitorch.CompileError, match="ShapeError"):
        strict(minitorch.randn(3), minitorch.randn(5))


def test_fullgraph_past_the_recompile_limit_raises(monkeypatch):
    from minitorch import config

    monkeypatch.setattr(config, "recompile_limit", 1)
    compiled = optimize(bad_shapes, backend=EAGER, fullgraph=True)
    compiled(minitorch.randn(3), minitorch.randn(3))
    with pytest.raises(minitorch.CompileError, match="recompile limit"):
        compiled(minitorch.randn(4), minitorch.randn(4))


def test_only_functions_and_methods_can_be_optimized():
    with pytest.raises(minitorch.CompileError, match="expected a Python function"):
        optimize(len, backend=EAGER)


def reads_a_deleted_argument(x):
    y = x.sin()
    del x
    return y + x  # noqa: F821 - UnboundLocalError, on purpose


def test_a_deleted_argument_is_unbound():
    compiled = optimize(reads_a_deleted_argument, backend=EAGER)
    with pytest.raises(UnboundLocalError):
        compiled(minitorch.randn(3))
    assert (
        "local variable 'x' is read before it is assigned"
        in fallback_reasons(reads_a_deleted_argument)[0]
    )


def test_a_failing_backend_falls_back_to_eager_with_its_reason():
    def broken_backend(gm, example_inputs):
        raise RuntimeError("no kernels today")

    def f(x):
        return x.sin() + 1

    x = minitorch.rand(3)
    compiled = minitorch.compile(f, backend=broken_backend)
    with pytest.warns(UserWarning, match="no kernels today"):
        out = compiled(x)
    np.testing.assert_allclose(out.numpy(), f(x).numpy())
    reason = "backend 'broken_backend' failed: RuntimeError: no kernels today"
    assert fallback_reasons(f) == [reason]
    np.testing.assert_allclose(compiled(x).numpy(), f(x).numpy())  # cached: no second attempt


def test_a_failing_backend_with_fullgraph_is_a_compile_error():
    def broken_backend(gm, example_inputs):
        raise RuntimeError("no kernels today")

    compiled = minitorch.compile(lambda x: x * 2, backend=broken_backend, fullgraph=True)
    with pytest.raises(minitorch.CompileError, match="no kernels today"):
        compiled(minitorch.rand(3))


def test_a_wrapped_function_binds_its_own_parameters():
    """minitorch.compile(F.gelu): the public function is a functools.wraps wrapper taking
    (*args, **kwargs); binding the call by the wrapped gelu's signature left `kwargs` unbound
    and the frame failed with a NameError of our own making."""
    import minitorch.nn.functional as F

    minitorch._dynamo.reset()
    x = minitorch.randn(8)
    explanation = minitorch._dynamo.explain(F.gelu)(x, approximate="tanh")
    assert "before it is assigned" not in str(explanation)
    compiled = minitorch.compile(F.gelu)
    np.testing.assert_array_equal(
        compiled(x, approximate="tanh").numpy(), F.gelu(x, approximate="tanh").numpy()
    )
