"""Dicts, comprehensions and functions made in the frame: captured, and equal to eager.

The corpus (test_corpus.py) pins their graph counts; here each detail gets its own check: the
guards on a dict argument, what a comprehension leaves behind, when a cell is read, and the
cases that must still run eagerly (mutating the caller's dict, writing a nonlocal).
"""

from __future__ import annotations

import pytest

import minitorch
from tests.tracer.dynamo.helpers import CountingBackend, assert_same
from tracer.dynamo import fallback_reasons, optimize, recompile_reasons
from tracer.dynamo.instructions import read_instructions

pytestmark = pytest.mark.capture

X = minitorch.tensor([1.0, -2.0, 3.0])


def compiled_run(fn, *args, eager_ok: bool = False):
    backend = CountingBackend()
    out = optimize(fn, backend=backend)(*args)
    assert_same(out, fn(*args))
    assert bool(fallback_reasons(fn)) == eager_ok, fallback_reasons(fn)
    return backend, out


# ---- dicts -----------------------------------------------------------------------------------


def reads_dict(x, d):
    total = x * 0
    for k in d:
        total = total + d[k] * len(k)
    return total, len(d), "a" in d, "z" not in d, list(d.keys())


def test_a_dict_argument_is_guarded_on_its_type_and_keys_in_order():
    backend = CountingBackend()
    compiled = optimize(reads_dict, backend=backend)
    a, b = X * 2, X * 3  # not x itself: aliasing between inputs is guarded too
    for d in [{"a": a, "bb": b}, {"a": b, "bb": a}, {"bb": a, "a": b}, {"a": a}]:
        assert_same(compiled(X, d), reads_dict(X, d))
    assert backend.count == 3  # a new key order and a new key set recompile; new values do not
    assert all("list(L['d'])" in reason for reason in recompile_reasons(reads_dict))
    # each value is a graph input sourced under the dict
    names = [n.meta["source"] for n in backend.graphs[0].graph.nodes if n.op == "placeholder"]
    assert names == ["L['x']", "L['d']['a']", "L['d']['bb']"]


def test_a_dict_of_constants_guards_the_values_it_folded():
    def f(x, cfg):
        return x * cfg["scale"] + cfg["shift"]

    backend = CountingBackend()
    compiled = optimize(f, backend=backend)
    for cfg in [{"scale": 2, "shift": 1}, {"scale": 2, "shift": 1}, {"scale": 3, "shift": 1}]:
        assert_same(compiled(X, cfg), f(X, cfg))
    assert backend.count == 2
    (reason,) = recompile_reasons(f)
    assert "L['cfg']['scale']" in reason


def builds_dict(x):
    d = {"x": x}
    d["y"] = d["x"] * 2
    return d, {**d, "z": 1}, {i: x + i for i in range(2)}


def test_a_returned_dict_is_rebuilt_fresh_on_every_call():
    _, first = compiled_run(builds_dict, X)
    compiled = optimize(builds_dict, backend=CountingBackend())
    second = compiled(X)
    assert first[0] is not second[0] and list(second[2]) == [0, 1]


def mutates_callers_dict(x, d):
    d["new"] = x * 2
    return x + 1


def test_assigning_into_the_callers_dict_is_replayed_after_the_graph():
    mine, theirs = {"a": 1}, {"a": 1}
    backend = CountingBackend()
    optimize(mutates_callers_dict, backend=backend)(X, mine)
    mutates_callers_dict(X, theirs)
    assert list(mine) == list(theirs) == ["a", "new"]
    assert_same(mine["new"], theirs["new"])
    assert fallback_reasons(mutates_callers_dict) == [] and backend.count == 1


def test_a_missing_key_raises_the_eager_key_error():
    def f(x, d):
        return x * d["missing"]

    with pytest.raises(KeyError):
        optimize(f, backend=CountingBackend())(X, {"a": 1})


# ---- comprehensions --------------------------------------------------------------------------


def comprehension_restores_its_variable(x, i):
    ys = [x * i for i in range(3)]  # the comprehension's own i
    return ys, x + i  # the argument i again


def test_a_comprehension_does_not_leak_its_loop_variable():
    backend, _ = compiled_run(comprehension_restores_its_variable, X, 5)
    assert backend.count == 1


def comprehension_with_condition_and_fstring(x, names):
    return {f"{n}_{k!r}": x * k for k, n in enumerate(names) if k != 1}


def test_a_dict_comprehension_with_a_condition_and_an_f_string():
    backend, out = compiled_run(comprehension_with_condition_and_fstring, X, ("a", "b", "c"))
    assert list(out) == ["a_0", "c_2"] and backend.count == 1


def comprehension_in_try(x):
    try:
        return [x * i for i in range(2)]
    except ValueError:
        return []


def test_a_comprehension_inside_a_try_block_is_still_protected():
    compiled_run(comprehension_in_try, X, eager_ok=True)
    (reason,) = fallback_reasons(comprehension_in_try)
    assert "try" in reason


