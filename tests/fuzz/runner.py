"""Differential testing: run one program eagerly and compiled, and report where they differ.

Eager mode is the oracle. For each backend, a fresh `minitorch.compile(program, backend=B)` is
called four times, each on fresh inputs, and each call is compared with an eager call on equal
inputs:

    call 1   the first call: capture, compile, run
    call 2   equal inputs again: the guards pass and the cached code runs
    call 3   every size above 1 grown by 1: a guard fails, the frame is recompiled with the
             sizes that changed made dynamic (or the program now raises, in eager too)
    call 4   grown by 2: the dynamic entry runs without recompiling

A compiled function may run eagerly instead, with a recorded reason: that is a fallback, not a
failure, and `Result.fallbacks` collects the reasons so that each gap is counted. A difference
on any call is a failure: a wrong answer, or a crash (an exception eager did not raise). So is
a backend that failed on a captured graph: the driver catches the exception and runs the frame
eagerly, which keeps the user's answer right but hides a compiler bug ("backend crash").
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import minitorch
from tests.fuzz.compare import Observation, difference, observe
from tests.fuzz.program import Program
from tracer.dynamo.cache import private_caches

BACKENDS = ("eager", "aot_eager", "inductor")
RESIZES = (0, 0, 1, 2)  # the growth of the sizes on each call (see above)


@dataclass
class Failure:
    """One program that a backend got wrong, and how."""

    program: Program
    backend: str
    call: int  # 1 to 4 (see RESIZES)
    kind: str  # "value", "aliasing", "crash", ... (compare.difference)
    message: str

    def signature(self) -> tuple[str, str]:
        """What the minimizer keeps constant: the kind, and a crash's exception class."""
        if self.kind == "backend crash":  # which exception, and where it came from
            return self.kind, self.message.split(":")[1].strip()
        return self.kind, self.message.split(":")[0] if self.kind == "crash" else ""


@dataclass
class Result:
    failures: list[Failure] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)  # one reason per frame run eagerly


def run_program(program: Program, backends: tuple[str, ...] = BACKENDS) -> Result:
    """Compare `program` compiled by each backend with eager mode, call by call."""
    result = Result()
    function = program.function()
    expected = {resize: observe(function, program.make_inputs(resize)) for resize in RESIZES}
    for backend in backends:
        failure, reasons = _run_backend(program, function, backend, expected)
        result.fallbacks += reasons
        if failure is not None:
            result.failures.append(failure)
    return result


def _run_backend(
    program: Program, function, backend: str, expected: dict[int, Observation]
) -> tuple[Failure | None, list[str]]:
    """The first failing call of `backend` (or None), and its fallback reasons."""
    failure = None
    # Private caches: this program's entries (its resume functions' too) are listed in
    # `journal`, and thrown away afterwards, so programs do not see each other's code.
    with warnings.catch_warnings(), private_caches() as (_, journal):
        warnings.simplefilter("ignore")  # fallback warnings: counted below instead
        compiled = minitorch.compile(function, backend=backend)
        for call, resize in enumerate(RESIZES, 1):
            got = observe(compiled, program.make_inputs(resize))
            found = difference(expected[resize], got, program.precision())
            if found is not None:
                failure = Failure(program, backend, call, *found)
                break
        reasons = [fallback_class(e.fallback_reason) for e in journal if e.fallback_reason]
    crashed = next((r for r in reasons if _BACKEND_FAILED.match(r)), None)
    if failure is None and crashed is not None:
        failure = Failure(program, backend, 1, "backend crash", crashed)
    return failure, reasons


_BACKEND_FAILED = re.compile(r"backend '\w+' failed: ")


def fallback_class(reason: str) -> str:
    """A fallback reason without the parts that differ between programs (lines, numbers)."""
    reason = reason.splitlines()[0]
    reason = re.sub(r"L\['[^']*'\]", "L[...]", reason)  # which local
    reason = re.sub(r" of shape \[[^]]*\]| and dtype \w+| \(.*", "", reason)  # details
    return re.sub(r"\d+", "N", reason)[:150]
