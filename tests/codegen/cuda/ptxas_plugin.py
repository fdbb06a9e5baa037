"""A pytest plugin: every PTX the test suite generates is assembled by ptxas at the end of the
run, and the run says so in one line:

    ptxas -arch=sm_80 accepted all 412 PTX modules the tests generated

or `ptxas SKIPPED: ...` where ptxas is not installed. A module ptxas rejects fails the run
(exit status 1) and is listed with ptxas's message. The root conftest.py loads this plugin.

Every PTX made through codegen/cuda/target.py's `compile_ptx` is seen (`observe_ptx`), once
per distinct text; they are assembled at the end, two at a time, so the suite pays ~20 ms
per distinct module.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

import pytest

from codegen.cuda import ptxas, target
from minitorch.errors import CompileError

_generated: dict[str, tuple[str, str]] = {}  # hash of (arch, ptx) -> (ptx, arch)
_report: list[str] = []  # the lines to print at the end


def _keep(ptx: str, arch: str) -> None:
    _generated.setdefault(hashlib.sha256(f"{arch}\n{ptx}".encode()).hexdigest(), (ptx, arch))


def rejections(modules: Iterable[tuple[str, str]]) -> list[str]:
    """ptxas's message for each (ptx, arch) it rejects; [] when it accepts them all."""

    def check(module: tuple[str, str]) -> str | None:
        try:
            ptxas.assemble(*module)
        except CompileError as error:
            return str(error)
        return None

    with ThreadPoolExecutor(max_workers=2) as pool:
        return [message for message in pool.map(check, modules) if message is not None]


def pytest_configure(config: pytest.Config) -> None:
    target.observe_ptx(_keep)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _generated:
        return
    archs = ", ".join(sorted({arch for _, arch in _generated.values()}))
    if ptxas.find_ptxas() is None:
        _report.append(f"ptxas SKIPPED: not installed; {len(_generated)} PTX modules the "
                       "tests generated were not assembled")
        return
    failed = rejections(_generated.values())
    if failed:
        _report.append(f"ptxas -arch={archs} REJECTED {len(failed)} of the {len(_generated)} "
                       "PTX modules the tests generated:")
        _report.extend(failed)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    else:
        _report.append(f"ptxas -arch={archs} accepted all {len(_generated)} PTX modules the "
                       "tests generated")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in _report:
        terminalreporter.write_line(line)
