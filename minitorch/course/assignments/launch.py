"""Assignment 6, `launch`: a GPU launch plan, a warp per row (chapter 8, docs/08-gpu.md).

    python -m minitorch.course grade launch --plugin my_warps.py

The student registers a launch plan (`register_launch_plan` in codegen/cuda/launch.py) whose
warps each take a row of a row reduction: the lanes share the row's elements and combine by
the warp's shuffle butterfly alone, several rows to a block. There is no GPU here: the
kernels run on the grid emulation (the `cuda_emulator` backend) and their PTX goes through
NVIDIA's assembler. Each plan the plugins registered (and turned on) is graded alone, with the
tree's thread per row and block per row behind it for the kernels it leaves:

    takes the short rows   it takes the row reductions of rows of at most 64 elements
    equal on the emulator  every workload (row sums, max and argmax, softmax, layernorm; short
                           and long rows, rows not a multiple of the warp, one row, zero rows,
                           rows known only at run time, more rows than the grid, column sums)
                           computes what the reference interpreter (ir/interpreter.py) does
    a warp per row         in each kernel it takes, a warp takes whole rows: the grid has
                           ceil(rows / warps per block) blocks (up to MAX_GRID), the PTX has
                           no shared memory and no barrier, and its butterfly spans the warp
    on the GPU's indices   the GPU kernel's own index code (DeviceGrid's), probed on the CPU
                           thread by thread (codegen/cuda/probe.py): each row is run by the
                           32 lanes of one warp, each element walked once, the value stored
                           once, by that warp
    ptxas                  ptxas accepts the PTX of each kernel it takes (no marks without
                           ptxas: the part says so)

Sums here add small integers, exact in any order, so they equal the interpreter's exactly;
softmax and layernorm are held to float rounding (a GPU adds in its own order).
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from codegen.cuda import launch, ptxas
from codegen.cuda.emulate import CudaEmulatorBackend
from codegen.cuda.grid import WARP
from codegen.cuda.probe import probe
from ir.interpreter import disagreements, run_kernel
from ir.nodes import LoweredProgram
from ir.scheduler import FusedKernel, schedule
from minitorch.course.assignments.launch_workloads import BY_NAME, WORKLOADS, Workload, column_sums
from minitorch.course.grading import REGISTRIES, Assignment, Case, CaseFailed, Part, Submission

REGISTRY = "launch_plans"
REGISTRIES[REGISTRY] = lambda: [plan.name for plan in launch.launch_plans()]
TREE = (launch.THREAD_PER_ROW, launch.BLOCK_PER_ROW)  # behind every plan graded
SHORT = 64  # a warp-per-row plan must take row reductions of rows this short


# ---- running one workload with one plan ------------------------------------------------------


@dataclass
class Ran:
    """A workload compiled with a plan: each kernel, its compiled form, and whether the plan
    took it; `error` if compiling failed."""

    kernels: list[tuple[FusedKernel, object, bool]]
    error: Exception | None = None


_RAN: dict[tuple[str, str], Ran] = {}  # (plan, workload) -> what compiling gave


@contextlib.contextmanager
def graded_alone(plan: str, max_grid: int | None = None) -> Iterator[None]:
    """Only `plan` and the tree's TREE plans active (and MAX_GRID lowered), for a while."""
    was = [p.name for p in launch.launch_plans()]
    old_grid = launch.MAX_GRID
    for name in was:
        launch.activate_launch_plan(name, False)
    for name in (*TREE, plan):
        launch.activate_launch_plan(name)
    launch.MAX_GRID = max_grid or old_grid
    try:
        yield
    finally:
        launch.MAX_GRID = old_grid
        for p in launch.launch_plans(active_only=False):
            launch.activate_launch_plan(p.name, p.name in was)


