"""A pytest plugin: every PTX the test suite generates is assembled by ptxas at the end of the
run, and the run says so in one line:

    ptxas -arch=sm_80 accepted all 412 PTX modules the tests generated

or `ptxas SKIPPED: ...` where ptxas is not installed. A module ptxas rejects fails the run
(exit status 1) and is listed with ptxas's message. The root conftest.py loads this plugin.

Every PTX made through codegen/cuda/target.py's `compile_ptx` is seen (`observe_ptx`), once
per distinct text. A run of the conformance suite makes ~900, and ptxas costs ~40 ms a call
whatever the size, so they are assembled in batches: up to BATCH modules that share a header
(.version, .target) merged into one, each one's module-level names (kernels, functions,
globals) given a suffix of its own so that they cannot clash. Where a batch is rejected, its
modules are assembled one by one, so only the real culprits are reported, with ptxas's
message on each alone.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

import pytest

from codegen.cuda import ptxas, target
from minitorch.errors import CompileError

_generated: dict[str, tuple[str, str]] = {}  # hash of (arch, ptx) -> (ptx, arch)
_report: list[str] = []  # the lines to print at the end


def _keep(ptx: str, arch: str) -> None:
    _generated.setdefault(hashlib.sha256(f"{arch}\n{ptx}".encode()).hexdigest(), (ptx, arch))


BATCH = 64  # modules per call of ptxas

# A name defined at module level: `.visible .entry kernel0(`, `.func (.param .b64 r) f(`,
# `.global .align 8 .b8 table[160] = {...};`, `.shared .align 4 .b8 buffer[32];`
_DEFINED = re.compile(
    r"^(?:\.(?:visible|extern|weak)\s+)?\.(?:entry|func|global|shared|const)\s+"
    r"(?:\(.*?\)\s*)?(?:\.align\s+\d+\s+)?(?:\.\w+\s+)*([A-Za-z_$%][\w$]*)",
    re.MULTILINE,
)


def rejections(modules: Iterable[tuple[str, str]]) -> list[str]:
    """ptxas's message for each (ptx, arch) it rejects; [] when it accepts them all."""
    batches: dict[tuple[str, str], list[str]] = {}  # (arch, header) -> bodies
    for ptx, arch in modules:
        header, body = _split(ptx)
        batches.setdefault((arch, header), []).append(body)
    work = [
        (arch, header, bodies[k : k + BATCH])
        for (arch, header), bodies in batches.items()
        for k in range(0, len(bodies), BATCH)
    ]
    with ThreadPoolExecutor(max_workers=4) as pool:  # ptxas waits more than it computes
        return [message for found in pool.map(_check_batch, work) for message in found]


def _check_batch(work: tuple[str, str, list[str]]) -> list[str]:
    arch, header, bodies = work
    merged = header + "".join(_renamed(body, f"_m{k}") for k, body in enumerate(bodies))
    if _message(merged, arch) is None:
        return []
    found = (_message(header + body, arch) for body in bodies)  # which one, alone?
    return [message for message in found if message is not None]


def _message(ptx: str, arch: str) -> str | None:
    try:
        ptxas.assemble(ptx, arch)
    except CompileError as error:
        return str(error)
    return None


def _split(ptx: str) -> tuple[str, str]:
    """(everything up to the .address_size line, the rest); ('', ptx) if it has none."""
    match = re.search(r"^\.address_size .*\n", ptx, re.MULTILINE)
    return (ptx[: match.end()], ptx[match.end() :]) if match else ("", ptx)


def _renamed(body: str, suffix: str) -> str:
    """`body` with each name it defines at module level renamed name + suffix, everywhere."""
    for name in set(_DEFINED.findall(body)):
        body = re.sub(rf"(?<![\w$%.]){re.escape(name)}(?![\w$])", name + suffix, body)
    return body


def pytest_configure(config: pytest.Config) -> None:
    target.observe_ptx(_keep)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _generated:
        _report.append("ptxas: the tests generated no PTX")
        return
    archs = ", ".join(sorted({arch for _, arch in _generated.values()}))
    if ptxas.find_ptxas() is None:
        _report.append(
            f"ptxas SKIPPED: not installed; {len(_generated)} PTX modules the "
            "tests generated were not assembled"
        )
        return
    failed = rejections(_generated.values())
    if failed:
        _report.append(
            f"ptxas -arch={archs} REJECTED {len(failed)} of the {len(_generated)} "
            "PTX modules the tests generated:"
        )
        _report.extend(failed)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    else:
        _report.append(
            f"ptxas -arch={archs} accepted all {len(_generated)} PTX modules the tests generated"
        )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in _report:
        terminalreporter.write_line(line)
