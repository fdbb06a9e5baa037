"""Guards and the cache: hits, recompiles and their reasons, the limit, reset, the printed forms,
and what the guard pins besides values: memory overlap, function objects, classes."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import config
from minitorch._logging import Recorder
from tests.tracer.dynamo.helpers import CountingBackend, assert_same, guard_parts
from tracer.dynamo import cache_entries, fallback_reasons, optimize, recompile_reasons, reset
from tracer.dynamo.memory_overlap import alias_pattern, shares_memory

pytestmark = pytest.mark.capture

SCALE = 2.0
W = minitorch.randn(4)


def sincos(x):
    return minitorch.sin(x) ** 2 + minitorch.cos(x) ** 2


def scaled(x):
    return x * SCALE


def with_weight(x):
    return x * W


def times_n(x, n):
    return x * n


def compiled_with_counter(fn):
    backend = CountingBackend()
    return optimize(fn, backend=backend), backend


def test_pinned_graph_and_guards_of_sincos():
    compiled, backend = compiled_with_counter(sincos)
    compiled(minitorch.randn(3, 4))
    (gm,) = backend.graphs
    assert (
        str(gm.graph)
        == """\
graph():
    %x : [num_users=2] = placeholder[target=x]
    %sin : [num_users=1] = call_function[target=minitorch.sin](args = (%x,), kwargs = {})
    %pow_1 : [num_users=1] = call_function[target=operator.pow](args = (%sin, 2), kwargs = {})
    %cos : [num_users=1] = call_function[target=minitorch.cos](args = (%x,), kwargs = {})
    %pow_2 : [num_users=1] = call_function[target=operator.pow](args = (%cos, 2), kwargs = {})
    %add : [num_users=1] = call_function[target=operator.add](args = (%pow_1, %pow_2), kwargs = {})
    return (add,)"""
    )
    assert gm.compile_subgraph_reason == "return value"
    (entry,) = cache_entries(compiled)
    assert (
        entry.guard.source
        == """\
def guard(L, G):
    return (
        minitorch.is_grad_enabled()
        and G['minitorch'] is minitorch
        and G['minitorch'].sin is ___function_sin
        and ___tensor_key(L['x']) == ___tensor_L_x  # Tensor float32[3, 4], stride (4, 1), cpu
        and G['minitorch'].cos is ___function_cos
    )
