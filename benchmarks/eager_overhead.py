"""Per-op time of minitorch eager vs numpy, on 16 elements and on 1,000,000, in one run.

    python benchmarks/eager_overhead.py [--sizes 16 1000000] [--repeat 7] [--requires-grad]

On 16 elements numpy's kernel takes well under a microsecond, so the time is almost all Python:
for minitorch that is the dispatcher (shape/dtype rule, wrapping the result in a Tensor, the
autograd check), and the ratio measures its overhead; the project's target is within 5x of
numpy. On 1e6 elements both run the same numpy kernel and the ratio should be close to 1,
except for views (reshape, view, transpose), which copy nothing and so cost the same at any size.
With --requires-grad the inputs require grad, so each op also records a backward node.

Each time is the best of --repeat runs of a loop long enough (--min-time, 0.1 s) to trust the clock,
per call, as `timeit` reports it: the best run is the one least disturbed by the machine.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np
from timing import seconds_per_call  # benchmarks/timing.py, beside this script

import minitorch as torch

VIEWS = {"reshape", "view", "transpose"}  # no data moves: the same cost at every size


def square_shape(n: int) -> tuple[int, int]:
    """The most square (rows, cols) with rows * cols == n: 16 -> (4, 4), 1e6 -> (1000, 1000)."""
    rows = math.isqrt(n)
    while n % rows:
        rows -= 1
    return rows, n // rows


def cases(n: int, requires_grad: bool) -> list[tuple[str, Callable, Callable]]:
    """(name, minitorch call, numpy call) for each op that minitorch has today."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    x = torch.tensor(a, requires_grad=requires_grad)
    y = torch.tensor(b, requires_grad=requires_grad)
    rows, cols = square_shape(n)
    a2, x2 = a.reshape(rows, cols), x.reshape(rows, cols)  # (rows, cols)
    b2, y2 = b.reshape(cols, rows), y.reshape(cols, rows)  # (cols, rows), for matmul

    table = [
        ("x + y", lambda: x + y, lambda: a + b),
        ("x * y", lambda: x * y, lambda: a * b),
        ("x * 2.0", lambda: x * 2.0, lambda: a * 2.0),
        ("sin", lambda: torch.sin(x), lambda: np.sin(a)),
        ("exp", lambda: torch.exp(x), lambda: np.exp(a)),
        ("sum", lambda: torch.sum(x), lambda: np.sum(a)),
        ("sum(dim=0)", lambda: torch.sum(x2, dim=0), lambda: np.sum(a2, axis=0)),
        ("reshape", lambda: x.reshape(cols, rows), lambda: a.reshape(cols, rows)),
    ]
    # Ops other engineers are adding now: measured once they exist.
    if hasattr(torch, "relu"):
        table.append(("relu", lambda: torch.relu(x), lambda: np.maximum(a, 0)))
    if hasattr(torch, "maximum"):
        table.append(("maximum", lambda: torch.maximum(x, y), lambda: np.maximum(a, b)))
    if hasattr(torch.Tensor, "view"):
        table.append(("view", lambda: x.view(cols, rows), lambda: a.reshape(cols, rows)))
    if hasattr(torch.Tensor, "transpose"):
        table.append(("transpose", lambda: x2.transpose(0, 1), lambda: a2.T))
    if hasattr(torch, "matmul"):
        table.append(("matmul", lambda: torch.matmul(x2, y2), lambda: a2 @ b2))
    return table


def geomean(ratios) -> float:
    ratios = list(ratios)
    return math.exp(sum(map(math.log, ratios)) / len(ratios))


def format_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.2f} us"
    return f"{seconds * 1e3:8.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 1_000_000])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.1, help="seconds per timed loop")
    parser.add_argument("--requires-grad", action="store_true")
    args = parser.parse_args()

    print(
        f"minitorch eager vs numpy, float32, best of {args.repeat}, "
        f"requires_grad={args.requires_grad}"
    )
    print(f"{'op':<12} {'elements':>9} {'numpy':>11} {'minitorch':>11} {'ratio':>8}")
    for n in args.sizes:
        ratios = {}
        for name, eager, reference in cases(n, args.requires_grad):
            t_numpy, t_eager = seconds_per_call([reference, eager], args.repeat, args.min_time)
            ratios[name] = t_eager / t_numpy
            print(
                f"{name:<12} {n:>9,} {format_time(t_numpy)} {format_time(t_eager)} "
                f"{ratios[name]:7.1f}x",
                flush=True,
            )
        kernels = [r for name, r in ratios.items() if name not in VIEWS]
        print(
            f"{'geomean':<12} {n:>9,} {'':>11} {'':>11} {geomean(ratios.values()):7.1f}x"
            f"   (kernels only {geomean(kernels):.1f}x, worst {max(ratios.values()):.1f}x;"
            " target for small ops: <= 5x)\n"
        )


if __name__ == "__main__":
    main()
