"""How long the first call of a compiled workload takes beyond a steady call, in this process.

    python benchmarks/first_call.py WORKLOAD {minitorch,torch} [--tiny]

Prints one number, in seconds: the first call of the compiled workload minus its fastest later
call, i.e. what compiling costs (capture, lowering, code generation, loading), without the run
itself, which a 4096x4096 softmax would otherwise add. The time starts once the inputs are made
and `compile(f)` has returned (with the imports it makes), at the user's first call. Each later
call starts with minitorch's caching allocator emptied, so that it writes fresh memory from
the OS, as the first call does (and as every call of torch's does): the first touch of a
40 MB output costs ~5 to 9 ms of page faults here, a cost of running, not of compiling.
benchmarks/bench.py runs this script in fresh processes ([Note: cold and warm compiles] there);
it imports nothing of the other library.

`--imported` (minitorch only) loads the modules of the whole pipeline before the clock starts,
so the number is the first call's work alone; without it, the modules the first call imports
lazily (the code generator, the JIT) are counted, as a user's first call pays them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import time

import numpy as np
from workloads import WORKLOADS  # benchmarks/workloads.py, beside this script


def first_call_seconds(name: str, library: str, tiny: bool, imported: bool = False) -> float:
    torch = importlib.import_module(library)
    if library == "torch":
        torch.set_num_threads(os.cpu_count() or 1)  # as bench.py times it
    if imported:
        load_compiler()
    workload = next(w for w in WORKLOADS if w.name == name)
    run, _ = workload.implementation(torch, True, workload.inputs(np.random.default_rng(0), tiny))
    start = time.perf_counter()
    run()
    first = time.perf_counter() - start
    steady = []
    for _ in range(3):
        if library == "minitorch":
            # The memory a steady call writes must be as new as the first call's: torch's
            # large outputs come fresh from the OS on every call, page faults and all, and
            # ours would come from the caching allocator's pool, which the first call filled.
            importlib.import_module("codegen.allocator").empty_cache()
        start = time.perf_counter()
        run()
        steady.append(time.perf_counter() - start)
    return first - min(steady)


def load_compiler() -> None:
    """Import every stage a compiled call runs, and the default code generator with its JIT."""
    importlib.import_module("minitorch.compile.inductor")
    importlib.import_module("codegen.registry").default_backend("cpu")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=[w.name for w in WORKLOADS])
    parser.add_argument("library", choices=["minitorch", "torch"])
    parser.add_argument("--tiny", action="store_true", help="small inputs, for the tests")
    parser.add_argument(
        "--imported",
        action="store_true",
        help="load the compiler's modules before the clock starts (minitorch)",
    )
    args = parser.parse_args()
    if args.imported and args.library != "minitorch":
        parser.error("--imported loads minitorch's compiler")
    seconds = first_call_seconds(args.workload, args.library, args.tiny, args.imported)
    print(f"{seconds:.6f}")


if __name__ == "__main__":
    main()
