"""How a kernel is launched: its strategy and block size (fixed when it is generated), and its
grid (from the sizes of each call). The strategies are *launch plans*, registered here: each
says which kernels it takes, how many blocks their rows need, and the code that spreads the
rows over the grid (codegen/cuda/rows.py). The CUDA backend launches with the plan it gives,
and the emulation (emulate.py) runs exactly that grid.

    plan = launch_plan(kernel)          # LaunchPlan('block_per_row', block_dim=128, ...)
    plan.grid({"s0": 4096})             # (4096, 1, 1): blocks
    plan.block()                        # (128, 1, 1): threads per block

The strategies in the tree ([Note: threads, blocks and phases] in codegen/cuda/__init__.py):
- THREAD_PER_ROW: one thread computes a whole row, the rows spread over the grid's threads
  (a grid-stride loop). A pointwise kernel (each row one element), and reductions whose
  loads run across the rows (column sums: neighbouring threads read neighbouring addresses).
- BLOCK_PER_ROW: the threads of one block share a row, and combine what they reduced; the
  rows spread over the blocks. Row reductions, softmax, layernorm.
- WARP_PER_ROW: the threads of one warp share a row; a block holds several warps, so several
  rows ([Note: a warp per row]). Registered, but not active unless turned on.

A plan of your own ([Note: launch plans as hooks]):

    def short_rows(kernel, sizes) -> LaunchPlan | None: ...     # None: not mine
    register_launch_plan("short_rows", short_rows, blocks=..., emit=...)
"""

from __future__ import annotations

import hashlib
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

from codegen.cuda import rows as row_code
from codegen.cuda.grid import MAX_BLOCK, WARP
from codegen.cuda.rows import Rows
from ir.indexing import Expr
from ir.scheduler import FusedKernel, walks_across_outputs
from minitorch.errors import CompileError

THREAD_PER_ROW = "thread_per_row"
BLOCK_PER_ROW = "block_per_row"
WARP_PER_ROW = "warp_per_row"

BLOCK_DIM = 256  # threads per block, at most; fewer for a small kernel whose sizes are known
MAX_GRID = 65535  # blocks, at most: beyond that the grid-stride loops take the rest
WARP_ROWS = 256  # WARP_PER_ROW takes rows of at most this many elements (8 per lane)
WARPS_PER_BLOCK = 8  # WARP_PER_ROW's rows per block, at most


@dataclass(frozen=True)
class LaunchPlan:
    """What a kernel is generated for, and launched with."""

    strategy: str  # the registered launch plan whose code it runs: THREAD_PER_ROW, ...
    block_dim: int  # threads per block: whole warps
    rows: tuple[int | Expr, ...]  # the kernel's ranges: ints, or Exprs over the size symbols

    def row_count(self, sizes: dict[str, int] | None = None) -> int:
        """The number of rows at `sizes` (the values of the size symbols)."""
        return math.prod(n.evaluate(sizes or {}) if isinstance(n, Expr) else n for n in self.rows)

    def grid(self, sizes: dict[str, int] | None = None) -> tuple[int, int, int]:
        """The grid for one call: the blocks the strategy asks for its rows, 1 to MAX_GRID."""
        blocks = strategy(self.strategy).blocks(self, self.row_count(sizes))
        return (min(max(blocks, 1), MAX_GRID), 1, 1)

    def block(self) -> tuple[int, int, int]:
        return (self.block_dim, 1, 1)


# ---- the registry -----------------------------------------------------------------------------

# [Note: launch plans as hooks]
# A launch plan is `choose(kernel, sizes) -> LaunchPlan | None`: the plan for a kernel it
# takes, None for one it leaves to the others. `launch_plan` asks the active plans, the last
# registered first, so a plugin's plan comes before the tree's and refines them; the first
# answer wins. A plan that brings a strategy of its own gives its code too:
#   blocks(plan, rows) -> int     the blocks its `rows` rows need (LaunchPlan.grid caps them
#                                 at MAX_GRID: the code's grid-stride loops take the rest)
#   emit(rows: Rows) -> None      the code that spreads the rows over `rows.grid`
# and the LaunchPlans it returns name it as their strategy. (A plan may also return a plan of
# a strategy registered before it: a different block size for block per row, say.)
# The compiled-graph cache knows the plans by `launch_plan_identity()`: each one's name and a
# digest of its source, the same in every process (a repr would hold an address).


