"""Broken: the butterfly stops short, 8, 4, 2, 1: lanes 0-15 and 16-31 are never combined, so
a row's value is half the warp's (right only for rows of 16 elements or fewer)."""

from codegen.cuda.grid import DeviceWarps, EmulatedWarps
from codegen.llvm.loops import for_range, i64
from tests.course.broken._warps import register

STAGES = (8, 4, 2, 1)


class HalfDevice(DeviceWarps):
    def combine(self, parts, op):
        values = [self.builder.load(p.slot, typ=p.type) for p in parts]
        for distance in STAGES:
            values = op(self.builder, values, [self._shuffle_xor(v, distance) for v in values])
        return values


class HalfEmulated(EmulatedWarps):
    def combine(self, parts, op):
        b = self.builder
        current = [p.slot for p in parts]
        spare = [b.alloca(p.slot.allocated_type) for p in parts]
        for distance in STAGES:
            with for_range(b, 0, self.block_dim, name="lane") as lane:
                partner = b.xor(lane, i64(distance))
                mine = [b.load(self._lane(a, lane), typ=p.type) for a, p in zip(current, parts)]
                theirs = [
                    b.load(self._lane(a, partner), typ=p.type) for a, p in zip(current, parts)
                ]
                for array, value in zip(spare, op(b, mine, theirs)):
                    b.store(value, self._lane(array, lane))
            current, spare = spare, current
        return [b.load(self._lane(a, i64(0)), typ=p.type) for a, p in zip(current, parts)]


def half(grid):
    warps = grid.warps()
    if isinstance(warps, EmulatedWarps):
        return HalfEmulated(warps.builder, warps.warps_per_block, warps.grid_dim)
    return HalfDevice(warps.builder, warps.warps_per_block)


register("half_warp", warps=half)