def compiled(plan: str, workload: Workload) -> Ran:
    """`workload`'s kernels compiled for the grid emulation with `plan` (kept)."""
    key = (plan, workload.name)
    if key not in _RAN:
        program = workload.program()
        sizes = ("s0",) if workload.runs else ()
        (registered,) = [p for p in launch.launch_plans(active_only=False) if p.name == plan]
        kernels = []
        try:
            with graded_alone(plan, workload.max_grid):
                for kernel in schedule(program):
                    # asked first (the last registered), `plan` launches every kernel it takes
                    one = CudaEmulatorBackend().compile_kernel(kernel, program.dtypes(), sizes)
                    kernels.append((kernel, one, registered.choose(kernel, sizes) is not None))
            _RAN[key] = Ran(kernels)
        except Exception as error:  # noqa: BLE001 - the student's error is the verdict
            _RAN[key] = Ran(kernels, error)
    return _RAN[key]


def _kernels(plan: str, workload: Workload) -> list[tuple[FusedKernel, object, bool]]:
    ran = compiled(plan, workload)
    if ran.error is not None:
        raise CaseFailed(
            f"{workload.name} ({workload.describe()}) does not compile with {plan!r}: "
            f"{type(ran.error).__name__}: {ran.error}",
            _reproducer(plan, workload),
        )
    return ran.kernels


def _runs(workload: Workload) -> list[int | None]:
    return list(workload.runs) if workload.runs else [None]


def _sizes(workload: Workload, rows: int | None) -> dict[str, int]:
    return {"s0": rows} if rows is not None else {}


def _reproducer(plan: str, workload: Workload) -> str:
    return (
        "from minitorch.course.grading import load_plugins\n"
        "from minitorch.course.assignments.launch import show\n"
        "load_plugins([PLUGIN])  # your plugin, as given to --plugin\n"
        f"show({plan!r}, {workload.name!r})"
    )


# ---- the checks ------------------------------------------------------------------------------


def check_takes(plan: str, workload: Workload) -> None:
    """`plan` takes the kernels of `workload` that reduce along rows (block per row's)."""
    for kernel, kernel_compiled, mine in _kernels(plan, workload):
        if kernel_compiled.plan.strategy == launch.BLOCK_PER_ROW and not mine:
            raise CaseFailed(
                f"{plan!r} leaves {kernel.name} of {workload.name} ({workload.describe()}) to "
                f"block per row: a warp per row should take row reductions whose rows are "
                f"known and at most {SHORT} long (here {math.prod(kernel.reduction_ranges)})",
                _reproducer(plan, workload),
            )


def check_values(plan: str, workload: Workload) -> None:
    """Every output of `workload`, emulated, is the interpreter's."""
    kernels = _kernels(plan, workload)
    with graded_alone(plan, workload.max_grid):
        for rows in _runs(workload):
            program = workload.program(rows)
            array = workload.array(rows)
            want = _interpret(program, array)
            got = _emulate(kernels, program, array, _sizes(workload, rows), want)
            for name in program.outputs:
                _compare(plan, workload, name, got[name], want[name], kernels, rows)


def _interpret(program: LoweredProgram, array: np.ndarray) -> dict[str, np.ndarray]:
    memory = {"x": array}
    for kernel in schedule(program):
        for name in kernel.writes:
            memory[name] = _empty(program, name)
        with np.errstate(all="ignore"):
            run_kernel(kernel, memory)
    return memory


def _emulate(kernels, program, array, sizes, want) -> dict[str, np.ndarray]:
    """The compiled kernels run on `array`; each output starts poisoned (unlike the answer)."""
    memory = {"x": array}
    for kernel, _, _ in kernels:
        for name in kernel.writes:
            empty = _empty(program, name)
            memory[name] = np.where(want[name] == 7, 9, 7).astype(empty.dtype).reshape(empty.shape)
    with np.errstate(all="ignore"):
        for _, kernel_compiled, _ in kernels:
            kernel_compiled(memory, sizes)
    return memory


def _empty(program: LoweredProgram, name: str) -> np.ndarray:
    (buffer,) = [b for b in program.buffers if b.name == name]
    return np.empty(tuple(buffer.layout.size), buffer.layout.dtype.np)


