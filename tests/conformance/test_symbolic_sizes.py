"""One kernel, many sizes: what `symbolic_sizes` promises ([Note: symbolic sizes], ir/symbolic.py).

Each case is a program written once as a function of its sizes. A backend with
`symbolic_sizes` compiles it once over the symbols s0, s1 (ranges, strides and index arithmetic
mention them) and runs that code at every size in SYMBOLIC_SIZES; a backend without it compiles
it at each size. Either way every run must agree with the reference interpreter run on the
program written with those numbers.

A size symbol stands for a size >= 2: sizes 0 and 1 stay static (minitorch/compile/shapes.py
binds a symbol only to sizes >= 2, and the LLVM backend tells its optimizer so with
llvm.assume). So STATIC_SIZES, with their 0s and 1s, are compiled as numbers, by every backend.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from codegen.backend import Backend
from ir.agreement import MATH_ULPS
from ir.indexing import Var
from ir.nodes import InputBuffer, LoweredProgram, Pointwise
from ir.ops_handler import ops
from minitorch.dtype import float32
from tests.conformance.kernels import (
    Size,
    assert_agrees,
    compile_program,
    computed,
    contiguous,
    execute,
    load,
    program_of,
    random_values,
    reduction,
    run_reference,
    sum_ulps,
)

# (s0, s1) of the runs of one compiled kernel, and of the runs compiled at their own sizes.
SYMBOLIC_SIZES = [(2, 2), (2, 3), (3, 2), (5, 7), (17, 33), (64, 5), (2, 100)]
STATIC_SIZES = [(0, 3), (3, 0), (1, 1), (1, 5), (7, 1)]


def _inputs(s0: Size, s1: Size) -> tuple[InputBuffer, InputBuffer]:
    """x: (s0, s1) and y: (s1,), row-major."""
    x = InputBuffer("x", contiguous((s0, s1), float32))
    y = InputBuffer("y", contiguous((s1,), float32))
    return x, y


def broadcast_pointwise(s0: Size, s1: Size) -> LoweredProgram:
    """out = sin(x) * y, y broadcast along the rows."""
    x, y = _inputs(s0, s1)
    body = Pointwise(float32, (s0, s1), lambda i: ops.mul(ops.sin(load(x, i)), load(y, i[1:])))
    return program_of([x, y], [computed("buf0", body)])


def transposed_read(s0: Size, s1: Size) -> LoweredProgram:
    """out (s1, s0) = x.T + 1: the input's stride s1 is a symbol in the index."""
    x, y = _inputs(s0, s1)
    body = Pointwise(
        float32, (s1, s0), lambda i: ops.add(load(x, (i[1], i[0])), ops.constant(1.0, float32))
    )
    return program_of([x, y], [computed("buf0", body)])


def flattened(s0: Size, s1: Size) -> LoweredProgram:
    """out (s0*s1,) = x.reshape(-1) * y[i % s1]: index arithmetic with // and % by a symbol."""
    x, y = _inputs(s0, s1)
    n = 1 if s1 == 0 else s1  # NOTE: with s1 = 0 the body never runs, but i0 // 0 cannot build

    def inner_fn(i):
        (i0,) = i
        return ops.mul(load(x, (i0 // n, i0 % n)), load(y, (i0 % n,)))

    return program_of([x, y], [computed("buf0", Pointwise(float32, (s0 * s1,), inner_fn))])


def row_and_column_sums(s0: Size, s1: Size) -> LoweredProgram:
    """x.sum(1), x.sum(0, keepdim=True) and x.sum(): reductions over symbolic ranges, and a
    pointwise consumer of one, x - x.sum(0, keepdim=True)."""
    x, y = _inputs(s0, s1)
    rows = computed("buf0", reduction(x, (1,), False, "sum"))
    columns = computed("buf1", reduction(x, (0,), True, "sum"))
    total = computed("buf2", reduction(x, (0, 1), False, "sum"))
    centered = computed(
        "buf3",
        Pointwise(float32, (s0, s1), lambda i: ops.sub(load(x, i), load(columns, (0, i[1])))),
    )
    return program_of([x, y], [rows, columns, total, centered])


PROGRAMS: dict[str, Callable[[Size, Size], LoweredProgram]] = {
    "broadcast_pointwise": broadcast_pointwise,
    "transposed_read": transposed_read,
    "flattened": flattened,
    "row_and_column_sums": row_and_column_sums,
}


@pytest.mark.backend_cases("case", lambda b: list(PROGRAMS) if "float32" in b.dtypes else [])
def test_one_program_at_every_size(backend: Backend, case: str):
    make = PROGRAMS[case]
    if backend.symbolic_sizes:
        generic = compile_program(backend, make(Var("s0"), Var("s1")), ("s0", "s1"))
    for s0, s1 in SYMBOLIC_SIZES + STATIC_SIZES:
        program = make(s0, s1)
        x = random_values(np.float32, s0 * s1, seed=s0 * 100 + s1).reshape(s0, s1)
        inputs = {"x": x, "y": random_values(np.float32, s1, seed=s1)}
        expected = run_reference(program, inputs)
        if backend.symbolic_sizes and (s0, s1) in SYMBOLIC_SIZES:
            got = execute(generic, program, inputs, expected, {"s0": s0, "s1": s1})
        else:
            got = execute(compile_program(backend, program), program, inputs, expected)
        for name, want in expected.items():
            ulps = ULPS[case] if case in ULPS else _sum_ulps(name, x, want)
            assert_agrees({name: got[name]}, {name: want}, ulps, {"sizes": f"s0={s0}, s1={s1}"})


# The error each program may have: sin's, and one rounding of the product; +1, * are exact.
ULPS = {"broadcast_pointwise": MATH_ULPS["sin"] + 1, "transposed_read": 0, "flattened": 0}

# row_and_column_sums' outputs -> the dims and keepdim of the sum each holds or reads; buf3
# = x - the column sums carries their error, and one more rounding
SUMS = {"buf0": ((1,), False), "buf1": ((0,), True), "buf2": ((0, 1), False), "buf3": ((0,), True)}


def _sum_ulps(name: str, x: np.ndarray, want: np.ndarray) -> np.ndarray:
    dims, keepdim = SUMS[name]
    return sum_ulps(x, dims, keepdim, want) + (name == "buf3")
