"""What the broken variants of assignment `launch` share: the tree's warp per row, registered
under another name with one piece swapped for a broken one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from codegen.cuda import launch, rows
from codegen.cuda.grid import Grid
from codegen.cuda.launch import LaunchPlan, register_launch_plan


def register(
    name: str,
    blocks: Callable[[LaunchPlan, int], int] = launch._a_warp_per_row,
    warps: Callable[[Grid], Grid] = lambda grid: grid.warps(),
) -> None:
    """Warp per row as `name`, with `blocks` for its grid and `warps(grid)` for its warps."""

    def choose(kernel, sizes):
        plan = launch._warp_per_row(kernel, sizes)
        return plan and replace(plan, strategy=name)

    def emit(spread: rows.Rows) -> None:
        rows.block_per_row(
            rows.Rows(spread.handler, spread.kernel, warps(spread.grid), spread.emit_row)
        )

    register_launch_plan(name, choose, blocks=blocks, emit=emit)
