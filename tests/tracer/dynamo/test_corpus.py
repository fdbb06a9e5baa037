"""The capture corpus: small functions of every kind people write, each compiled and
called on a sequence of inputs, every result compared with eager, and the capture pinned.

Each `Case` pins, for the function's own code object:
    graphs    how many graphs the backend compiled (its resume functions' graphs included)
    breaks    graph breaks recorded in its cache entries (resume functions have their own)
    entries   its cache entries: the first compile plus each recompile
    eager     whether some entry runs the frame eagerly (a recorded fallback, for now)
A case that is a fallback for now says so in its comment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

import minitorch
from tests.tracer.dynamo import corpus as c
from tests.tracer.dynamo.helpers import CountingBackend, assert_same
from tracer.dynamo import cache_entries, fallback_reasons, optimize, recompile_reasons

pytestmark = pytest.mark.capture


@dataclass
class Case:
    fn: object
    calls: list  # argument tuples, one per call
    graphs: int
    breaks: int = 0
    entries: int = 1
    eager: bool = False
    kwargs: list = field(default_factory=list)  # keyword arguments per call, when any


def copy_arg(value):
    """A fresh copy of tensors (so in-place ops in one run cannot leak into the other)."""
    if isinstance(value, minitorch.Tensor):
        out = minitorch.tensor(value.detach().numpy().copy(), dtype=value.dtype)
        return out.requires_grad_(value.requires_grad) if value.is_leaf else out
    if isinstance(value, (list, tuple)):
        return type(value)(copy_arg(v) for v in value)
    if isinstance(value, dict):
        return {k: copy_arg(v) for k, v in value.items()}
    if isinstance(value, c.Counter):  # a plain object the function mutates
        fresh = c.Counter()
        fresh.__dict__.update({k: copy_arg(v) for k, v in vars(value).items()})
        return fresh
    return value


def run_case(case: Case) -> CountingBackend:
    backend = CountingBackend()
    compiled = optimize(case.fn, backend=backend)
    for i, args in enumerate(case.calls):
        kwargs = case.kwargs[i] if case.kwargs else {}
        mine, theirs = copy_arg(args), copy_arg(args)
        assert_same(compiled(*mine, **copy_arg(kwargs)), case.fn(*theirs, **copy_arg(kwargs)))
        state = [vars(a) if isinstance(a, c.Counter) else a for a in (*mine, *theirs)]
        assert_same(state[: len(mine)], state[len(mine) :])  # the same mutations of the inputs
    return backend


def breaks_of(fn) -> int:
    return sum(len(entry.graph_breaks) for entry in cache_entries(fn))


def t(*values, **kw) -> minitorch.Tensor:
    return minitorch.tensor(list(values), **kw)


POS, NEG = t(1.0, 2.0, 3.0), t(-1.0, -2.0, -3.0)


# ---- the table: (graphs, breaks, entries) pinned; `eager` marks a recorded fallback ----------

R = minitorch.randn
F64 = minitorch.tensor([1.0, -2.0], dtype=minitorch.float64)
CASES = {
    "straight_line": Case(c.straight_line, [(R(2, 3), R(3)), (R(2, 3), R(3))], graphs=1),
    "python_bool_arg": Case(c.bool_arg, [(POS, True), (POS, False), (POS, True)], 2, entries=2),
    "python_int_arg": Case(c.int_arg, [(POS, 2), (POS, 2), (POS, 3)], graphs=2, entries=2),
    "math_and_builtins": Case(c.math_and_builtins, [(POS, [1, 2])], graphs=1),
    # a tensor `if`: the condition's graph, then one resume function per branch taken
    "tensor_branch": Case(c.tensor_branch, [(POS,), (NEG,), (POS,)], graphs=3, breaks=1),
    "branches_and_or": Case(c.and_or, [(POS, POS), (POS, NEG), (NEG, POS), (NEG, NEG)], 8, 1),
    "three_branches": Case(c.three_in_a_row, [(POS,), (NEG,), (POS * 3,)], graphs=7, breaks=1),
    "shape_branch": Case(c.shape_branch, [(R(3, 2),), (R(1, 2),)], graphs=2, entries=2),
    "dim_branch": Case(c.dim_branch, [(R(3, 2),), (R(3),)], graphs=2, entries=2),
    "dtype_branch": Case(c.dtype_branch, [(POS,), (F64,), (POS,)], graphs=2, entries=2),
    "range_loop": Case(c.range_loop, [(POS,), (NEG,)], graphs=1),
    "list_loop_enumerate_zip": Case(c.list_loop, [(POS, [POS, NEG, POS])], graphs=1),
    # a dict argument: guarded on its type and keys (in order); `.items()` unrolled
    "dict_loop": Case(
        c.dict_loop,
        [(POS, {"a": POS, "bb": NEG}), (NEG, {"a": NEG, "bb": POS}), (POS, {"bb": POS, "a": NEG})],
        graphs=2,
        entries=2,
    ),
    "print_at_start": Case(c.print_start, [(POS,), (NEG,)], graphs=1, breaks=1),
    "print_in_middle": Case(c.print_middle, [(POS,), (NEG,)], graphs=2, breaks=1),
    # a break inside a loop body: the frame runs eagerly (resuming mid-loop is not done)
    "print_in_loop": Case(c.print_in_loop, [(POS,)], graphs=0, breaks=1, eager=True),
    "numpy_call_kwargs": Case(c.numpy_kwargs, [(POS,), (NEG,)], graphs=2, breaks=1),
    "opaque_values_on_stack": Case(c.values_on_stack, [(POS,), (NEG,)], graphs=2, breaks=1),
    # .item(): a graph before it; after it, one graph per value of the number
    "item": Case(c.item_call, [(POS,), (NEG,)], graphs=3, breaks=1),
    # a break in a no_grad block: a graph entering it, a resume function starting inside it
    "no_grad_break": Case(c.no_grad_break, [(POS,)], graphs=2, breaks=1),
    "closure_across_break": Case(c.make_closure(3.0), [(POS,), (NEG,)], graphs=3, breaks=1),
    "inlined_helper": Case(c.calls_helper, [(POS,)], graphs=1),
    # a function made by MAKE_FUNCTION and called in the frame: inlined
    "nested_def": Case(c.nested_def, [(POS,), (NEG,)], graphs=1),
    "nested_closure": Case(c.nested_closure, [(POS, 2.0), (NEG, 2.0)], graphs=1),
    "defaults_kwonly": Case(
        c.defaults_kwonly,
        [(POS,), (POS, 3), (POS, 3)],
        graphs=2,
        entries=2,
        kwargs=[{}, {"bias": -1.0}, {"bias": -1.0}],
    ),
    # a partial object: its func is inlined with the bound arguments (guarded by value)
    "partial": Case(c.calls_partial, [(POS,), (NEG,)], graphs=1),
    # a method of a plain Python object: inlined, `self.k` read as G['SCALER'].k
    "bound_method": Case(c.calls_bound_method, [(POS,), (NEG,)], graphs=1),
    "global_tensor": Case(c.uses_global_tensor, [(POS,)], graphs=1),
    "global_flag": Case(c.uses_global_flag, [(POS,)], graphs=1),
    # x.add_ on an input: recorded as x + 1, then copied back into the caller's tensor
    "in_place_method": Case(c.in_place, [(POS,), (NEG,)], graphs=1),
    # in-place methods on a tensor the graph made are recorded functionally
    "in_place_intermediate": Case(c.in_place_intermediate, [(POS,), (NEG,)], graphs=1),
    # `+=` on a tensor: recorded functionally, like y.add_ (variables/inplace.py)
    "augmented_assign": Case(c.augmented, [(POS,), (NEG,)], graphs=1),
    # the caller's list, dict and object mutated: replayed after the graph (side_effects.py)
    "side_effects": Case(
        c.side_effects,
        [(POS, [], {"a": 1}, c.Counter()), (NEG, [NEG], {}, c.Counter())],
        graphs=2,
        entries=2,
    ),
    "input_add_then_read": Case(c.input_add_then_read, [(POS, NEG), (NEG, POS)], graphs=1),
    "aliasing": Case(c.aliasing, [(POS, POS), (POS, NEG)], graphs=1),
    # comprehensions (3.11: a nested code object, inlined; 3.12+: inlined by CPython)
    "list_comprehension": Case(c.list_comp, [(POS,), (NEG,)], graphs=1),
    # sum() of tensors: one add per item, as eager adds them
    "comprehension_over_list": Case(c.comp_over_tensors, [([POS, NEG],), ([NEG, POS],)], 1),
    # a generator expression: run to its end when made (its body is one expression)
    "generator_expression": Case(c.generator_expr, [(POS,), (NEG,)], graphs=1),
    "dict_comprehension": Case(c.dict_comp, [(POS,), (NEG,)], graphs=1),
    "nested_comprehension": Case(c.nested_comp, [(POS, {"a": 1, "b": 2})], graphs=1),
    "slicing": Case(c.slicing, [(R(3, 4),), (R(3, 4),)], graphs=1),
    "starred_nested_unpacking": Case(c.starred, [([POS, NEG, POS],)], graphs=1),
    "seed_shape_unpacking": Case(c.seed_shape, [(R(2, 3, 4),), (R(2, 3, 4),)], graphs=1),
    # a list argument: guarded on its type and length (a third item retraces)
    "list_input_output": Case(
        c.list_in_out, [([POS, NEG],), ([NEG, POS],), ([POS, NEG, NEG],)], graphs=2, entries=2
    ),
    # dict inputs (values sourced as L['d']['a']) and dict literals rebuilt by the codegen
    "dict_input": Case(c.dict_in, [({"a": POS, "b": NEG},), ({"a": NEG, "b": POS},)], graphs=1),
    "dict_output": Case(c.dict_out, [(POS,), (NEG,)], graphs=1),
    "dict_build_and_mutate": Case(c.dict_mutate, [(POS, {"a": NEG})], graphs=1),
    "dict_live_across_break": Case(c.dict_across_break, [(POS,), (NEG,)], graphs=2, breaks=1),
    "shape_sequence_static": Case(c.shape_seq, [(R(2),), (R(3),), (R(2),), (R(4),)], 3, entries=3),
    "requires_grad_change": Case(
        c.straight_line, [(R(2, 3, requires_grad=True), R(3)), (R(2, 3), R(3))], graphs=2, entries=2
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_corpus(name, capsys):
    case = CASES[name]
    backend = run_case(case)
    assert (backend.count, breaks_of(case.fn), len(cache_entries(case.fn))) == (
        case.graphs,
        case.breaks,
        case.entries,
    )
    assert bool(fallback_reasons(case.fn)) == case.eager


# ---- what changes between calls: recompiles and their reasons ------------------------------


def test_global_tensor_and_flag_changed_between_calls(monkeypatch):
    # A global tensor is a graph input: a new value of the same shape reuses the graph, a new
    # shape recompiles; a flag that shaped the graph recompiles when it changes.
    for fn, name, new in [
        (c.uses_global_tensor, "W", minitorch.ones(2, 3) * 2),
        (c.uses_global_flag, "FLAG", False),
    ]:
        backend = CountingBackend()
        compiled = optimize(fn, backend=backend)
        assert_same(compiled(POS), fn(POS))
        if name == "W":
            monkeypatch.setattr(c, name, minitorch.ones(3) * 5)
            assert_same(compiled(POS), fn(POS))
            assert backend.count == 1
        monkeypatch.setattr(c, name, new)
        assert_same(compiled(POS), fn(POS))
        assert backend.count == 2
        (reason,) = recompile_reasons(fn)
        assert f"G['{name}']" in reason


def test_module_attribute_and_train_eval():
    model = c.Affine()
    backend = CountingBackend()
    compiled = optimize(model.forward, backend=backend)
    x = R(2, 3)
    assert_same(compiled(x), model(x))
    model.eval()
    assert_same(compiled(x), model(x))
    model.scale = 3.0
    assert_same(compiled(x), model(x))
    model.train()
    assert_same(compiled(x), model(x))
    assert backend.count == 4  # train, eval, eval with scale 3, train with scale 3
    reasons = recompile_reasons(c.Affine.forward)
    assert "training" in reasons[0] and "scale" in reasons[1]


@pytest.mark.parametrize("dynamic", [None, False, True])
def test_shape_sequence_modes(dynamic):
    # shape_seq reads x.shape[0] as an int, so in every mode that dim is specialised (guarded
    # exactly again) and each new size compiles; code that never reads a size compiles twice
    # (None), once (True) or per size (False): see test_dynamic_shapes.py.
    backend = CountingBackend()
    compiled = optimize(c.shape_seq, backend=backend, dynamic=dynamic)
    for n in [2, 3, 2, 4, 3]:
        x = R(n)
        assert_same(compiled(x), c.shape_seq(x))
    assert backend.count == 3
    assert all("shape" in r for r in recompile_reasons(c.shape_seq))


def test_recompile_limit(monkeypatch):
    from minitorch import config

    monkeypatch.setattr(config, "recompile_limit", 3)
    backend = CountingBackend()
    compiled = optimize(c.int_arg, backend=backend)
    with pytest.warns(UserWarning, match="recompile limit"):
        for n in range(6):
            assert_same(compiled(POS, n), c.int_arg(POS, n))
    assert backend.count == 3 and len(cache_entries(c.int_arg)) == 3
    (reason,) = fallback_reasons(c.int_arg)
    assert "recompile limit (3)" in reason
    assert_same(compiled(POS, 1), c.int_arg(POS, 1))  # a cached value still runs compiled
    assert backend.count == 3