def _compare(plan, workload, name, got, want, kernels, rows) -> None:
    if workload.exact:
        wrong = disagreements(got, want)
    else:
        tolerance = 1e-5 if want.dtype == np.float32 else 1e-12
        with np.errstate(invalid="ignore"):
            wrong = ~np.isclose(got, want, rtol=tolerance, atol=tolerance, equal_nan=True)
    if not wrong.any():
        return
    at = tuple(int(k) for k in np.argwhere(wrong)[0])
    launches = "; ".join(
        f"{k.name}: {c.plan} grid {c.plan.grid(_sizes(workload, rows))}" for k, c, _ in kernels
    )
    at_rows = f" (s0 = {rows})" if rows is not None else ""
    raise CaseFailed(
        f"{workload.name} ({workload.describe()}){at_rows}: {name} differs from the "
        f"interpreter at {int(wrong.sum())} of {wrong.size} elements, first at {list(at)}: "
        f"got {got[at]!r}, expected {want[at]!r}\n  launched as {launches}",
        _reproducer(plan, workload),
    )


_SHUFFLE = re.compile(r"shfl\.sync\.bfly\.b32\s+[^,]+,\s*[^,]+,\s*(\d+),")


def check_warps(plan: str, workload: Workload) -> None:
    """In each kernel `plan` takes: a grid of a warp per row, no shared memory, no barrier,
    a butterfly over all 32 lanes."""
    for kernel, kernel_compiled, mine in _kernels(plan, workload):
        if not mine:
            continue
        launched = kernel_compiled.plan
        where = f"{kernel.name} of {workload.name} ({workload.describe()}), {launched}"
        warps = launched.block_dim // WARP
        for rows in _runs(workload):
            with graded_alone(plan, workload.max_grid):
                grid = launched.grid(_sizes(workload, rows))
                count = launched.row_count(_sizes(workload, rows))
                want = min(max(-(-count // warps), 1), launch.MAX_GRID)
            if grid != (want, 1, 1):
                raise CaseFailed(
                    f"{where}: a grid of {grid} blocks of {warps} warps for {count} rows: a warp "
                    f"per row needs ceil({count} / {warps}) = {-(-count // warps)} blocks "
                    f"(at least 1, at most MAX_GRID = {launch.MAX_GRID}), not {grid[0]}",
                    _reproducer(plan, workload),
                )
        ptx = kernel_compiled.ptx
        for found, problem in ((".shared", "shared memory"), ("bar.sync", "a barrier")):
            if found in ptx:
                raise CaseFailed(
                    f"{where}: its PTX has {problem} ({found}): a warp's combine is its "
                    "shuffles alone",
                    _reproducer(plan, workload),
                )
        distances = {int(d) for d in _SHUFFLE.findall(ptx)}
        if workload.shape[0] == 0 and not workload.runs:
            continue  # no rows: the optimizer drops the whole body
        if not distances:
            raise CaseFailed(
                f"{where}: no shfl.sync.bfly in its PTX: the lanes of a warp never combine",
                _reproducer(plan, workload),
            )
        missing = sorted({16, 8, 4, 2, 1} - distances, reverse=True)
        if missing:
            raise CaseFailed(
                f"{where}: its butterfly shuffles across {sorted(distances, reverse=True)} "
                f"lanes, never {missing}: part of the warp is never combined (a warp's "
                "butterfly is 16, 8, 4, 2, 1)",
                _reproducer(plan, workload),
            )


def check_device(plan: str, workload: Workload) -> None:
    """In each kernel `plan` takes, the GPU's threads (probed): a warp per row."""
    for kernel, _, mine in _kernels(plan, workload):
        if not mine:
            continue
        for rows in _runs(workload):
            with graded_alone(plan, workload.max_grid):
                seen = probe(kernel, _sizes(workload, rows))
            problem = _warp_per_row_problem(seen)
            if problem:
                at_rows = f" (s0 = {rows})" if rows is not None else ""
                raise CaseFailed(
                    f"{kernel.name} of {workload.name} ({workload.describe()}){at_rows}, "
                    f"{seen.plan}, grid {seen.grid}: on the GPU, {problem}",
                    _reproducer(plan, workload),
                )


def _warp_per_row_problem(seen) -> str:
    """What keeps a probed launch from being a warp per row, in words; "" if nothing."""
    checks = [
        (seen.visits != WARP, "is run by {} threads: a warp per row is the 32 lanes of one warp",
         seen.visits),
        (~seen.one_warp(), "is run by threads of more than one warp", None),
        (seen.lanes != (1 << WARP) - 1, "is run by lanes {:#x} (as bits): all 32 should",
         seen.lanes),
        ((seen.elements != 1).any(axis=1), "has elements its lanes walk {} times (once each)",
         seen.elements.max(axis=1) if seen.elements.size else None),
        (seen.stores != 1, "has its value stored {} times (once, by a lane of its warp)",
         seen.stores),
        (seen.store_warps * WARP != seen.warp_sum, "has its value stored by another warp", None),
    ]  # fmt: skip
    for wrong, words, values in checks:
        if wrong.any():
            row = int(np.argmax(wrong))
            return f"row {row} " + words.format(values[row] if values is not None else "")
    return ""


def check_ptxas(plan: str, workload: Workload) -> None:
    """ptxas accepts the PTX of each kernel `plan` takes."""
    if ptxas.find_ptxas() is None:
        raise CaseFailed(
            "ptxas is not installed (looked on PATH, /usr/local/cuda/bin and /usr/local/bin): "
            "this part gives no marks without it; install the CUDA toolkit's ptxas"
        )
    for kernel, kernel_compiled, mine in _kernels(plan, workload):
        if mine:
            try:
                ptxas.assemble(kernel_compiled.ptx)
            except Exception as error:
                raise CaseFailed(
                    f"{kernel.name} of {workload.name}: {error}", _reproducer(plan, workload)
                ) from None


def show(plan: str, workload: str) -> None:
    """Print what the grader sees of `plan` on `workload`, then run its checks."""
    chosen = BY_NAME[workload]
    for kernel, kernel_compiled, mine in _kernels(plan, chosen):
        who = f"taken by {plan!r}" if mine else "left to the tree"
        for rows in _runs(chosen):
            grid = kernel_compiled.plan.grid(_sizes(chosen, rows))
            print(f"{kernel.name}, {who}: {kernel_compiled.plan}, grid {grid}")
        print(kernel)
    for check in (check_takes, check_values, check_warps, check_device, check_ptxas):
        try:
            check(plan, chosen)
        except CaseFailed as failure:
            print(f"{check.__name__}: {failure}")
        else:
            print(f"{check.__name__}: ok")


# ---- the parts -------------------------------------------------------------------------------


def _plans(submission: Submission) -> list[str]:
    plans = submission.names(REGISTRY)
    if not plans:
        raise CaseFailed(
            "no launch plan was registered (and active): pass --plugin FILE, a file that calls "
            "codegen.cuda.launch.register_launch_plan; start from minitorch/course/starters/"
            "launch.py"
        )
    return plans


def _cases(check: Callable[[str, Workload], None], workloads: Sequence[Workload]):
    def cases(submission: Submission) -> Iterator[Case]:
        for plan in _plans(submission):
            for workload in workloads:
                yield Case(
                    f"{plan} on {workload.name}",
                    lambda plan=plan, workload=workload: check(plan, workload),
                    _reproducer(plan, workload),
                )

    return cases


# the workloads whose row reductions a warp per row must take: short rows, at least one
_SHORT = [
    w
    for w in WORKLOADS
    if w.build is not column_sums and w.shape[1] <= SHORT and (w.shape[0] or w.runs)
]

ASSIGNMENT = Assignment(
    name="launch",
    title="A GPU launch plan: a warp per row",
    chapter="08-gpu",
    hook="codegen.cuda.launch.register_launch_plan(name, choose, blocks=..., emit=...)",
    starter="minitorch/course/starters/launch.py",
    reference="minitorch.course.reference.launch",
    minutes=90,
    parts=[
        Part("takes the row reductions of short rows", 10, _cases(check_takes, _SHORT)),
        Part("equal to the interpreter on the emulator", 35, _cases(check_values, WORKLOADS)),
        Part("a warp per row: grid, no shared memory", 25, _cases(check_warps, WORKLOADS)),
        Part("a warp per row on the GPU's indices", 15, _cases(check_device, WORKLOADS)),
        Part("ptxas accepts the PTX", 15, _cases(check_ptxas, WORKLOADS)),
    ],
)
