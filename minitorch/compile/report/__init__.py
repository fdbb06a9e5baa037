"""The HTML report of a compile: every stage on one page, each line of the user's source linked
to what it became.

    python -m minitorch.compile examples/sincos.py --html out/    # then open out/index.html
    MINITORCH_REPORT=out/ python train.py                         # any program, at exit

The page is static (index.html, report.css, report.js: no server, no network, no framework)
and shows the user's source, each line marked by what became of it (in a graph, a graph break
and why, run eagerly); per compiled frame its guards, breaks, recompiles; per graph the captured,
joint, forward and backward graphs (as text and drawn), the loop IR, each kernel's code, the
bytes each kernel moves and the time each stage took. Clicking a source line highlights
everything that came from it, in every stage; clicking a kernel, the lines and nodes it fused.

    collect.py   what a run recorded -> the data model (model.py)
    rows.py      ... each stage's printed text as rows keyed by source lines
    render.py    the data model -> HTML, every text escaped
    svg.py       an fx graph drawn: Graphviz's dot where installed, else a layered layout
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import time
from collections.abc import Iterator

from minitorch import _logging, config

_HERE = os.path.dirname(__file__)


@contextlib.contextmanager
def capturing() -> Iterator[tuple[dict, list]]:
    """Compile into caches of the report's own (tracer/dynamo/cache.py's `private_caches`):
    yields their table and journal, every cache entry in compile order."""
    from tracer.dynamo.cache import private_caches

    with private_caches() as (table, journal):
        yield table, journal


def write(
    directory: str,
    recorder: _logging.Recorder,
    table: dict,
    journal: list,
    script: str,
    script_seconds: float | None = None,
) -> str:
    """Write the report of a recorded run to `directory`; returns index.html's path."""
    from minitorch.compile.report.collect import collect
    from minitorch.compile.report.render import render

    report = collect(recorder, journal, table, script, heading(), script_seconds)
    os.makedirs(directory, exist_ok=True)
    for asset in ("report.css", "report.js"):
        shutil.copyfile(os.path.join(_HERE, asset), os.path.join(directory, asset))
    path = os.path.join(directory, "index.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(render(report))
    return path


def heading() -> str:
    """How it compiled: the backend forced, if any, and the extras on."""
    extras = ", ".join(config.extras_on()) or "none (the core alone)"
    backend = config.force_backend or "as the script asked"
    return f"backend: {backend}; partitioner: {config.partitioner}; extras on: {extras}"


def record_until_exit(directory: str) -> None:
    """MINITORCH_REPORT=DIR: record every compile from now on, and write the report at exit."""
    recorder = _logging.Recorder().__enter__()
    caches = capturing()  # NOTE: kept alive by `finish`: collected, it would close the caches
    table, journal = caches.__enter__()  # this thread's compiles, for the rest of the process
    start = time.perf_counter()
    script = sys.argv[0] if sys.argv and sys.argv[0] else "<stdin>"

    def finish() -> None:
        caches.__exit__(None, None, None)
        try:
            path = write(directory, recorder, table, journal, script, time.perf_counter() - start)
            print(f"minitorch: the compile report is {os.path.abspath(path)}", file=sys.stderr)
        except Exception as e:  # noqa: BLE001 - a report must never fail the program
            print(f"minitorch: MINITORCH_REPORT: {type(e).__name__}: {e}", file=sys.stderr)

    atexit.register(finish)
