"""The generated register-blocked matmul (codegen/llvm/matmul.py) against numpy's BLAS.

    python benchmarks/matmul.py [--repeat R] [--dtype float32|float64]
    python benchmarks/matmul.py --direct   # minitorch/blas.py: gemm by ctypes vs np.matmul
    python benchmarks/matmul.py --plans    # the BLAS found, and the plan of a few products

For each size (m, k, n): GFLOP/s (2·m·n·k flops per product) of numpy's `a @ b` (OpenBLAS)
and of the generated kernel, on one thread and on all (config.num_threads; OpenBLAS's own
count). Samples alternate between the four; medians are printed. The first size is the MLP's
first layer (batch 256, 784 -> 256). OpenBLAS's thread count is set through its C API when
numpy ships scipy-openblas (numpy.libs); with another BLAS the one-thread BLAS column is absent.
"""

from __future__ import annotations

import argparse
import ctypes
import pathlib
import statistics
import time

import numpy as np
from timing import seconds_per_call  # benchmarks/timing.py, beside this script

from codegen.llvm.matmul import MatmulKernel, vector_bytes
from minitorch import blas as direct_blas
from minitorch import config

SIZES = [(256, 784, 256), (256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (100, 300, 70)]


def openblas() -> ctypes.CDLL | None:
    """numpy's bundled scipy-openblas, whose thread count we can set; None without it."""
    libs = pathlib.Path(np.__file__).parent.parent / "numpy.libs"
    found = sorted(libs.glob("libscipy_openblas*.so"))
    return ctypes.CDLL(str(found[0])) if found else None


def one_thread(fn, blas: ctypes.CDLL | None = None):
    """fn, run with one thread in our pool (and in OpenBLAS's, if given)."""

    def run():
        threads, config.num_threads = config.num_threads, 1
        blas_threads = blas.scipy_openblas_get_num_threads64_() if blas else 0
        if blas:
            blas.scipy_openblas_set_num_threads64_(1)
        try:
            fn()
        finally:
            config.num_threads = threads
            if blas:
                blas.scipy_openblas_set_num_threads64_(blas_threads)

    return run


def contenders(kernel: MatmulKernel, a: np.ndarray, b: np.ndarray) -> dict:
    """numpy's a @ b and the generated kernel's, each writing into a preallocated output."""
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    blas = openblas()
    fns = {
        "blas": lambda: np.matmul(a, b, out=out),
        "ours": lambda: kernel(a, b, out),
        "ours 1": one_thread(lambda: kernel(a, b, out)),
    }
    if blas is not None:
        fns["blas 1"] = one_thread(lambda: np.matmul(a, b, out=out), blas)
    return fns


def gflops(m: int, k: int, n: int, fns: dict, repeat: int) -> dict[str, float]:
    """GFLOP/s of each of `fns`, from the median of `repeat` interleaved samples."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()  # warm up: compile, fault pages in
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: 2 * m * n * k / statistics.median(t) / 1e9 for name, t in times.items()}


# (a's shape, b's shape, b transposed): the decode step's products, the GPT step's, attention's
DIRECT = [
    ((16, 128), (128, 384), True),
    ((16, 512), (512, 128), True),
    ((64, 64), (64, 64), False),
    ((1024, 128), (128, 384), True),
    ((128, 1024), (1024, 128), False),
    ((64, 64, 32), (64, 32, 64), True),
    ((64, 256, 64), (64, 64, 256), True),
    ((64, 256, 256), (64, 256, 64), False),
]


def direct(repeat: int, dtype: str) -> None:
    """us per product: np.matmul, gemm called by ctypes (direct_blas with every product sent
    to gemm), and direct_blas.matmul as it plans; best of `repeat` interleaved rounds."""
    if direct_blas.library() is None:
        print(f"no BLAS to call: {direct_blas.missing()}")
        return
    print(f"{dtype}, OpenBLAS threads: {direct_blas.library().num_threads()}; us per product")
    print(f"{'a @ b':>32} {'np.matmul':>10} {'ctypes':>10} {'planned':>10}  route")
    rng = np.random.default_rng(0)
    for shape_a, shape_b, transposed in DIRECT:
        a = rng.standard_normal(shape_a).astype(dtype)
        b = rng.standard_normal(shape_b[:-2] + shape_b[-2:][::-1]).astype(dtype)
        b = b.swapaxes(-1, -2) if transposed else b.reshape(shape_b)

        def forced(a=a, b=b):
            saved = direct_blas.DIRECT_GEMM_WORK, direct_blas.Blas.num_threads
            direct_blas.DIRECT_GEMM_WORK, direct_blas.Blas.num_threads = 0, lambda self: 1
            try:
                return direct_blas.matmul(a, b)
            finally:
                direct_blas.DIRECT_GEMM_WORK, direct_blas.Blas.num_threads = saved

        fns = [
            lambda a=a, b=b: np.matmul(a, b),
            forced,
            lambda a=a, b=b: direct_blas.matmul(a, b),
        ]
        times = seconds_per_call(fns, repeat, 0.02)
        name = f"{shape_a} @ {shape_b}{'^T' if transposed else ''}"
        route = direct_blas.product_plan(a, b).route
        print(f"{name:>32} " + " ".join(f"{t * 1e6:10.1f}" for t in times) + f"  {route}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--direct", action="store_true", help="gemm by ctypes vs np.matmul")
    parser.add_argument("--plans", action="store_true", help="the BLAS found, and plans")
    args = parser.parse_args()
    if args.plans:
        direct_blas.main()
        return
    if args.direct:
        direct(min(args.repeat, 7), args.dtype)
        return
    kernel = MatmulKernel(np.dtype(args.dtype))
    print(
        f"{args.dtype}, {vector_bytes() * 8}-bit vectors, tiles of 6 x {kernel.columns}, "
        f"{config.num_threads} threads; GFLOP/s, higher is better"
    )
    print(
        f"{'m x k x n':>18} {'BLAS, 1 thread':>15} {'ours, 1 thread':>15} "
        f"{'BLAS, all':>10} {'ours, all':>10} {'ours / BLAS, all':>17}"
    )
    rng = np.random.default_rng(0)
    for m, k, n in SIZES:
        a = rng.standard_normal((m, k)).astype(args.dtype)
        b = rng.standard_normal((k, n)).astype(args.dtype)
        rate = gflops(m, k, n, contenders(kernel, a, b), args.repeat)
        print(
            f"{f'{m} x {k} x {n}':>18} {rate.get('blas 1', float('nan')):15.1f} "
            f"{rate['ours 1']:15.1f} {rate['blas']:10.1f} {rate['ours']:10.1f} "
            f"{rate['ours'] / rate['blas']:17.2f}"
        )


if __name__ == "__main__":
    main()
