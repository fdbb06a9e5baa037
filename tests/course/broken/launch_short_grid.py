"""Broken: the grid rounds down, rows // warps per block blocks: the last rows have no warp of
their own (the grid-stride loop still computes them, two to a warp)."""

from codegen.cuda.grid import WARP
from tests.course.broken._warps import register

register("short_grid", blocks=lambda plan, rows: rows // (plan.block_dim // WARP))
