"""Broken on the GPU only: thread 0 of the block stores each row's value, as in block per
row, so only the first warp's rows are stored; the emulation stores every row."""

from codegen.cuda.grid import DeviceGrid, DeviceWarps
from tests.course.broken._warps import register


class FirstThreadStores(DeviceWarps):
    one_thread = DeviceGrid.one_thread


def first_thread(grid):
    warps = grid.warps()
    if isinstance(warps, DeviceWarps):
        return FirstThreadStores(warps.builder, warps.warps_per_block)
    return warps


register("device_store", warps=first_thread)
