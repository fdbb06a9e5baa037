"""One benchmark command: every workload, side by side, as a Markdown table.

    make bench                  # this script, then benchmarks/train_step.py
    python benchmarks/bench.py [--quick] [--only sincos mlp ...]

Each workload (benchmarks/workloads.py) runs as numpy by hand, eager minitorch,
`minitorch.compile`, and, when PyTorch is installed (`pip install -e '.[bench]'`; never a
dependency of minitorch itself), eager torch and `torch.compile`. Before anything is timed,
every implementation's result is compared with numpy's, and `explain` must show the compiled
workload as one graph with no graph break, its first call with no fallback warning: a fast
wrong answer, or a fast eager fallback, is not a result. Then:

- ms per call: medians of interleaved rounds (benchmarks/timing.py), each round one sample of
  every implementation in a rotating order, so that a slow spell of a shared machine falls on
  all of them alike. The ratio is torch.compile's time over ours (> 1: we are faster), beside
  the issue's acceptance threshold, pass or FAIL;
- the copy floor: copying sincos's input into a preallocated array on as many threads as our
  kernels use, the least a pointwise kernel that reads and writes as much can take;
- compile times, cold and warm ([Note: cold and warm compiles]);
- the machine: CPU, cores, versions. Absolute times hold for this machine only; ratios
  measured side by side travel further.

`--quick` takes fewer, shorter rounds and skips torch.compile's compile times (tens of seconds
each); `--tiny` runs every workload on small inputs, as tests/test_bench.py does.
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np
from timing import median_seconds_per_call  # benchmarks/timing.py, beside this script
from workloads import SINCOS, WORKLOADS, Workload

import minitorch
from minitorch import config

HERE = Path(__file__).resolve().parent
RTOL, ATOL = 1e-4, 1e-5  # float32; the kernels sum in another order than numpy
COLD_LIMIT_S, WARM_LIMIT_S = 0.3, 0.020  # the acceptance for compile times
WARM_RUNS = 3  # warm processes per workload, of which the median ([Note: cold and warm compiles])
COPY_FLOOR_LIMIT = 2.0  # sincos compiled within 2x of the copy floor
COLUMNS = ("numpy", "minitorch", "minitorch.compile", "torch", "torch.compile")


def import_torch() -> ModuleType | None:
    """PyTorch if it is installed, with as many threads as the machine has cores."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(os.cpu_count() or 1)
    return torch


def machine(torch: ModuleType | None) -> str:
    """One line: the CPU, its cores, the OS and the versions that the times depend on."""
    import llvmlite

    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        models = [
            line.split(":", 1)[1].strip()
            for line in cpuinfo.read_text().splitlines()
            if line.startswith("model name")
        ]
        cpu = models[0] if models else cpu
    threads = f"minitorch {config.num_threads} threads"
    if torch is None:
        with_torch = "torch not installed (`pip install -e '.[bench]'` adds its columns)"
    else:
        with_torch = f"torch {torch.__version__} ({torch.get_num_threads()} threads)"
    # The load average says whether other work shared the cores (this process adds about 1).
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{cpu}, {os.cpu_count()} cores (load average {load}), "
        f"{platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}, numpy {np.__version__}, llvmlite "
        f"{llvmlite.__version__}, {with_torch}; {threads}"
    )


@dataclass
class Row:
    workload: Workload
    ms: dict[str, float] = field(default_factory=dict)  # column -> ms per call
    problem: str | None = None  # why it was not timed

    @property
    def ratio(self) -> float | None:
        if "torch.compile" not in self.ms:
            return None
        return self.ms["torch.compile"] / self.ms["minitorch.compile"]


def implementations(workload: Workload, arrays: list[np.ndarray], torch: ModuleType | None) -> dict:
    """{column: (run, observe)} for every implementation that this machine can run."""
    impls = {"numpy": workload.numpy_implementation(arrays)}
    for name, library in (("minitorch", minitorch), ("torch", torch)):
        if library is not None:
            impls[name] = workload.implementation(library, False, arrays)
            impls[f"{name}.compile"] = workload.implementation(library, True, arrays)
    return impls


