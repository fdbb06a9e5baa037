"""Issue 14's GPU benchmark: graphs compiled for "cuda" against cupy, on one GPU.

    make bench-cuda
    python benchmarks/bench_cuda.py [--tiny]

Three workloads of `make bench` (benchmarks/workloads.py), with their inputs on the GPU: sincos
on 1e7 and 1e8 float32 (pointwise: the memory's bandwidth is its bound), row softmax 4096x4096
and layernorm 4096x1024 (reductions per row, then a pointwise pass). Each runs as

- device copy: `cupy.copyto` of the (first) input into a preallocated array: as many bytes as a
  pointwise kernel reads and writes, at the speed the GPU's memory allows;
- cupy: the workload's numpy program called on cupy arrays (numpy hands each ufunc to cupy
  through `__array_ufunc__`): a cupy kernel per operation, as a user writes it;
- cupy kernels: the same by hand as cupy's custom kernels (an `ElementwiseKernel`; the row
  reductions cupy's own or a `ReductionKernel`), fused where a CUDA programmer would fuse;
- minitorch: eager minitorch on "cuda" (each op a cupy call);
- minitorch.compile: compiled by the CUDA backend (codegen/cuda/: LLVM's PTX, cupy's launch).

Before anything is timed, every result is compared with numpy's (so compiled equals eager) and
the compiled call must not fall back. Times: medians of interleaved rounds (benchmarks/timing.py)
read when the GPU is done ([Note: timing a GPU]). "GB/s": the bytes the workload must move (its
inputs and output, once each) over our time; "of copy": that over the copy's (the goal: ≥ 80%).

Without a GPU (no cupy, or none that cupy sees) it prints one line saying so and exits 0.
NOTE: not cuda.py: a script's folder comes first on sys.path, and a module `cuda` here would
hide the `cuda` package (cuda.pathfinder) that cupy imports.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from types import ModuleType

import numpy as np
from bench import ATOL, RTOL, fmt_ms, verdict  # benchmarks/bench.py, beside this script
from timing import median_seconds_per_call
from workloads import LAYER_NORM, SINCOS, SOFTMAX, FunctionWorkload

import minitorch

BANDWIDTH_GOAL = 0.8  # the goal: sincos at >= 80% of a device-to-device copy's bandwidth
COLUMNS = ("device copy", "cupy", "cupy kernels", "minitorch", "minitorch.compile")
HEADER = (
    "| workload | " + " | ".join(COLUMNS) + " | cupy kernels / ours | GB/s | of copy | goal "
    "| |\n|---|" + "--:|" * (len(COLUMNS) + 4) + "---|"
)


# The workloads as cupy's custom kernels: each takes cupy, gives a function of cupy arrays.
def sincos_kernels(cupy: ModuleType) -> Callable:
    return cupy.ElementwiseKernel(
        "T x", "T y", "y = sin(x) * sin(x) + cos(x) * cos(x)", "bench_sincos"
    )


def softmax_kernels(cupy: ModuleType) -> Callable:
    """Three kernels: cupy's row max, the sum of exp(x - max) in one reduction, the divide."""
    sum_exp = cupy.ReductionKernel(
        "T x, T m", "T s", "exp(x - m)", "a + b", "s = a", "0", "bench_sum_exp"
    )
    normalize = cupy.ElementwiseKernel(
        "T x, T m, T s", "T y", "y = exp(x - m) / s", "bench_softmax_normalize"
    )

    def softmax(x):
        m = x.max(axis=1, keepdims=True)  # (rows, 1)
        return normalize(x, m, sum_exp(x, m, axis=1, keepdims=True))

    return softmax


def layer_norm_kernels(cupy: ModuleType) -> Callable:
    """cupy's row mean and variance, then one kernel for the normalization and the affine."""
    normalize = cupy.ElementwiseKernel(
        "T x, T m, T v, T w, T b", "T y", "y = (x - m) / sqrt(v + (T)1e-5) * w + b", "bench_norm"
    )

    def layer_norm(x, weight, bias):
        return normalize(
            x, x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True), weight, bias
        )

    return layer_norm


@dataclass(frozen=True)
class Case:
    """A row of the table: a workload of `make bench`, at one size, beside its cupy kernels."""

    title: str
    workload: FunctionWorkload
    elements: int | None  # sincos's input size; None: the workload's own inputs
    kernels: Callable[[ModuleType], Callable]  # cupy -> the workload as cupy kernels
    goal: float | None = None  # the least fraction of the copy's bandwidth, where one is set

    def inputs(self, rng: np.random.Generator, tiny: bool) -> list[np.ndarray]:
        arrays = self.workload.inputs(rng, tiny)
        if tiny or self.elements is None:
            return arrays
        return [np.resize(arrays[0], self.elements)]  # the 1e7 input, repeated to this size


CASES = [
    Case("sincos 1e7", SINCOS, 10**7, sincos_kernels, BANDWIDTH_GOAL),
    Case("sincos 1e8", SINCOS, 10**8, sincos_kernels, BANDWIDTH_GOAL),
    Case(SOFTMAX.title, SOFTMAX, None, softmax_kernels),
    Case(LAYER_NORM.title, LAYER_NORM, None, layer_norm_kernels),
]


@dataclass
class Row:
    case: Case
    moved: int  # bytes the workload must read and write: its inputs and its output, once each
    copied: int  # bytes the device copy reads and writes
    ms: dict[str, float] = field(default_factory=dict)  # column -> ms per call
    problem: str | None = None  # why it was not timed

    @property
    def of_copy(self) -> float:  # our bandwidth as a fraction of the device copy's
        return (self.moved / self.ms["minitorch.compile"]) / (self.copied / self.ms["device copy"])


