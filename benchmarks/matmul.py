"""The generated register-blocked matmul (codegen/llvm/matmul.py) against numpy's BLAS.

    python benchmarks/matmul.py [--repeat R] [--dtype float32|float64]

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

from codegen.llvm.matmul import MatmulKernel, vector_bytes
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = parser.parse_args()
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
