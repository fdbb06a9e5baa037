"""The fuzzer in CI: a fixed budget of seeded programs, and tests of the fuzzer itself.

`test_compiled_equals_eager` runs the same few hundred programs on every run (seeds are fixed,
so a failure reproduces) and fails with a minimized reproducer of each kind of failure. The
other tests check that the fuzzer can see what it claims to see: a fuzzer that cannot fail
proves nothing.
"""

from __future__ import annotations

import minitorch
from tests.fuzz.campaign import fuzz, minimize_groups
from tests.fuzz.compare import difference, observe
from tests.fuzz.generator import generate
from tests.fuzz.minimize import minimize, reproducer
from tests.fuzz.program import Input, Program
from tests.fuzz.runner import Failure, run_program

PROGRAMS = 250  # about 40 s on one core, with all three backends


def test_compiled_equals_eager():
    summary = fuzz(PROGRAMS, seed=0)
    if summary.failed:
        raise AssertionError(summary.report(minimize_groups(summary)))


def test_generation_is_deterministic_and_eager_runs_it():
    program = generate(12)
    assert program == generate(12)
    assert observe(program.function(), program.make_inputs()).error is None


def test_a_wrong_backend_is_caught_and_minimized(monkeypatch):
    program = Program(
        (Input("x", (3, 4), "float32"),),
        ("t0 = x.sin()", "t1 = t0 * 2", "t2 = x.cos()"),
        ("t1", "t2"),
        seed=1,
    )

    def off_compiler(fn, backend):  # a "compiler" whose first output is off by 1e-2
        return lambda *inputs: (fn(*inputs)[0] + 1e-2, *fn(*inputs)[1:])

    monkeypatch.setattr(minitorch, "compile", off_compiler)
    failure = run_program(program, ("off",)).failures[0]
    assert (failure.kind, failure.call) == ("value", 1)
    smaller = minimize(failure)
    print(reproducer(smaller))
    assert smaller.program.body == () and smaller.program.inputs[0].shape == ()
    assert "def program(x):" in reproducer(smaller)


def test_aliasing_mutation_and_grad_are_compared():
    x = Input("x", (2, 3), "float32", requires_grad=True)
    program = Program((x,), ("t0 = x.t()",), ("t0",), seed=2)
    fn = program.function()
    want = observe(fn, program.make_inputs())
    assert (
        difference(want, observe(lambda x: fn(x).clone(), program.make_inputs()))[0] == "aliasing"
    )
    assert difference(want, observe(lambda x: fn(x.detach()), program.make_inputs()))[0] in (
        "requires_grad",
        "grad",
    )
    ints = Program((Input("x", (3,), "int32"),), ("x.add_(1)",), ("x",), seed=3)
    want = observe(ints.function(), ints.make_inputs())
    got = observe(lambda x: x + 1, ints.make_inputs())
    assert difference(want, got)[0] == "input mutation"


def test_errors_must_match():
    program = Program((Input("x", (3,), "float32"),), ("t0 = x.t().t()[5]",), ("t0",), seed=4)
    want = observe(program.function(), program.make_inputs())
    assert want.error is not None
    assert difference(want, observe(lambda x: x, program.make_inputs()))[0] == "missing error"
    assert difference(want, want) is None
    assert Failure(program, "eager", 1, "crash", "KeyError: x").signature() == ("crash", "KeyError")


def test_programs_use_the_idioms_of_real_models():
    sources = [generate(seed).source() for seed in range(200)]
    for idiom in (
        "F.dropout",
        ".long()",
        ".values",
        "minitorch.arange",
        "F.cross_entropy",
        ".chunk(",
        ".gather(",
        ".roll(",
        "+=",
        "tril",
        "minitorch.where",
        " @ ",
        "F.linear",
        "F.conv2d",
        "max_pool2d",
        "avg_pool2d",
        "F.scaled_dot_product_attention",
        "is_causal=True",
    ):
        assert any(idiom in source for source in sources), idiom
    dtypes = {spec.dtype for seed in range(200) for spec in generate(seed).inputs}
    assert dtypes == {"float32", "float64", "int32", "int64", "bool"}


def test_dropout_draws_the_same_mask_or_is_caught():
    program = Program(
        (Input("x", (4, 5), "float32", requires_grad=True),),
        ("t0 = F.dropout(x * 2, p=0.5)",),
        ("t0",),
        seed=5,
    )
    fn = program.function()
    want = observe(fn, program.make_inputs())
    assert difference(want, observe(fn, program.make_inputs())) is None  # seeded: repeatable

    def other_mask(x):
        minitorch.manual_seed(1)
        return fn(x)

    assert difference(want, observe(other_mask, program.make_inputs()))[0] == "value"


def test_precision_is_float32_when_any_op_computes_in_float32():
    # float64 inputs, but exp of an int64 is float32 math: its output carries float32 rounding
    def program(*body):
        return Program((Input("x", (3,), "float64"),), body, ("t1",), seed=0)

    assert program("t1 = x.sin()").precision() == "float64"
    assert program("t0 = x.argmax(0) + 1", "t1 = t0.exp()").precision() == "float32"


def test_statements_whose_casts_are_undefined_or_rounding_are_not_kept():
    from tests.fuzz.generator import _runs

    # exp(20.0) ~ 4.9e8: a one-ulp rounding difference becomes an integer one; exp(72.0)
    # overflows int32 (undefined). The sum hides both from a check of the results.
    for value in (20.0, 72.0, float("nan")):
        assert not _runs("t0 = x.exp().int().sum()", {"x": minitorch.full((2,), value)})
    assert not _runs("t0 = x.long()", {"x": minitorch.full((2,), float("inf"))})
    # a comparison, an argmax or a cast decided by the last bit (see fragile.py)
    near = {"x": minitorch.tensor([1.0, 1.0 + 1e-6, 3.0]), "y": minitorch.tensor([1.0, 1.0, 2.9])}
    assert not _runs("t0 = (x > y).sum()", dict(near))
    assert not _runs("t0 = x[:2].argmax()", dict(near))
    assert not _runs("t0 = x.long() + 1", {"x": minitorch.tensor([0.9999999, 2.0])})
    namespace = {"x": minitorch.full((2,), 3.0)}
    assert _runs("t0 = x.exp().int().sum() + (x * -1e30).argmax() + (x > x + 0).sum()", namespace)
    assert _runs("t1 = (x > 3.0000001) + (x == x) + x.long() + x.max(0)[1]", namespace)
    assert "t0" in namespace and "t1" in namespace
