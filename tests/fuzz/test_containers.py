"""The container fuzzer in CI: fixed seeds against CPython, and tests of the fuzzer itself.

`test_container_programs_match_cpython` runs 60 seeded programs through the eager and
inductor backends (a few seconds), three calls each. A seed in KNOWN_WRONG (none today) is
one that fails for a known cause being fixed: list it with the cause, and remove it with
the fix.
"""

from __future__ import annotations

import minitorch
from tests.fuzz.container_runner import (
    ContainerFailure,
    container_reproducer,
    fuzz_containers,
    minimize_container,
    run_container_program,
)
from tests.fuzz.containers import ContainerProgram, generate_containers

SEEDS = range(60)
KNOWN_WRONG: tuple[int, ...] = ()


def test_container_programs_match_cpython():
    summary = fuzz_containers(len(SEEDS), SEEDS.start)
    unexpected = [f for f in summary.every if f.program.seed not in KNOWN_WRONG]
    if unexpected:
        raise AssertionError(summary.report([minimize_container(unexpected[0])]))


def test_generation_is_deterministic_and_runs_plainly():
    program = generate_containers(5)
    assert program == generate_containers(5)
    assert len(program.body) >= 3
    namespace_gl = program.function().__globals__["GL"]
    assert namespace_gl == []


def test_a_compiler_that_returns_a_tuple_for_a_list_is_caught(monkeypatch):
    program = ContainerProgram(("l1 = [x, 2]", "t2 = x * 2", "d3 = {'a': t2}"), seed=1)

    def tupling_compiler(fn, backend):  # a "compiler" whose lists come back as tuples
        def run(*args):
            return tuple(tuple(v) if type(v) is list else v for v in fn(*args))

        return run

    monkeypatch.setattr(minitorch, "compile", tupling_compiler)
    failure = run_container_program(program, ("tupling",))[0]
    assert failure.kind == "wrong" and "tuple" in failure.message
    smaller = minimize_container(failure)
    assert smaller.program.body == ("l1 = [x, 2]",)
    assert "def program(x, lst, d):" in container_reproducer(smaller)


def test_a_lost_argument_mutation_is_caught(monkeypatch):
    program = ContainerProgram(("lst.append(x)", "t1 = x + 1"), seed=2)

    def copying_compiler(fn, backend):  # runs on copies: the caller never sees a mutation
        return lambda x, lst, d: fn(x, list(lst), dict(d))

    monkeypatch.setattr(minitorch, "compile", copying_compiler)
    failure = run_container_program(program, ("copying",))[0]
    assert isinstance(failure, ContainerFailure)
    assert "arguments after the call" in failure.message


def test_a_shared_global_list_is_compared(monkeypatch):
    program = ContainerProgram(("GL.append(x * 3)",), seed=3)

    def forgetful_compiler(fn, backend):  # drops the append to the global list
        def run(*args):
            result = fn(*args)
            fn.__globals__["GL"].clear()
            return result

        return run

    monkeypatch.setattr(minitorch, "compile", forgetful_compiler)
    failure = run_container_program(program, ("forgetful",))[0]
    assert "arguments after the call[3]" in failure.message
