"""How a kernel is launched: its strategy and block size (fixed when it is generated), and its
grid (from the sizes of each call). Pure functions of the kernel's ranges: the CUDA backend
launches with them and the emulation (emulate.py) runs exactly the grid they give.

    plan = launch_plan(kernel)          # LaunchPlan('block_per_row', block_dim=128, ...)
    plan.grid({"s0": 4096})             # (4096, 1, 1): blocks
    plan.block()                        # (128, 1, 1): threads per block

Two strategies ([Note: threads, blocks and phases] in codegen/cuda/__init__.py):
- THREAD_PER_ROW: one thread computes a whole row, the rows spread over the grid's threads
  (a grid-stride loop). A pointwise kernel (each row one element), and reductions whose
  loads run across the rows (column sums: neighbouring threads read neighbouring addresses).
- BLOCK_PER_ROW: the threads of one block share a row, and combine what they reduced; the
  rows spread over the blocks. Row reductions, softmax, layernorm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from codegen.cuda.grid import WARP
from ir.indexing import Expr
from ir.scheduler import FusedKernel, walks_across_outputs

THREAD_PER_ROW = "thread_per_row"
BLOCK_PER_ROW = "block_per_row"

BLOCK_DIM = 256  # threads per block, at most; fewer for a small kernel whose sizes are known
MAX_GRID = 65535  # blocks, at most: beyond that the grid-stride loops take the rest


@dataclass(frozen=True)
class LaunchPlan:
    """What a kernel is generated for, and launched with."""

    strategy: str  # THREAD_PER_ROW or BLOCK_PER_ROW
    block_dim: int  # threads per block: whole warps
    rows: tuple[int | Expr, ...]  # the kernel's ranges: ints, or Exprs over the size symbols

    def grid(self, sizes: dict[str, int] | None = None) -> tuple[int, int, int]:
        """The grid for one call: enough blocks for every row (or thread), at least 1."""
        rows = math.prod(n.evaluate(sizes or {}) if isinstance(n, Expr) else n for n in self.rows)
        if self.strategy == THREAD_PER_ROW:
            rows = -(-rows // self.block_dim)
        return (min(max(rows, 1), MAX_GRID), 1, 1)

    def block(self) -> tuple[int, int, int]:
        return (self.block_dim, 1, 1)


def launch_plan(kernel: FusedKernel, sizes: tuple[str, ...] = ()) -> LaunchPlan:
    """The strategy and block size of `kernel`; `sizes` names its size symbols."""
    if not kernel.reduction_ranges or walks_across_outputs(kernel, sizes):
        return LaunchPlan(THREAD_PER_ROW, _block_dim(kernel.ranges), kernel.ranges)
    return LaunchPlan(BLOCK_PER_ROW, _block_dim(kernel.reduction_ranges), kernel.ranges)


def _block_dim(work: tuple[int | Expr, ...]) -> int:
    """BLOCK_DIM threads, or as few whole warps as cover `work` elements when it is known."""
    if any(isinstance(n, Expr) for n in work):
        return BLOCK_DIM
    return min(BLOCK_DIM, max(WARP, -(-math.prod(work) // WARP) * WARP))
