"""sin(x)**2 + cos(x)**2 on 10,000,000 float32: numpy vs minitorch eager vs compiled, in one run.

    python benchmarks/sincos.py [--n N] [--repeat R]

Prints the median time of each and the ratios. The compiled path is one fused LLVM kernel
(polynomial sin/cos, vectorized, split over the CPU's cores); numpy and eager make five passes
over memory and call libm.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import minitorch as torch


def f(x):
    return torch.sin(x) ** 2 + torch.cos(x) ** 2


def f_numpy(a: np.ndarray) -> np.ndarray:
    return np.sin(a) ** 2 + np.cos(a) ** 2


def median_seconds(fn, repeat: int) -> float:
    fn()  # warm up: compile, allocate, fault pages in
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()

    torch.manual_seed(0)
    x = torch.rand(args.n) * 200 - 100  # |x| <= 100
    a = x.numpy()
    compiled = torch.compile(f)
    np.testing.assert_allclose(compiled(x).numpy(), f_numpy(a), rtol=1e-5, atol=1e-5)

    t_numpy = median_seconds(lambda: f_numpy(a), args.repeat)
    t_eager = median_seconds(lambda: f(x), args.repeat)
    t_compiled = median_seconds(lambda: compiled(x), args.repeat)

    print(f"sin(x)**2 + cos(x)**2, {args.n:,} float32, median of {args.repeat}")
    print(f"  numpy              {t_numpy * 1e3:8.2f} ms")
    print(f"  minitorch eager    {t_eager * 1e3:8.2f} ms")
    print(f"  minitorch compiled {t_compiled * 1e3:8.2f} ms")
    print(f"  compiled vs numpy: {t_numpy / t_compiled:5.1f}x faster")
    print(f"  compiled vs eager: {t_eager / t_compiled:5.1f}x faster")
    print(f"  eager vs numpy:    {t_numpy / t_eager:5.2f}x (eager overhead)")


if __name__ == "__main__":
    main()
