"""What each partitioner saves for the backward, and what a training step costs with it.

    python benchmarks/partitioners.py [--rounds 15] [--tiny]

AOT autograd splits the joint graph into a forward and a backward; the partitioner chooses
which forward values cross between them (tracer/aot/partition.py). "default" saves every
forward value the backward reads; "min_cut" ([Note: min-cut partitioning] in
tracer/aot/min_cut.py) saves the fewest bytes, recomputing cheap pointwise ops in the
backward. For sincos and gelu on 1e7 elements (`f(x).sum()`) and the MLP step of
benchmarks/workloads.py, this prints the values and bytes each saves (as the walkthrough
states them) and the median time of a forward+backward step, the two partitioners' steps
interleaved in rounds.
"""

from __future__ import annotations

import argparse
import re
import textwrap

import numpy as np
from timing import median_seconds_per_call  # benchmarks/timing.py, beside this script

import minitorch as torch
from minitorch import _logging, config

PARTITIONERS = ("default", "min_cut")

# Each workload as source, compiled once per partitioner: two functions with one code object
# would share capture's cache entry, compiled under the first partitioner.
SOURCES = {
    "sincos 1e7": """
        def step(x):
            return (torch.sin(x) ** 2 + torch.cos(x) ** 2).sum()
    """,
    "gelu (tanh form) 1e7": """
        def step(x):
            return torch.nn.functional.gelu(x, approximate="tanh").sum()
    """,
    "MLP 784-256-256-10, batch 256": """
        def step(x, y, w1, b1, w2, b2, w3, b3):
            h = torch.relu(x @ w1.t() + b1)
            h = torch.relu(h @ w2.t() + b2)
            return torch.nn.functional.cross_entropy(h @ w3.t() + b3, y)
    """,
}


def inputs(name: str, tiny: bool) -> list[torch.Tensor]:
    rng = np.random.default_rng(0)
    if not name.startswith("MLP"):
        x = rng.standard_normal(1000 if tiny else 10_000_000).astype(np.float32)
        return [torch.tensor(x, requires_grad=True)]
    widths, batch = ((12, 8, 8, 4), 6) if tiny else ((784, 256, 256, 10), 256)
    tensors = [
        torch.tensor(rng.standard_normal((batch, widths[0])).astype(np.float32)),
        torch.tensor(rng.integers(0, widths[-1], batch)),
    ]
    for fan_in, fan_out in zip(widths, widths[1:]):
        bound = 1 / np.sqrt(fan_in)
        tensors += [
            torch.tensor(rng.uniform(-bound, bound, shape).astype(np.float32), requires_grad=True)
            for shape in ((fan_out, fan_in), (fan_out,))
        ]
    return tensors


def compiled_step(name: str, partitioner: str, args: list[torch.Tensor]) -> tuple:
    """(a forward+backward step compiled with `partitioner`, what its forward saves)."""
    namespace = {"torch": torch}
    exec(textwrap.dedent(SOURCES[name]), namespace)  # noqa: S102 - our own source, above
    compiled = torch.compile(namespace["step"])

    def step():
        for t in args:
            t.grad = None
        compiled(*args).backward()

    config.partitioner, before = partitioner, config.partitioner
    try:
        with _logging.Recorder() as recorder:  # the first call compiles, and states the saving
            step()
    finally:
        config.partitioner = before
    titles = [a.title for a in recorder.artifacts if a.stage == "forward"]
    found = re.search(r"(\d+) saved for backward, ([\d,]+) bytes", titles[0])
    return step, f"{int(found[2].replace(',', '')):,} B ({found[1]})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--tiny", action="store_true", help="small inputs, for the tests")
    args = parser.parse_args()
    print("| workload | saved, default | saved, min_cut | step, default | step, min_cut |")
    print("|---|--:|--:|--:|--:|")
    for name in SOURCES:
        tensors = inputs(name, args.tiny)
        steps, saved = {}, {}
        for partitioner in PARTITIONERS:
            steps[partitioner], saved[partitioner] = compiled_step(name, partitioner, tensors)
        seconds = median_seconds_per_call(steps, args.rounds, 0.002 if args.tiny else 0.02)
        times = [f"{seconds[p] * 1e3:.3g} ms" for p in PARTITIONERS]
        print(f"| {name} | {saved['default']} | {saved['min_cut']} | {' | '.join(times)} |")
    print(
        f"\nmedian of {args.rounds} interleaved rounds; B: bytes saved for the backward "
        "(values saved)"
    )


if __name__ == "__main__":
    main()