@dataclass(frozen=True)
class RegisteredPlan:
    name: str
    choose: Callable[[FusedKernel, tuple[str, ...]], LaunchPlan | None]
    blocks: Callable[[LaunchPlan, int], int] | None  # None: it returns other strategies' plans
    emit: Callable[[Rows], None] | None


_PLANS: dict[str, RegisteredPlan] = {}  # name -> plan, in registration order
_ACTIVE: set[str] = set()


def register_launch_plan(
    name: str,
    choose: Callable[[FusedKernel, tuple[str, ...]], LaunchPlan | None],
    *,
    blocks: Callable[[LaunchPlan, int], int] | None = None,
    emit: Callable[[Rows], None] | None = None,
    active: bool = True,
) -> None:
    """Ask `choose(kernel, sizes)` for each kernel's plan from now on (if `active`), before the
    plans registered earlier; `blocks` and `emit` make `name` a strategy ([Note: launch
    plans as hooks])."""
    if name in _PLANS:
        raise CompileError(f"a launch plan named {name!r} is already registered")
    for what, fn in (("choose", choose), ("blocks", blocks), ("emit", emit)):
        if fn is not None and not callable(fn):
            raise CompileError(f"register_launch_plan: {what} of {name!r} is not callable: {fn!r}")
    if (blocks is None) != (emit is None):
        raise CompileError(f"register_launch_plan: {name!r} needs both blocks and emit, or neither")
    _PLANS[name] = RegisteredPlan(name, choose, blocks, emit)
    activate_launch_plan(name, active)


def unregister_launch_plan(name: str) -> None:
    _known(name)
    del _PLANS[name]
    _ACTIVE.discard(name)


def activate_launch_plan(name: str, active: bool = True) -> None:
    """Turn the registered plan `name` on (asked by `launch_plan`) or off."""
    _known(name)
    (_ACTIVE.add if active else _ACTIVE.discard)(name)


def launch_plans(active_only: bool = True) -> list[RegisteredPlan]:
    """The registered plans (the active ones), in the order `launch_plan` asks them."""
    return [p for p in reversed(_PLANS.values()) if not active_only or p.name in _ACTIVE]


def strategy(name: str) -> RegisteredPlan:
    """The registered plan whose `blocks` and `emit` run the LaunchPlans of strategy `name`."""
    found = _PLANS.get(name)
    if found is None or found.emit is None:
        strategies = [p.name for p in _PLANS.values() if p.emit is not None]
        raise CompileError(f"no launch strategy {name!r}; the strategies are {strategies}")
    return found


def launch_plan(kernel: FusedKernel, sizes: tuple[str, ...] = ()) -> LaunchPlan:
    """The plan of `kernel`: the first active plan's that takes it; `sizes` names its size
    symbols."""
    for candidate in launch_plans():
        try:
            plan = candidate.choose(kernel, sizes)
        except CompileError:
            raise
        except Exception as error:
            raise CompileError(
                f"launch plan {candidate.name!r} failed on {kernel.name}: "
                f"{type(error).__name__}: {error}"
            ) from error
        if plan is not None:
            _check(candidate.name, kernel, plan)
            return plan
    raise CompileError(
        f"no active launch plan takes {kernel.name}; active: {[p.name for p in launch_plans()]}"
    )


def _check(name: str, kernel: FusedKernel, plan: LaunchPlan) -> None:
    """A CompileError, naming the plan, if what it returned cannot be launched."""
    problem = None
    if not isinstance(plan, LaunchPlan):
        problem = f"returned {plan!r}, not a LaunchPlan or None"
    elif plan.block_dim % WARP or not 0 < plan.block_dim <= MAX_BLOCK:
        problem = f"gave a block of {plan.block_dim} threads: whole warps, at most {MAX_BLOCK}"
    elif tuple(plan.rows) != tuple(kernel.ranges):
        problem = f"gave rows {plan.rows}, but the kernel's ranges are {kernel.ranges}"
    if problem is None:
        strategy(plan.strategy)  # a strategy that exists
        return
    raise CompileError(f"launch plan {name!r} on {kernel.name}: {problem}")


def launch_plan_identity() -> list[str]:
    """Each registered plan as `name:digest` (`name:digest:off` if it is not active), in the
    order asked; the digest is the SHA-256 of its functions' sources, the first 16 digits."""
    return [
        f"{p.name}:{_digest(p.choose, p.blocks, p.emit)}" + ("" if p.name in _ACTIVE else ":off")
        for p in launch_plans(active_only=False)
    ]