def check(workload: Workload, arrays: list[np.ndarray], impls: dict) -> str | None:
    """Why the workload cannot be timed: a value unlike numpy's, or minitorch.compile not
    compiling it whole. Runs every implementation once (so compiles each compiled one)."""
    results = {
        name: observe(run())
        for name, (run, observe) in impls.items()
        if name != "minitorch.compile"
    }
    run, observe = impls["minitorch.compile"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warns: then it is not compiled whole
        try:
            results["minitorch.compile"] = observe(run())
        except Warning as warning:
            return f"minitorch.compile falls back: {warning}"
    for name, got in results.items():
        for value, expected in zip(got, results["numpy"], strict=True):
            try:
                assert value.dtype == expected.dtype, f"dtype {value.dtype}, not {expected.dtype}"
                np.testing.assert_allclose(value, expected, rtol=RTOL, atol=ATOL)
            except AssertionError as error:
                return f"{name} differs from numpy:\n{error}"
    fn, args = workload.explain_target(minitorch, arrays)
    explained = minitorch._dynamo.explain(fn)(*args)
    if (explained.graph_count, explained.graph_break_count) != (1, 0):
        return f"minitorch.compile does not compile it whole:\n{explained}"
    return None


def copy_floor(arrays: list[np.ndarray]) -> Callable[[], object]:
    """`run`: copy the input into a preallocated array, split over minitorch's threads."""
    (a,) = arrays
    out = np.empty_like(a)
    threads = config.num_threads
    bounds = np.linspace(0, a.size, threads + 1).astype(int)
    pool = ThreadPoolExecutor(threads)

    def copy_part(i: int) -> None:
        np.copyto(out[bounds[i] : bounds[i + 1]], a[bounds[i] : bounds[i + 1]])

    return lambda: list(pool.map(copy_part, range(threads)))


def time_workload(workload: Workload, torch: ModuleType | None, args: argparse.Namespace) -> Row:
    row = Row(workload)
    arrays = workload.inputs(np.random.default_rng(0), args.tiny)
    impls = implementations(workload, arrays, torch)
    row.problem = check(workload, arrays, impls)
    if row.problem is not None:
        return row
    runs = {name: run for name, (run, _) in impls.items()}
    if workload is SINCOS:
        runs["copy floor"] = copy_floor(arrays)
    for run in runs.values():
        for _ in range(args.warmup):
            run()
    seconds = median_seconds_per_call(runs, args.rounds, args.min_sample)
    row.ms = {name: s * 1e3 for name, s in seconds.items()}
    return row


# [Note: cold and warm compiles]
# A compile time measured inside this process would flatter both compilers: the lazy imports
# of the first compile (tracer, ir, codegen; torch._inductor) would be paid once, by whichever
# workload came first, and what one workload compiled (our math library, inductor's headers)
# would serve the next. So each is measured in a fresh process (benchmarks/first_call.py) as
# the first call of the compiled workload, less a steady call (the run itself is not compiling;
# a steady call of ours gets fresh memory from the OS, as the first does and as torch's do):
#   cold  with an empty kernel cache on disk (MINITORCH_CACHE_DIR; TORCHINDUCTOR_CACHE_DIR for
#         torch.compile, whose C++ compiles it caches there): a user's very first run;
#   warm  a second fresh process given the same directory, which the cold one filled: the same
#         user's next run of the same script. The median of WARM_RUNS such processes: one
#         alone moves by a few ms with where its memory comes from (a first call whose output
#         lands in pages the inputs' making left mapped skips the page faults its steady calls
#         pay, and came out below zero for gelu).
# Both start from Python's bytecode of each library, as an installed package does (pip compiles
# a package's modules as it installs it; torch's were). Our editable checkout gets its bytecode
# from the first import, unless PYTHONDONTWRITEBYTECODE is set (it is on the machine that
# builds minitorch): then every process would compile our sources again (~10 ms), a cost no
# installed copy pays. So `compile_bytecode` writes it first, as pip would.
def compile_bytecode() -> None:
    """Python's bytecode of minitorch's packages, beside their sources (as pip installs it)."""
    root = HERE.parent
    for package in ("minitorch", "tracer", "ir", "codegen"):
        compileall.compile_dir(root / package, quiet=1)


def compile_seconds(
    workload: Workload, library: str, tiny: bool
) -> tuple[float | None, float | None]:
    """(cold, warm) seconds of the first call of the compiled workload beyond a steady call."""
    command = [sys.executable, str(HERE / "first_call.py"), workload.name, library]
    command += ["--tiny"] if tiny else []
    times = []
    with tempfile.TemporaryDirectory(prefix="minitorch-bench-") as cache:
        env = {
            **os.environ,
            "MINITORCH_CACHE_DIR": os.path.join(cache, "minitorch"),
            "TORCHINDUCTOR_CACHE_DIR": os.path.join(cache, "torchinductor"),
        }
        for _ in range(1 + WARM_RUNS):  # the cold one first
            result = subprocess.run(command, env=env, capture_output=True, text=True)
            if result.returncode != 0:
                print(f"{' '.join(command[1:])} failed:\n{result.stderr}", file=sys.stderr)
                return None, None
            times.append(float(result.stdout))
    return times[0], statistics.median(times[1:])


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "—"
    return f"{ms:.0f}" if ms >= 1000 else f"{ms:.3g}"


def verdict(ok: bool | None) -> str:
    return "—" if ok is None else ("pass" if ok else "**FAIL**")


def speed_table(rows: list[Row]) -> list[str]:
    lines = [
        "| workload | " + " | ".join(COLUMNS) + " | torch.compile / ours | target | |",
        "|---|" + "--:|" * (len(COLUMNS) + 2) + "---|",
    ]
    for row in rows:
        ratio = row.ratio
        ok = None if ratio is None else ratio >= row.workload.threshold
        cells = [fmt_ms(row.ms.get(column)) for column in COLUMNS]
        cells += ["—" if ratio is None else f"{ratio:.2f}", f"≥ {row.workload.threshold:g}"]
        cells.append("not timed: see below" if row.problem else verdict(ok))
        lines.append(f"| {row.workload.title} | " + " | ".join(cells) + " |")
    return lines


def copy_floor_line(row: Row) -> str:
    floor, ours = row.ms["copy floor"], row.ms["minitorch.compile"]
    ok = ours / floor <= COPY_FLOOR_LIMIT
    return (
        f"Copy floor for sincos (np.copyto into a preallocated array, "
        f"{config.num_threads} threads): {fmt_ms(floor)} ms; minitorch.compile / "
        f"copy floor = {ours / floor:.2f} (target ≤ {COPY_FLOOR_LIMIT:g}: {verdict(ok)})"
    )


def compile_table_header() -> list[str]:
    return [
        "| workload | minitorch.compile cold | warm start | torch.compile cold | "
        "torch.compile warm | target | |",
        "|---|--:|--:|--:|--:|--:|---|",
    ]


def compile_table_row(workload: Workload, times: dict[str, tuple]) -> str:
    def fmt(seconds: float | None, unit: str) -> str:
        if seconds is None:
            return "—"
        return f"{seconds:.2f} s" if unit == "s" else f"{fmt_ms(seconds * 1e3)} ms"

    cold, warm = times["minitorch"]
    torch_cold, torch_warm = times.get("torch", (None, None))
    ok = None if cold is None or warm is None else cold <= COLD_LIMIT_S and warm <= WARM_LIMIT_S
    cells = [
        fmt(cold, "s"),
        fmt(warm, "ms"),
        fmt(torch_cold, "s"),
        fmt(torch_warm, "ms"),
        f"≤ {COLD_LIMIT_S:g} s, ≤ {WARM_LIMIT_S * 1e3:g} ms",
        verdict(ok),
    ]
    return f"| {workload.title} | " + " | ".join(cells) + " |"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        nargs="+",
        choices=[w.name for w in WORKLOADS],
        metavar="NAME",
        help=f"some of: {', '.join(w.name for w in WORKLOADS)}",
    )
    parser.add_argument(
        "--quick", action="store_true", help="5 short rounds; no torch.compile compile times"
    )
    parser.add_argument("--tiny", action="store_true", help="small inputs (implies --quick)")
    args = parser.parse_args(argv)
    args.quick = args.quick or args.tiny
    args.rounds, args.min_sample, args.warmup = (5, 0.005, 1) if args.quick else (15, 0.02, 2)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    chosen = [w for w in WORKLOADS if not args.only or w.name in args.only]
    torch = import_torch()
    print(f"Machine: {machine(torch)}\n")
    print(
        f"ms per call, median of {args.rounds} interleaved rounds; torch.compile / ours > 1: "
        "minitorch.compile is faster\n"
    )
    if args.tiny:
        print("NOTE: --tiny: small inputs, not the sizes the rows name\n")
    rows = []
    for line in speed_table([])[:2]:
        print(line)
    for workload in chosen:
        rows.append(time_workload(workload, torch, args))
        print(speed_table(rows[-1:])[-1], flush=True)
    for row in rows:
        if row.problem:
            print(f"\n{row.workload.title}: {row.problem}")
        elif row.workload is SINCOS:
            print(f"\n{copy_floor_line(row)}")
    libraries = ["minitorch"] + (["torch"] if torch is not None and not args.quick else [])
    print(
        "\nFirst call beyond a steady call (both writing fresh memory), in a fresh process: "
        "cold = empty kernel cache on disk, warm = the same cache, filled, in later "
        f"processes (the median of {WARM_RUNS})\n"
    )
    print("\n".join(compile_table_header()))
    compile_bytecode()
    for workload in chosen:
        times = {lib: compile_seconds(workload, lib, args.tiny) for lib in libraries}
        print(compile_table_row(workload, times), flush=True)
    return 1 if any(row.problem for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
