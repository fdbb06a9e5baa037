"""The LLVM backend's kernels alone (no tracing, no allocation) against numpy.

    python benchmarks/llvm_math.py [--n N] [--repeat R]

For each kernel: numpy, the compiled kernel on one thread, and on the thread pool
(codegen/llvm/parallel.py). Inputs are float32 unless the name says otherwise.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import minitorch.dtype as dt
from codegen.llvm import parallel
from codegen.llvm.backend import LLVMBackend
from ir.memory import allocate
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import ops
from ir.scheduler import schedule


def sincos(x):
    return ops.add(ops.pow(ops.sin(x), 2), ops.pow(ops.cos(x), 2))


# name -> (loop body over one loaded element, numpy equivalent, dtype)
POINTWISE = {
    "sin(x)**2 + cos(x)**2": (sincos, lambda a: np.sin(a) ** 2 + np.cos(a) ** 2, dt.float32),
    "sin(x)": (ops.sin, np.sin, dt.float32),
    "exp(x)": (ops.exp, np.exp, dt.float32),
    "log(x)": (ops.log, np.log, dt.float32),
    "sin(x) float64": (ops.sin, np.sin, dt.float64),
    "exp(x) float64": (ops.exp, np.exp, dt.float64),
    "log(x) float64": (ops.log, np.log, dt.float64),
}


def pointwise_program(body, dtype, n: int) -> LoweredProgram:
    x = InputBuffer("x", Layout.contiguous((n,), dtype))
    data = Pointwise(dtype, (n,), lambda index: body(ops.load("x", index[0])))
    out = ComputedBuffer("buf0", Layout.contiguous((n,), dtype), data)
    return LoweredProgram((x,), (out,), ("buf0",))


def sum_program(dtype, n: int) -> LoweredProgram:
    x = InputBuffer("x", Layout.contiguous((n,), dtype))
    data = Reduction(dtype, (), (n,), "sum", lambda index, rindex: ops.load("x", rindex[0]))
    return LoweredProgram(
        (x,), (ComputedBuffer("buf0", Layout.contiguous((), dtype), data),), ("buf0",)
    )


def median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def measure(name: str, program: LoweredProgram, x: np.ndarray, numpy_fn, repeat: int) -> None:
    (kernel,) = schedule(program)
    compiled = LLVMBackend().compile_kernel(kernel, program.dtypes())
    memory = {"x": x, **allocate(program, kernel.writes)}
    threads = parallel.NUM_THREADS
    parallel.NUM_THREADS = 1
    one = median_ms(lambda: compiled(memory), repeat)
    parallel.NUM_THREADS = threads
    pool = median_ms(lambda: compiled(memory), repeat)
    reference = median_ms(lambda: numpy_fn(x), repeat)
    print(
        f"  {name:24s} numpy {reference:7.2f} ms   1 thread {one:6.2f} ms ({reference / one:4.1f}x)"
        f"   {threads} threads {pool:6.2f} ms ({reference / pool:4.1f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{args.n:,} elements, median of {args.repeat}")
    for name, (body, numpy_fn, dtype) in POINTWISE.items():
        low = 0.0 if "log" in name else -100.0
        x = rng.uniform(low, 100.0, args.n).astype(dtype.np)
        measure(name, pointwise_program(body, dtype, args.n), x, numpy_fn, args.repeat)
    x = rng.uniform(-1, 1, args.n).astype(np.float32)
    measure("sum(x)", sum_program(dt.float32, args.n), x, np.sum, args.repeat)


if __name__ == "__main__":
    main()
