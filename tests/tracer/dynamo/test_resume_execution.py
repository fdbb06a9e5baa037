"""Resume functions: a function continued from the middle gives what the original gives.

Each test picks a point in a real function's bytecode (by opname, never by offset: offsets
differ between versions), builds the resume function, and runs it on the stack values and
locals the original had there.
"""

from __future__ import annotations

import dis

import pytest

from tracer.dynamo import compat
from tracer.dynamo.resume_execution import ResumePoint, resume_function

pytestmark = pytest.mark.capture


def resume(fn, point: ResumePoint):
    return resume_function(fn.__code__, point, fn.__globals__)


def after_nth(fn, opname: str, n: int = 0) -> int:
    """The offset of the instruction after the n-th `opname` of fn."""
    instructions = [i for i in dis.get_instructions(fn) if i.opname != "CACHE"]
    hits = [k for k, i in enumerate(instructions) if i.opname == opname]
    return instructions[hits[n] + 1].offset


def at_first_call_of(fn, name: str) -> int:
    """The offset of the CALL that calls the global `name` (the first after loading it)."""
    instructions = list(dis.get_instructions(fn))
    start = next(
        k for k, i in enumerate(instructions) if i.opname == "LOAD_GLOBAL" and i.argval == name
    )
    return next(i.offset for i in instructions[start:] if i.opname == "CALL")


def test_continue_after_a_call_with_its_result_on_the_stack():
    def f(x, n):
        y = x * 2
        z = len([y, y])
        return y + n + z

    point = ResumePoint(after_nth(f, "CALL"), stack=(False,), live_locals=("x", "n", "y"))
    resumed = resume(f, point)
    # at that point: y = 6, and len's result (2) is on the stack
    assert resumed(2, 3, 1, 6) == f(3, 1)
    assert resumed.__name__ == f"__resume_at_{point.offset}_f"


def test_stack_values_under_a_pending_call_and_a_null_slot():
    def f(a, b):
        return max(a, len([b]), 0)

    # Continue at the CALL of len: below its callable sit max's NULL slot (3.11/3.12: under
    # max; 3.13: above it), max, a, len's NULL and len, and [b]; pass them all.
    offset = at_first_call_of(f, "len")
    stack = _stack_at(f, offset)
    values = {"max": max, "a": 5, "len": len, "list": [7]}
    args = [values[kind] for kind in stack if kind != "NULL"]
    resumed = resume(f, ResumePoint(offset, tuple(k == "NULL" for k in stack), ()))
    assert resumed(*args) == f(5, 7)


def test_closures_and_cell_variables_keep_working():
    k = 10

    def f(x):
        total = x + k  # k: a free variable of f

        def inner():
            return total * 2  # total: a cell variable of f

        n = len([x])
        return inner() + n

    # `k` arrives as an argument (its LOAD_DEREF became a LOAD_FAST); `total`, a cell
    # variable, arrives as an argument too and MAKE_CELL makes it a cell again.
    point = ResumePoint(
        after_nth(f, "CALL", 0), stack=(False,), live_locals=("x", "total", "inner", "k")
    )
    resumed = resume(f, point)
    assert resumed.__code__.co_freevars == ()
    assert resumed(1, 3, 13, lambda: 26, 10) == f(3)


def test_a_free_variable_must_be_passed_and_never_written():
    k = 10

    def f(x):
        n = len([x])
        return n + k

    with pytest.raises(ValueError, match="free variables"):
        resume(f, ResumePoint(after_nth(f, "CALL"), stack=(False,), live_locals=("x",)))

    def g(x):
        nonlocal k
        n = len([x])
        k = n
        return k

    with pytest.raises(ValueError, match="cannot write"):
        resume(g, ResumePoint(after_nth(g, "CALL"), stack=(False,), live_locals=("x", "k")))


def test_a_loop_after_the_resume_point_runs_fully():
    def f(xs):
        s = len(xs)
        for v in xs:
            s += v
        return s

    point = ResumePoint(after_nth(f, "CALL"), stack=(False,), live_locals=("xs",))
    assert resume(f, point)(3, [1, 2, 3]) == f([1, 2, 3])


def test_resume_code_is_cached_per_point():
    def f(x):
        y = len([x])
        return y

    point = ResumePoint(after_nth(f, "CALL"), stack=(False,), live_locals=("x",))
    assert resume(f, point).__code__ is resume(f, point).__code__


def _stack_at(fn, offset: int) -> list[str]:
    """A tiny abstract interpreter for f's straight-line prefix: what is on the stack."""
    stack: list[str] = []
    for inst in dis.get_instructions(fn):
        if inst.offset == offset:
            return stack
        name, arg = inst.opname, inst.arg
        if name == "LOAD_GLOBAL":
            if compat.load_global_pushes_null(arg):
                stack.extend(compat.with_null(inst.argval, "NULL"))
            else:
                stack.append(inst.argval)
        elif name == "LOAD_FAST":
            stack.append(inst.argval)
        elif name == "BUILD_LIST":
            del stack[len(stack) - arg :]
            stack.append("list")
        elif name in ("RESUME", "NOP", "PRECALL"):
            pass
        else:
            raise AssertionError(f"unexpected {name}")
    raise AssertionError("offset not reached")