def implementations(case: Case, arrays: list[np.ndarray], cupy: ModuleType) -> dict:
    """{column: run}: each a call on data already on the GPU, its result left there."""
    on_gpu = [cupy.asarray(a) for a in arrays]
    tensors = [minitorch.from_numpy(a).to("cuda") for a in arrays]
    program = case.workload.program(minitorch)
    minitorch._dynamo.reset()  # each case compiles anew, not after the shapes of the one before
    return {
        "device copy": partial(cupy.copyto, cupy.empty_like(on_gpu[0]), on_gpu[0]),
        "cupy": partial(case.workload.numpy_program, *on_gpu),
        "cupy kernels": partial(case.kernels(cupy), *on_gpu),
        "minitorch": partial(program, *tensors),
        "minitorch.compile": partial(minitorch.compile(program), *tensors),
    }


def check(impls: dict, expected: np.ndarray, cupy: ModuleType) -> str | None:
    """Why the case cannot be timed: a result unlike numpy's or off the GPU, or a compiled call
    that falls back. Runs each implementation but the copy once (so compiles the compiled one)."""
    for name, run in list(impls.items())[1:]:  # not the device copy: it has no result
        with warnings.catch_warnings():
            if name == "minitorch.compile":
                warnings.simplefilter("error")  # a fallback warns: then it is not compiled
            try:
                out = run()
            except Warning as warning:
                return f"{name} falls back: {warning}"
        if not (isinstance(out, cupy.ndarray) or getattr(out, "is_cuda", False)):
            return f"{name} gives a {type(out).__name__} that is not on the GPU"
        got = out.get() if isinstance(out, cupy.ndarray) else out.cpu().numpy()
        try:
            assert got.dtype == expected.dtype, f"dtype {got.dtype}, not {expected.dtype}"
            np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
        except AssertionError as error:
            return f"{name} differs from numpy:\n{error}"
    return None


# [Note: timing a GPU]
# A launch returns once the kernel is queued, before the GPU has run it: a clock read after a
# call measures the launch. Waiting for the GPU after every call would add the host's work
# (guards, cupy's launch) to the kernel's, never overlapping. So a sample is a loop of calls
# between two waits: `gpu_clock` waits for all that is queued, then reads the time, at the
# sample's start (what the sample before queued is not counted) and end (all its kernels ran).
# That is the time per call of a loop that calls the workload: the kernels' while the host
# keeps ahead of the GPU, the host's where it cannot (small inputs), a result too.
def gpu_clock() -> float:
    minitorch.cuda.synchronize()
    return time.perf_counter()


def time_case(case: Case, cupy: ModuleType, args: argparse.Namespace) -> Row:
    arrays = case.inputs(np.random.default_rng(0), args.tiny)
    expected = case.workload.numpy_program(*arrays)
    row = Row(
        case, moved=sum(a.nbytes for a in arrays) + expected.nbytes, copied=2 * arrays[0].nbytes
    )
    impls = implementations(case, arrays, cupy)
    row.problem = check(impls, expected, cupy)
    if row.problem is None:
        for run in impls.values():
            run()  # warm up beyond the check's call: cupy's memory pool, the kernel caches
        seconds = median_seconds_per_call(impls, args.rounds, args.min_sample, clock=gpu_clock)
        row.ms = {name: s * 1e3 for name, s in seconds.items()}
    return row


def table_row(row: Row) -> str:
    goal = row.case.goal
    if row.problem:
        cells = ["—"] * (len(COLUMNS) + 4) + ["not timed: see below"]
    else:
        ours = row.ms["minitorch.compile"]
        cells = [fmt_ms(row.ms[column]) for column in COLUMNS]
        cells += [
            f"{row.ms['cupy kernels'] / ours:.2f}",
            f"{row.moved / ours / 1e6:.0f}",
            f"{row.of_copy:.0%}",
            "—" if goal is None else f"≥ {goal:.0%}",
            verdict(None if goal is None else row.of_copy >= goal),
        ]
    return f"| {row.case.title} | " + " | ".join(cells) + " |"


def device_line(cupy: ModuleType) -> str:
    """One line: the GPU and the versions that the times depend on."""
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    runtime = cupy.cuda.runtime.runtimeGetVersion()  # 12040 is CUDA 12.4
    return (
        f"{name} (compute capability {props['major']}.{props['minor']}); cupy "
        f"{cupy.__version__}, CUDA runtime {runtime // 1000}.{runtime % 1000 // 10}"
    )


def no_gpu() -> str | None:
    """Why this machine cannot run the benchmark; None when it can."""
    if minitorch.cuda.is_available():
        return None
    if importlib.util.find_spec("cupy") is None:
        return "cupy is not installed: pip install -e '.[cuda]'"
    return "cupy sees no CUDA GPU"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="small inputs, 3 short rounds")
    args = parser.parse_args(argv)
    args.rounds, args.min_sample = (3, 0.002) if args.tiny else (15, 0.02)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    reason = no_gpu()
    if reason is not None:
        print(
            f"bench_cuda: skipped, no GPU to run on ({reason}; "
            "minitorch.cuda.is_available() is False)"
        )
        return 0
    import cupy

    print(f"Device: {device_line(cupy)}\n")
    print(
        f"ms per call, median of {args.rounds} interleaved rounds, timed between waits for the "
        "GPU; cupy kernels / ours > 1: minitorch.compile is faster"
        + ("\n\nNOTE: --tiny: small inputs, not the sizes the rows name" if args.tiny else "")
        + "\n"
    )
    print(HEADER)
    rows = []
    for case in CASES:
        rows.append(time_case(case, cupy, args))
        print(table_row(rows[-1]), flush=True)
    for row in rows:
        if row.problem:
            print(f"\n{row.case.title}: {row.problem}")
    return 1 if any(row.problem for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