"""
    )
    # the one tuple stands for these parts, which explain a failure
    assert guard_parts(entry).splitlines()[3:9] == [
        "type(L['x']) is minitorch.Tensor",
        "L['x'].shape == (3, 4)",
        "L['x'].stride() == (4, 1)",
        "L['x'].dtype is minitorch.float32",
        "L['x'].device == 'cpu'",
        "not L['x'].requires_grad",
    ]
    assert "graph_out = __compiled_fn_sincos" in entry.transformed.source


def test_same_shape_hits_the_cache():
    compiled, backend = compiled_with_counter(sincos)
    for _ in range(3):
        x = minitorch.randn(3, 4)
        assert_same(compiled(x), sincos(x))
    assert backend.count == 1
    assert recompile_reasons(sincos) == []


@pytest.mark.parametrize(
    "second, reason",
    [
        (
            lambda: minitorch.randn(5, 4),
            "L['x'].shape == (3, 4) failed: L['x'].shape was minitorch.Size([5, 4])",
        ),
        (
            lambda: minitorch.randn(3, 4, dtype=minitorch.float64),
            "L['x'].dtype is minitorch.float32 failed: L['x'].dtype was minitorch.float64",
        ),
        (
            lambda: minitorch.randn(3, 4, requires_grad=True),
            "not L['x'].requires_grad failed: L['x'].requires_grad was True",
        ),
        (
            lambda: minitorch.ones(1, 4).expand(3, 4),
            "L['x'].stride() == (4, 1) failed: L['x'].stride() was (0, 1)",
        ),
        (lambda: 3.0, "type(L['x']) is minitorch.Tensor failed: type(L['x']) was <class 'float'>"),
    ],
)
def test_a_failed_guard_recompiles_and_records_the_first_failing_part(second, reason):
    compiled, backend = compiled_with_counter(sincos)
    compiled(minitorch.randn(3, 4))
    value = second()
    if isinstance(value, float):  # minitorch.sin(3.0) is an eager error: the frame falls back
        with pytest.raises(minitorch.MinitorchError):
            compiled(value)
    else:
        assert_same(compiled(value), sincos(value))
    assert recompile_reasons(sincos) == [reason]
    assert len(cache_entries(sincos)) == 2


def test_global_constant_change_recompiles(monkeypatch):
    compiled, backend = compiled_with_counter(scaled)
    x = minitorch.randn(3)
    compiled(x)
    monkeypatch.setitem(globals(), "SCALE", 3.0)
    assert_same(compiled(x), x * 3.0)
    assert backend.count == 2
    assert recompile_reasons(scaled) == ["G['SCALE'] == 2.0 failed: G['SCALE'] was 3.0"]
    monkeypatch.setitem(globals(), "SCALE", 3)  # an int: == holds, the type guard does not
    assert_same(compiled(x), x * 3)
    assert (
        recompile_reasons(scaled)[-1]
        == "type(G['SCALE']) is float failed: type(G['SCALE']) was <class 'int'>"
    )


def test_global_tensor_is_an_input_guarded_like_an_argument(monkeypatch):
    compiled, backend = compiled_with_counter(with_weight)
    x = minitorch.randn(3, 4)
    compiled(x)
    monkeypatch.setitem(globals(), "W", minitorch.randn(4))  # same metadata: no recompile
    assert_same(compiled(x), x * W)
    monkeypatch.setitem(globals(), "W", minitorch.randn(1))
    assert_same(compiled(x), x * W)
    assert backend.count == 2
    assert recompile_reasons(with_weight) == [
        "G['W'].shape == (4,) failed: G['W'].shape was minitorch.Size([1])"
    ]


def test_int_arguments_are_guarded_by_value():
    compiled, backend = compiled_with_counter(times_n)
    x = minitorch.randn(3)
    compiled(x, 2)
    compiled(x, 2)
    assert_same(compiled(x, 5), x * 5)
    assert backend.count == 2
    assert recompile_reasons(times_n) == ["L['n'] == 2 failed: L['n'] was 5"]


def test_grad_mode_is_guarded():
    compiled, backend = compiled_with_counter(sincos)
    x = minitorch.randn(3)
    compiled(x)
    with minitorch.no_grad():
        compiled(x)
    assert backend.count == 2
    assert recompile_reasons(sincos) == ["minitorch.is_grad_enabled() failed"]


def test_most_recently_used_entry_is_checked_first():
    compiled, backend = compiled_with_counter(sincos)
    a, b = minitorch.randn(2), minitorch.randn(3)
    compiled(a)
    compiled(b)
    assert cache_entries(sincos)[0].guard({"x": b}, globals())
    compiled(a)  # a hit on the older entry moves it to the front
    assert backend.count == 2
    assert cache_entries(sincos)[0].guard({"x": a}, globals())


def test_recompile_limit_runs_eagerly(monkeypatch):
    monkeypatch.setattr(config, "recompile_limit", 2)
    backend = CountingBackend()
    compiled = optimize(sincos, backend=backend, dynamic=False)  # one entry per size
    with pytest.warns(UserWarning, match=r"recompile limit \(2\) reached") as warned:
        for n in (1, 2, 3, 4):
            x = minitorch.randn(n)
            assert_same(compiled(x), sincos(x))
    assert len(warned) == 1  # once, not on every call past the limit
    assert backend.count == 2
    (reason,) = fallback_reasons(sincos)
    assert reason.startswith("recompile limit (2) reached")


def test_reset_forgets_everything():
    compiled, backend = compiled_with_counter(sincos)
    x = minitorch.randn(3)
    compiled(x)
    reset()
    assert cache_entries(sincos) == []
    compiled(x)
    assert backend.count == 2


def test_another_backend_gets_its_own_entry():
    first, backend1 = compiled_with_counter(sincos)
    second, backend2 = compiled_with_counter(sincos)
    x = minitorch.randn(3)
    first(x)
    second(x)
    first(x)
    assert (backend1.count, backend2.count) == (1, 1)
    assert recompile_reasons(sincos) == ["compiled with another backend or fullgraph setting"]


def test_unused_tensor_argument_is_not_a_graph_input():
    def first_only(x, y):
        return x.sin(), y.shape[0]

    compiled, backend = compiled_with_counter(first_only)
    compiled(minitorch.randn(3), minitorch.randn(5))
    (gm,) = backend.graphs
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == ["x"]
    assert len(backend.example_inputs[0]) == 1
    # y's shape was folded into the result, so it is still guarded.
    assert "L['y'].shape == (5,)" in guard_parts(cache_entries(first_only)[0])


def test_walkthrough_records_the_graph_and_the_first_call():
    compiled, _ = compiled_with_counter(sincos)
    x = minitorch.randn(3)
    with Recorder() as rec:
        compiled(x)
        compiled(x)
    (art,) = rec.artifacts
    assert art.stage == "graph" and art.title.startswith("sincos (test_guards.py:")
    assert "class GraphModule" in art.text and "def guard(L, G):" in art.text
    assert art.seconds is not None and art.seconds >= 0
    (call,) = rec.calls
    assert call.original is sincos and call.compiled is compiled and call.args == (x,)


def grad_aware(x):
    if minitorch.is_grad_enabled():
        return x * 2
    return x * 3


def test_reading_the_grad_mode_folds_under_its_guard():
    compiled, backend = compiled_with_counter(grad_aware)
    x = minitorch.randn(3)
    assert_same(compiled(x), x * 2)
    with minitorch.no_grad():
        assert_same(compiled(x), x * 3)
    assert_same(compiled(x), x * 2)
    assert backend.count == 2


# ---- what else the guard pins: memory overlap, function objects, classes, module functions ----


def _views():
    """Pairs of tensors, built every way two tensors can (or cannot) share bytes."""
    array = np.arange(12, dtype=np.float32)
    x = minitorch.from_numpy(array.copy()).reshape(3, 4)
    return {
        "distinct": (minitorch.randn(4), minitorch.randn(4)),
        "same object": (x, x),
        "detach": (x, x.detach()),
        "two from_numpy": (minitorch.from_numpy(array), minitorch.from_numpy(array)),
        "overlapping slices": (minitorch.from_numpy(array[0:6]), minitorch.from_numpy(array[4:10])),
        "disjoint slices": (minitorch.from_numpy(array[0:6]), minitorch.from_numpy(array[6:])),
        "row and base": (x[1], x),
        "detached view": (x.detach(), x.view(12).detach()),
        "transposed": (x.t(), x),
        "column and row": (x[:, 0], x[2]),
        "flipped": (minitorch.from_numpy(array[::-1]), minitorch.from_numpy(array[11:])),
        "empty slice": (minitorch.from_numpy(array[3:3]), minitorch.from_numpy(array)),
    }


@pytest.mark.parametrize("kind", list(_views()))
def test_shares_memory_is_numpys_byte_bounds_overlap(kind):
    a, b = _views()[kind]
    assert shares_memory(a, b) == np.may_share_memory(a.numpy(), b.numpy())


def test_alias_pattern_groups_overlaps_transitively():
    array = np.arange(10, dtype=np.float32)
    a, b, c = (minitorch.from_numpy(array[i : i + 4]) for i in (0, 3, 6))  # a~b, b~c, not a~c
    other = minitorch.randn(3)
    assert alias_pattern((other, a, c, b)) == (0, 1, 1, 1)
    assert alias_pattern((a, other)) == (0, 1)


def write_then_read(a, b):
    a.add_(1)
    return b * 1


def test_inputs_that_share_memory_without_a_base_retrace():
    compiled, backend = compiled_with_counter(write_then_read)
    compiled(minitorch.zeros(3), minitorch.zeros(3))
    x, x_eager = minitorch.zeros(3), minitorch.zeros(3)
    assert_same(compiled(x, x.detach()), write_then_read(x_eager, x_eager.detach()))
    assert_same(x, x_eager)
    assert recompile_reasons(write_then_read) == [
        "___alias_pattern((L['a'], L['b'],)) == (0, 1) failed: L['a'] and L['b'] did not share "
        "memory while tracing and do now"
    ]


def helper_with_default(x, k=2):
    return x * k


def calls_helper(x):
    return helper_with_default(x)


def compiled_once(fn, x):
    """`fn` compiled and called on `x` once; the source of its guard."""
    compiled, _ = compiled_with_counter(fn)
    compiled(x)
    return compiled, guard_parts(cache_entries(fn)[0])


def test_an_inlined_functions_code_and_defaults_are_guarded(monkeypatch):
    x = minitorch.randn(3)
    compiled, source = compiled_once(calls_helper, x)
    assert "G['helper_with_default'].__code__ is ___code_helper_with_default" in source
    assert "G['helper_with_default'].__defaults__[0] == 2" in source
    monkeypatch.setattr(helper_with_default, "__defaults__", (3,))
    assert_same(compiled(x), x * 3)
    monkeypatch.setattr(helper_with_default, "__code__", sincos.__code__)
    assert_same(compiled(x), sincos(x))
    assert recompile_reasons(calls_helper) == [
        "G['helper_with_default'].__defaults__[0] == 2 failed: "
        "G['helper_with_default'].__defaults__[0] was 3",
        "G['helper_with_default'].__code__ is ___code_helper_with_default failed: "
        f"G['helper_with_default'].__code__ was {sincos.__code__!r}",
    ]


class Doubler(minitorch.nn.Module):
    def forward(self, x):
        return x * 2


class Tripler(Doubler):
    def forward(self, x):
        return x * 3


MODEL = Doubler()


def calls_model(x):
    return MODEL(x)


def test_a_modules_class_and_its_forward_are_guarded(monkeypatch):
    x = minitorch.randn(3)
    compiled, source = compiled_once(calls_model, x)
    for part in (
        "type(G['MODEL']) is ___type_Doubler",
        "G['MODEL'].__class__.forward is ___function_forward",
        "'forward' not in G['MODEL'].__dict__",
    ):
        assert part in source
    monkeypatch.setattr(MODEL, "__class__", Tripler)
    assert_same(compiled(x), x * 3)
    assert (
        recompile_reasons(calls_model)[-1]
        == f"type(G['MODEL']) is ___type_Doubler failed: type(G['MODEL']) was {Tripler!r}"
    )


def test_a_function_read_through_a_module_is_guarded(monkeypatch):
    compiled, backend = compiled_with_counter(sincos)
    x = minitorch.randn(3)
    compiled(x)
    monkeypatch.setattr(minitorch, "cos", minitorch.sin)
    assert_same(compiled(x), sincos(x))
    assert recompile_reasons(sincos) == [
        f"G['minitorch'].cos is ___function_cos failed: G['minitorch'].cos was {minitorch.sin!r}"
    ]


CALLS = [
    lambda: minitorch.randn(3, 4),  # the traced one: passes
    lambda: minitorch.randn(4, 3),
    lambda: minitorch.randn(3, 4, 1),
    lambda: minitorch.randn(4, 3).t(),
    lambda: minitorch.randn(3, 8)[:, ::2],
    lambda: minitorch.randn(3, 4, dtype=minitorch.float64),
    lambda: minitorch.randn(3, 4, requires_grad=True),
    lambda: minitorch.nn.Parameter(minitorch.randn(3, 4)),
    lambda: minitorch.randn(1, 4).expand(3, 4),
    lambda: np.ones((3, 4), np.float32),
    lambda: 3.0,
]


@pytest.mark.parametrize("make", CALLS)
def test_a_tensors_one_tuple_passes_exactly_when_its_parts_do(make):
    """[Note: a tensor guard is one tuple]: the fused check and the six parts it stands for
    agree, on the traced tensor and on one that differs in each way."""
    compiled, _ = compiled_with_counter(sincos)
    compiled(minitorch.randn(3, 4))
    guard = cache_entries(compiled)[0].guard
    scope = {"x": make()}
    assert guard(scope, globals()) == (guard.failure_reason(scope, globals()) is None)
    assert guard(scope, globals()) == (make is CALLS[0])
