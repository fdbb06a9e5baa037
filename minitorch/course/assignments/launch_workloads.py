"""The workloads of assignment `launch` (minitorch/course/assignments/launch.py): loop-IR
programs over one matrix x, built by hand as the conformance suite builds them, so that each
is exactly the kernel it names: row sums, max and argmax, softmax, layernorm, column sums.

    workload = BY_NAME["softmax_48"]
    program = workload.program()          # its LoweredProgram; program(rows) at other row counts
    x = workload.array()                  # its input
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ir.indexing import Const, Expr, Var
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import ops
from minitorch.dtype import from_numpy_dtype, int64


def _load(buffer: InputBuffer | ComputedBuffer, index: Sequence[Expr]):
    return ops.load(buffer.name, buffer.layout.indexer()(tuple(index)))


def _computed(name: str, data: Pointwise | Reduction) -> ComputedBuffer:
    size, stride, step = data.ranges, [], 1
    for n in reversed(size):
        stride.append(step)
        step = step * (max(n, 1) if isinstance(n, int) else n)
    return ComputedBuffer(name, Layout(tuple(size), tuple(reversed(stride)), data.dtype), data)


def _reduce(x: InputBuffer, name: str, kind: str, along: int = 1) -> ComputedBuffer:
    """x reduced along dim `along` (1: rows, 0: columns) of a matrix: x.sum(along) and so on."""
    rows, n = x.layout.size
    dtype = int64 if kind.startswith("arg") else x.layout.dtype
    if along == 1:
        body = lambda i, r: _load(x, (i[0], r[0]))  # noqa: E731
        return _computed(name, Reduction(dtype, (rows,), (n,), kind, body))
    body = lambda i, r: _load(x, (r[0], i[0]))  # noqa: E731
    return _computed(name, Reduction(dtype, (n,), (rows,), kind, body))


def row_sums(x: InputBuffer) -> LoweredProgram:
    return LoweredProgram((x,), (_reduce(x, "buf0", "sum"),), ("buf0",))


def column_sums(x: InputBuffer) -> LoweredProgram:
    return LoweredProgram((x,), (_reduce(x, "buf0", "sum", along=0),), ("buf0",))


def max_and_argmax(x: InputBuffer) -> LoweredProgram:
    found = (_reduce(x, "buf0", "max"), _reduce(x, "buf1", "argmax"))
    return LoweredProgram((x,), found, ("buf0", "buf1"))


def softmax(x: InputBuffer) -> LoweredProgram:
    """max, sum of exp(x - max), exp(x - max) / sum along the rows: one kernel, three loops."""
    rows, n = x.layout.size
    dtype = x.layout.dtype
    element = lambda i, r: _load(x, (i[0], r[0]))  # noqa: E731
    top = _computed("buf0", Reduction(dtype, (rows, 1), (n,), "max", element))
    exp = lambda i: ops.exp(ops.sub(_load(x, i), _load(top, (i[0], Const(0)))))  # noqa: E731
    exp_term = lambda i, r: exp((i[0], r[0]))  # noqa: E731
    total = _computed("buf1", Reduction(dtype, (rows, 1), (n,), "sum", exp_term))
    out = _computed(
        "buf2",
        Pointwise(dtype, (rows, n), lambda i: ops.div(exp(i), _load(total, (i[0], Const(0))))),
    )
    return LoweredProgram((x,), (top, total, out), ("buf2",))


def layernorm(x: InputBuffer) -> LoweredProgram:
    """(x - mean) * rsqrt(mean of squares + eps) along the rows: two sums, a step after each."""
    rows, n = x.layout.size
    dtype = x.layout.dtype
    per_row = lambda buffer, i: _load(buffer, (i[0], Const(0)))  # noqa: E731

    def mean_of(name: str, term: Callable) -> tuple[ComputedBuffer, ComputedBuffer]:
        total = _computed(name, Reduction(dtype, (rows, 1), (n,), "sum", term))
        scale = lambda i: ops.mul(per_row(total, i), ops.constant(1 / n, dtype))  # noqa: E731
        return total, _computed(name + "_mean", Pointwise(dtype, (rows, 1), scale))

    total, mean = mean_of("buf0", lambda i, r: _load(x, (i[0], r[0])))
    centered = lambda i: ops.sub(_load(x, i), per_row(mean, i))  # noqa: E731
    squares, variance = mean_of("buf1", lambda i, r: ops.square(centered((i[0], r[0]))))
    eps = lambda: ops.constant(1e-5, dtype)  # noqa: E731
    out = _computed(
        "buf2",
        Pointwise(
            dtype,
            (rows, n),
            lambda i: ops.mul(centered(i), ops.rsqrt(ops.add(per_row(variance, i), eps()))),
        ),
    )
    return LoweredProgram((x,), (total, mean, squares, variance, out), ("buf2",))


@dataclass(frozen=True)
class Workload:
    """A program over one matrix x of `shape` (rows, elements a row); with `runs`, its rows
    are the size symbol s0: compiled once, run at each row count in `runs`."""

    name: str
    build: Callable[[InputBuffer], LoweredProgram]
    shape: tuple[int, int]
    dtype: str = "float32"
    values: str = "integers"  # "integers" (sums exact in any order), "normal", "special"
    runs: tuple[int, ...] = ()  # symbolic: the row counts s0 takes
    max_grid: int | None = None  # launch.MAX_GRID while it runs

    @property
    def exact(self) -> bool:
        return self.build in (row_sums, column_sums, max_and_argmax)

    def describe(self) -> str:
        rows = (
            f"s0 = {', '.join(map(str, self.runs))} rows" if self.runs else f"{self.shape[0]} rows"
        )
        text = f"{self.build.__name__.strip('_').replace('_', ' ')} over {rows} of {self.shape[1]}"
        text += f", {self.dtype}"
        return text + (f", MAX_GRID = {self.max_grid}" if self.max_grid else "")

    def program(self, rows: int | None = None) -> LoweredProgram:
        """The workload's program at `rows` rows; with None, a symbolic workload's over s0 rows."""
        n, dtype = self.shape[1], from_numpy_dtype(np.dtype(self.dtype))
        if self.runs and rows is None:
            return self.build(InputBuffer("x", Layout((Var("s0"), n), (n, 1), dtype)))
        rows = self.shape[0] if rows is None else rows
        return self.build(InputBuffer("x", Layout((rows, n), (n, 1), dtype)))

    def array(self, rows: int | None = None) -> np.ndarray:
        shape = (self.shape[0] if rows is None else rows, self.shape[1])
        rng = np.random.default_rng(sum(map(ord, self.name)))
        if self.values == "integers":
            return rng.integers(-4, 5, shape).astype(self.dtype)
        array = rng.standard_normal(shape).astype(self.dtype) * 3
        if self.values == "special" and shape[0] > 5:
            array[3, shape[1] // 2] = np.nan
            array[5, :] = -np.inf  # softmax: NaN everywhere in the row
            array[1, : shape[1] // 3] = array[1, 0]  # ties
        return array


WORKLOADS = [
    Workload("row_sums_16", row_sums, (37, 16)),
    Workload("row_sums_33", row_sums, (5, 33)),
    Workload("row_sums_int32", row_sums, (10, 45), "int32"),
    Workload("max_argmax_20", max_and_argmax, (9, 20), values="special"),
    Workload("softmax_48", softmax, (37, 48), values="special"),
    Workload("softmax_100", softmax, (21, 100), values="special"),
    Workload("softmax_one_row", softmax, (1, 7), values="normal"),
    Workload("softmax_zero_rows", softmax, (0, 16), values="normal"),
    Workload("softmax_float64", softmax, (13, 40), "float64", values="normal"),
    Workload("softmax_rows_at_run_time", softmax, (0, 24), values="normal", runs=(3, 50)),
    Workload("softmax_small_grid", softmax, (45, 20), values="normal", max_grid=2),
    Workload("layernorm_33", layernorm, (33, 33), values="normal"),
    Workload("layernorm_long_rows", layernorm, (3, 1000), values="normal"),
    Workload("column_sums", column_sums, (20, 40)),
]
BY_NAME = {w.name: w for w in WORKLOADS}