def _digest(*fns: Callable | None) -> str:
    texts = []
    for fn in fns:
        try:
            texts.append(inspect.getsource(fn) if fn is not None else "")
        except (OSError, TypeError):  # no source to read: known by where it is defined
            texts.append(f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}")
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]


def _known(name: str) -> None:
    if name not in _PLANS:
        raise CompileError(f"no launch plan named {name!r}; registered: {list(_PLANS)}")


# ---- the tree's plans -------------------------------------------------------------------------


def _thread_per_row(kernel: FusedKernel, sizes: tuple[str, ...]) -> LaunchPlan | None:
    """Kernels with no reduction, or whose reductions load across the rows (column sums)."""
    if kernel.reduction_ranges and not walks_across_outputs(kernel, sizes):
        return None
    return LaunchPlan(THREAD_PER_ROW, _block_dim(kernel.ranges), kernel.ranges)


def _block_per_row(kernel: FusedKernel, sizes: tuple[str, ...]) -> LaunchPlan | None:
    """Kernels that reduce along their rows."""
    if not kernel.reduction_ranges or walks_across_outputs(kernel, sizes):
        return None
    return LaunchPlan(BLOCK_PER_ROW, _block_dim(kernel.reduction_ranges), kernel.ranges)


# [Note: a warp per row]
# Block per row gives each row a whole block: softmax over rows of 64 keeps 64 of 256 threads
# busy, and each combine crosses the block's warps through shared memory, with two barriers.
# With a warp per row the 32 lanes of a warp share a row (lane l takes elements l, l + 32,
# ...), and a block of W warps takes W rows: warp w of block b takes rows b * W + w, then
# + G * W, ... The combine is the butterfly alone: after its five shuffles every lane holds
# the warp's total, so there is no shared memory and no barrier (a barrier would even be
# wrong: the block's warps run rows of their own, and one whose rows are done never reaches
# it). The code is block per row's, run on the grid's warps as blocks of their own
# (`Grid.warps()` in grid.py; rows.py's `warp_per_row`). It takes rows of at most WARP_ROWS
# elements, known when compiled. It is not active by default: nobody has measured it against
# block per row on a GPU yet. `activate_launch_plan(WARP_PER_ROW)` turns it on (the course's
# reference for its `launch` assignment does).


def _warp_per_row(kernel: FusedKernel, sizes: tuple[str, ...]) -> LaunchPlan | None:
    """Kernels that reduce along rows of at most WARP_ROWS elements, known when compiled."""
    if not kernel.reduction_ranges or walks_across_outputs(kernel, sizes):
        return None
    if any(isinstance(n, Expr) for n in kernel.reduction_ranges):
        return None
    if math.prod(kernel.reduction_ranges) > WARP_ROWS:
        return None
    warps = WARPS_PER_BLOCK
    if not any(isinstance(n, Expr) for n in kernel.ranges):  # no more warps than rows
        warps = min(warps, max(1, math.prod(kernel.ranges)))
    return LaunchPlan(WARP_PER_ROW, warps * WARP, kernel.ranges)


def _block_dim(work: tuple[int | Expr, ...]) -> int:
    """BLOCK_DIM threads, or as few whole warps as cover `work` elements when it is known."""
    if any(isinstance(n, Expr) for n in work):
        return BLOCK_DIM
    return min(BLOCK_DIM, max(WARP, -(-math.prod(work) // WARP) * WARP))


def _a_block_per_row(plan: LaunchPlan, rows: int) -> int:
    return rows


def _a_thread_per_row(plan: LaunchPlan, rows: int) -> int:
    return -(-rows // plan.block_dim)


def _a_warp_per_row(plan: LaunchPlan, rows: int) -> int:
    return -(-rows // (plan.block_dim // WARP))


register_launch_plan(
    BLOCK_PER_ROW, _block_per_row, blocks=_a_block_per_row, emit=row_code.block_per_row
)
register_launch_plan(
    THREAD_PER_ROW, _thread_per_row, blocks=_a_thread_per_row, emit=row_code.thread_per_row
)
# NOTE: not active: measured on no GPU yet ([Note: a warp per row]).
register_launch_plan(
    WARP_PER_ROW,
    _warp_per_row,
    blocks=_a_warp_per_row,
    emit=row_code.warp_per_row,
    active=False,
)
