"""Broken on the GPU only: the GPU's warps forget which warp of their block they are, so all
the warps of block b take rows b, b + G, ... (and the rows past the grid are nobody's); the
emulation, whose own code is right, computes every row."""

from contextlib import contextmanager

from codegen.cuda.grid import DeviceWarps
from tests.course.broken._warps import register


class BlockRows(DeviceWarps):
    @contextmanager
    def blocks(self):
        yield self._special("ctaid.x"), self._special("nctaid.x")


def forgetful(grid):
    warps = grid.warps()
    if isinstance(warps, DeviceWarps):
        return BlockRows(warps.builder, warps.warps_per_block)
    return warps


register("device_rows", warps=forgetful)
