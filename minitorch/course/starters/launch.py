"""Assignment 6, `launch`: a launch plan for the GPU where each warp takes a row, from this
file alone. Copy it anywhere (my_warps.py), fill in each TODO, and grade it:

    python -m minitorch.course grade launch --plugin my_warps.py

Read first: docs/08-gpu.md ("Reductions: a block per row"); [Note: threads, blocks and
phases] in codegen/cuda/__init__.py; codegen/cuda/launch.py ([Note: launch plans as hooks]);
codegen/cuda/rows.py (how block per row spreads its rows: `block_per_row`, `BlockRow`);
codegen/cuda/grid.py (`DeviceGrid` for the GPU, `EmulatedGrid` for the emulation).

Block per row gives a row a whole block: rows of 40 elements keep 40 of 256 threads busy, and
each combine goes through shared memory and two barriers. Here a warp's 32 lanes share a row
and a block of W warps takes W rows: warp w of block b takes rows b * W + w, b * W + w + G * W,
... (G blocks), lane l takes elements l, l + 32, ... of the row, and the combine is the warp's
shuffle butterfly (16, 8, 4, 2, 1) alone: no shared memory, no barrier.

The hook takes three functions:

    choose(kernel, sizes) -> LaunchPlan | None   which kernels: yours, or None (the tree's)
    blocks(plan, rows) -> int                    the blocks for `rows` rows
    emit(rows: Rows) -> None                     the code: spread the rows over rows.grid

The grader runs every kernel you take on the grid emulation (the cuda_emulator backend) and
compares it with the reference interpreter; checks the grid (a warp per row), that the PTX has
no `.shared` and no `bar.sync` and that its butterfly spans the warp; and runs ptxas on it.
The emulation runs your EmulatedGrid code; your DeviceGrid code runs on no GPU here: its
index code is probed thread by thread on the CPU (codegen/cuda/probe.py: which threads run
each row, walk each element, store each value) and its combine is read from the PTX. Write
the two alike: the same rows for each warp, the same lane storing a row's value.
"""

from __future__ import annotations

from codegen.cuda.grid import WARP, DeviceGrid, EmulatedGrid  # noqa: F401 - you will need these
from codegen.cuda.launch import LaunchPlan, register_launch_plan
from codegen.cuda.rows import BlockRow, Rows  # noqa: F401
from ir.scheduler import FusedKernel, walks_across_outputs  # noqa: F401

NAME = "my_warp_per_row"


def choose(kernel: FusedKernel, sizes: tuple[str, ...]) -> LaunchPlan | None:
    """A LaunchPlan(NAME, block_dim, kernel.ranges) for a kernel that reduces along rows of at
    most a few hundred elements known now (kernel.reduction_ranges all ints); None for the
    others: no reduction, a column sum (walks_across_outputs), rows of unknown length."""
    raise NotImplementedError(
        "TODO choose: which kernels take a warp per row, and how many warps per block"
    )


def blocks(plan: LaunchPlan, rows: int) -> int:
    """The blocks `rows` rows need: one warp per row, plan.block_dim // WARP warps a block."""
    raise NotImplementedError("TODO blocks: the grid for `rows` rows")


def emit(rows: Rows) -> None:
    """Spread the rows over the warps of rows.grid, as block per row spreads them over blocks
    (codegen/cuda/rows.py's `block_per_row`): a loop over this warp's rows (`rows.loop`), each
    row emitted (`rows.emit`) as a BlockRow over a Grid whose "blocks" are the warps. Write
    that Grid twice, each of block_dim WARP: subclassing DeviceGrid (the GPU: %tid.x / 32 is
    the warp, %tid.x % 32 the lane, `_special` reads them; a combine is `_shuffle_xor`'s
    butterfly alone; lane 0 stores) and EmulatedGrid (a loop over blocks, in it one over
    warps; its phases and its combine over 32 lanes are already a warp's);
    `isinstance(rows.grid, EmulatedGrid)` says which one you are emitting."""
    raise NotImplementedError("TODO emit: a warp per row, on the GPU and emulated")


register_launch_plan(NAME, choose, blocks=blocks, emit=emit)
