"""Broken: the warps combine as blocks do, through shared memory with a barrier on each side
(and a barrier that the block's warps, each on rows of its own, need not all reach)."""

from codegen.cuda.grid import DeviceGrid, DeviceWarps
from tests.course.broken._warps import register


class SharedWarps(DeviceWarps):
    combine = DeviceGrid.combine


def shared(grid):
    warps = grid.warps()
    if isinstance(warps, DeviceWarps):
        return SharedWarps(warps.builder, warps.warps_per_block)
    return warps


register("shared_warps", warps=shared)