def test_only_a_real_try_marks_instructions_protected():
    protected = [i.opname for i in read_instructions(comprehension_in_try.__code__) if i.protected]
    assert "BINARY_OP" in protected or "MAKE_FUNCTION" in protected  # 3.12+ or 3.11
    free = read_instructions(comprehension_restores_its_variable.__code__)
    assert not any(i.protected for i in free)


# ---- nested functions ------------------------------------------------------------------------


def cell_read_at_call_time(x):
    k = 2

    def scale(y, *, bias=0.5):
        return y * k + bias

    first = scale(x)
    k = 3  # the cell changes: the second call sees 3, as eager does
    return first, scale(x, bias=1.0)


def test_a_closure_reads_its_cell_when_called():
    backend, _ = compiled_run(cell_read_at_call_time, X)
    assert backend.count == 1


def nested_twice(x):
    def outer(y):
        def inner(z):
            return z * y

        return inner(y + 1)

    return outer(x)


def test_a_function_made_inside_an_inlined_function():
    compiled_run(nested_twice, X)


def writes_nonlocal(x):
    n = 1

    def bump():
        nonlocal n
        n = n + 1

    bump()
    return x * n


def returns_functions(x, k):
    def plain(y, m=3):
        return y * m

    def closure(y):
        return y * k

    return plain, closure


def test_a_nonlocal_write_or_an_escaping_closure_runs_eagerly():
    compiled_run(writes_nonlocal, X, eager_ok=True)
    assert "nonlocal" in fallback_reasons(writes_nonlocal)[0]
    plain, closure = optimize(returns_functions, backend=CountingBackend())(X, 2.0)
    assert_same(plain(X), X * 3)
    assert_same(closure(X), X * 2.0)
    assert "closure" in fallback_reasons(returns_functions)[0]


def test_a_returned_function_without_a_closure_is_made_by_the_transformed_code():
    def f(x):
        return lambda y, k=2: y * k

    fn = optimize(f, backend=CountingBackend())(X)
    assert fallback_reasons(f) == [] and fn.__qualname__ == f(X).__qualname__
    assert_same(fn(X), X * 2)


# ---- generator expressions -------------------------------------------------------------------


def generators(x, ys):
    total = sum((y * i for i, y in enumerate(ys)), x)
    pairs = tuple((k, x + k) for k in range(2))
    return total, pairs, sum(len(p) for p in pairs)


def test_generator_expressions_feed_sum_tuple_and_loops():
    backend, _ = compiled_run(generators, X, [X, X * 2, -X])
    (gm,) = backend.graphs
    adds = [n for n in gm.graph.nodes if n.op == "call_function" and "add" in str(n.target)]
    assert len(adds) == 3 + 2  # x + y0*0 + y1*1 + y2*2, then x + 0 and x + 1


def a_generator_function(x):
    def gen():
        yield x * 2

    return list(gen())


def test_a_generator_function_is_not_inlined():
    compiled_run(a_generator_function, X, eager_ok=True)
    assert "only generator expressions" in fallback_reasons(a_generator_function)[0]


def nested_def_across_break(x):
    def scale(y, k=2, *, bias=0.5):
        return y * k + bias

    print(end="")  # a graph break: `scale` is live, so the transformed code makes it again
    return scale(x), scale(x, 3, bias=1.0)


def closure_across_break(x):
    k = 2

    def scale(y):
        return y * k

    print(end="")  # a closure shares its cells: it cannot be made again, the frame runs eagerly
    return scale(x)


def test_a_function_made_in_the_frame_across_a_graph_break():
    backend, _ = compiled_run(nested_def_across_break, X)
    assert backend.count == 1  # the resume function's graph; nothing to compute before print
    compiled_run(closure_across_break, X, eager_ok=True)


# ---- calls with *args and **kwargs (CALL_FUNCTION_EX) ----------------------------------------


def _scaled(a, b, scale=1.0):
    return a * b * scale


def star_calls(x, y):
    args, kw = (x, y), {"scale": 2.0}
    return _scaled(*args, **kw) + _scaled(*args) + minitorch.add(*[x, y]) + _scaled(x, *(y,))


def forwards_everything(*xs, **kw):
    return _scaled(*xs, **kw).sum()


def test_star_arguments_are_unpacked_into_the_call():
    backend, _ = compiled_run(star_calls, X, X * 2)
    assert backend.count == 1  # one graph: no break at the calls
    backend = CountingBackend()
    compiled = optimize(forwards_everything, backend=backend)
    assert_same(compiled(X, X, scale=3.0), forwards_everything(X, X, scale=3.0))
    assert backend.count == 1 and fallback_reasons(forwards_everything) == []


def test_a_keyword_given_twice_is_still_cpythons_type_error():
    def twice(x):
        return _scaled(x, x, **{"scale": 1.0}, **{"scale": 2.0})

    with pytest.raises(TypeError, match="multiple values for keyword argument 'scale'"):
        optimize(twice, backend=CountingBackend())(X)
