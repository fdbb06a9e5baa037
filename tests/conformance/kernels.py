"""Helpers of the conformance suite: build loop-IR programs, run them, compare with the definition.

    x = input_buffer("x", array)
    out = computed("buf0", Pointwise(float32, array.shape, lambda i: ops.sin(load(x, i))))
    program = LoweredProgram((x,), (out,), ("buf0",))
    expected = run_reference(program, {"x": array})      # ir/interpreter.py: the definition
    got = run_backend(backend, program, {"x": array}, expected)
    assert_agrees(got, expected, ulps=4, inputs={"x": array})

Programs are built by hand, node by node, so that every loop-IR op is reachable (some have no
eager op that lowers to them) and every layout can be written down (negative strides, offsets).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from codegen.backend import Backend, CompiledKernel
from ir.indexing import Const, Expr
from ir.interpreter import disagreements, run_kernel
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import ops
from ir.scheduler import FusedKernel, schedule
from minitorch.dtype import DType, from_numpy_dtype, int64

Size = int | Expr  # a loop size or a dim: a number, or an Expr over size symbols s0, s1, ...

# ---- building programs --------------------------------------------------------------------


def input_buffer(name: str, array: np.ndarray, offset: int = 0) -> InputBuffer:
    """An InputBuffer with `array`'s shape, dtype and strides (in elements, any sign).

    With an `offset`, element (0, 0, ...) of the logical tensor is `offset` elements past the
    start of the array the kernel is given.
    """
    stride = tuple(s // array.itemsize for s in array.strides)
    layout = Layout(array.shape, stride, from_numpy_dtype(array.dtype), offset)
    return InputBuffer(name, layout)


def contiguous(size: Sequence[Size], dtype: DType) -> Layout:
    """The row-major layout of `size`, whose dims may be size symbols."""
    stride: list[Size] = []
    step: Size = 1
    for n in reversed(size):
        stride.append(step)
        step = step * (max(n, 1) if isinstance(n, int) else n)
    return Layout(tuple(size), tuple(reversed(stride)), dtype)


def computed(name: str, data: Pointwise | Reduction) -> ComputedBuffer:
    """A buffer filled by `data`, contiguous over its ranges."""
    return ComputedBuffer(name, contiguous(data.ranges, data.dtype), data)


def load(buffer: InputBuffer | ComputedBuffer, index: Sequence[Expr]) -> Any:
    """ops.load of `buffer`'s element `index`, through its layout."""
    return ops.load(buffer.name, buffer.layout.indexer()(tuple(index)))


def float_dtypes(backend: Backend) -> list[str]:
    """The float dtypes `backend` claims, in order."""
    return sorted({"float32", "float64"} & backend.dtypes)


def program_of(inputs: Sequence[InputBuffer], buffers: Sequence[ComputedBuffer]) -> LoweredProgram:
    """A program that computes `buffers` in order and returns every one of them."""
    return LoweredProgram(tuple(inputs), tuple(buffers), tuple(b.name for b in buffers))


def reduction(
    x: InputBuffer,
    dims: Sequence[int],
    keepdim: bool,
    reduction_type: str,
    body: Callable[[Any], Any] = lambda value: value,
) -> Reduction:
    """x reduced over `dims` (as torch's x.sum(dims, keepdim)): body(x[...]) per term; an
    argmax or argmin gives the int64 position in the row-major order of `dims`."""
    shape = x.layout.size
    kept = [d for d in range(len(shape)) if d not in dims]

    def inner_fn(index: Sequence[Expr], rindex: Sequence[Expr]) -> Any:
        x_index: list[Expr] = [Const(0)] * len(shape)
        for d, i in zip(kept, [index[d] for d in kept] if keepdim else index, strict=True):
            x_index[d] = i
        for d, r in zip(dims, rindex, strict=True):
            x_index[d] = r
        return body(load(x, x_index))

    if keepdim:
        ranges = tuple(1 if d in dims else n for d, n in enumerate(shape))
    else:
        ranges = tuple(shape[d] for d in kept)
    reduction_ranges = tuple(shape[d] for d in dims)
    dtype = int64 if reduction_type in ("argmax", "argmin") else x.layout.dtype  # a position
    return Reduction(dtype, ranges, reduction_ranges, reduction_type, inner_fn)


# ---- values -------------------------------------------------------------------------------


def special_values(dtype: np.dtype) -> np.ndarray:
    """The edge cases of a dtype: for floats ±0, ±inf, NaN, subnormals, the extremes, the
    edges of exp's range, large arguments and a few ordinary numbers; for ints the extremes."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        extremes = [info.min, info.min + 1, info.max - 1, info.max]
        return np.array([0, 1, -1, 2, -2, 3, 7, -100, 1000, *extremes], dtype)
    info = np.finfo(dtype)
    tiny = info.smallest_subnormal
    values = [
        0.0, -0.0, np.inf, -np.inf, np.nan,
        tiny, -tiny, info.smallest_normal - tiny, info.smallest_normal, -info.smallest_normal,
        1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, np.pi, -np.e, 10.0, -10.0,
        info.eps, 1.0 + info.eps, 1.0 - info.epsneg, 1e-3,
        88.5, -88.5, 104.0, -104.0, 709.5, -709.5, 746.0, -746.0,  # where exp overflows
        1e4, -1e4, 1e15, 2.0**50, -(2.0**50), 1e30, -1e30, info.max, -info.max,  # large
    ]  # fmt: skip
    with np.errstate(over="ignore"):
        return np.array(values, dtype=np.float64).astype(dtype)


def random_values(dtype: np.dtype, n: int, seed: int) -> np.ndarray:
    """`n` ordinary values, the same for the same seed: half within ±4, half of magnitudes
    spread evenly over 1e-5 .. 1e5 (log-uniform) with random signs."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    if dtype.kind == "i":
        return rng.integers(-1000, 1000, n).astype(dtype)
    near = rng.uniform(-4, 4, n - n // 2)
    far = np.exp(rng.uniform(np.log(1e-5), np.log(1e5), n // 2)) * rng.choice([-1, 1], n // 2)
    return np.concatenate([near, far]).astype(dtype)


# ---- running them -------------------------------------------------------------------------


def run_reference(program: LoweredProgram, inputs: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Every output of `program`, as the reference interpreter computes it (by name)."""
    memory = dict(inputs)
    for kernel in schedule(program):
        for name in kernel.writes:
            memory[name] = np.empty(_shape(program, name), _dtype(program, name))
        with np.errstate(all="ignore"):  # overflow, inf - inf, ...: the edge cases we are after
            run_kernel(kernel, memory)
    return {name: memory[name] for name in program.outputs}


Compiled = list[tuple[FusedKernel, CompiledKernel]]


def compile_program(
    backend: Backend, program: LoweredProgram, sizes: Sequence[str] = ()
) -> Compiled:
    """Each of `program`'s fused kernels, compiled by `backend` (taking `sizes` as arguments)."""
    dtypes = program.dtypes()
    return [(k, backend.compile_kernel(k, dtypes, tuple(sizes))) for k in schedule(program)]


def execute(
    compiled: Compiled,
    program: LoweredProgram,
    inputs: Mapping[str, np.ndarray],
    expected: Mapping[str, np.ndarray],
    sizes: dict[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """Run compiled kernels on `inputs`; `program` is the one with concrete sizes, for memory.

    NOTE: every buffer starts out *poisoned*: an output holds a value that differs from the
    expected one everywhere, so a backend that skips a store cannot pass by luck (np.empty
    could hand back the reference's freed memory, right answers included).
    """
    memory = dict(inputs)
    for kernel, _ in compiled:
        for name in kernel.writes:
            dtype = _dtype(program, name)
            poison = np.full(_shape(program, name), _POISON[dtype.kind][0], dtype)
            if name in expected:
                first, second = _POISON[dtype.kind]
                poison[expected[name] == first] = second
            memory[name] = poison
    with np.errstate(all="ignore"):  # a backend that computes with numpy warns as the reference
        for _, kernel in compiled:
            kernel(memory, sizes)
    return {name: memory[name] for name in program.outputs}


def run_backend(
    backend: Backend,
    program: LoweredProgram,
    inputs: Mapping[str, np.ndarray],
    expected: Mapping[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """Every output of `program`, computed by `backend`'s kernels."""
    return execute(compile_program(backend, program), program, inputs, expected)


# numpy dtype kind -> two values to poison output memory with ('b' bool, 'i' int, 'f' float)
_POISON = {"b": (True, False), "i": (-1234567, 7654321), "f": (-1234.5, 4321.25)}


def _shape(program: LoweredProgram, name: str) -> tuple[int, ...]:
    return tuple(program.buffer(name).layout.size)


def _dtype(program: LoweredProgram, name: str) -> np.dtype:
    return program.buffer(name).layout.dtype.np


# ---- tolerances ---------------------------------------------------------------------------
# Ops: MATH_DOMAINS and MATH_ULPS of ir/agreement.py ([Note: where backends must agree]).


def sum_ulps(
    terms: np.ndarray, dims: Sequence[int], keepdim: bool, want: np.ndarray, term_ulps: float = 0
) -> np.ndarray:
    """The tolerance of a sum of `terms` over `dims`, in ulp of each result `want`: the note's
    (n - 1) eps sum |term|, what adding the same terms in another order may change (a
    reduction's order is not fixed), plus `term_ulps` eps sum |term| for terms that are
    themselves computed to within `term_ulps`."""
    count = int(np.prod([terms.shape[d] for d in dims]))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        magnitude = np.sum(np.abs(terms.astype(np.float64)), axis=tuple(dims), keepdims=keepdim)
        bound = (max(count - 1, 0) + term_ulps) * np.finfo(terms.dtype).eps * magnitude
        return bound / np.spacing(np.abs(want)).astype(np.float64)


# ---- comparing ----------------------------------------------------------------------------


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units in the last place of `want` (its dtype's spacing at |want|)."""
    with np.errstate(invalid="ignore", over="ignore"):
        spacing = np.spacing(np.abs(want)).astype(np.float64)
        return np.abs(got.astype(np.float64) - want.astype(np.float64)) / spacing


def assert_agrees(
    got: Mapping[str, np.ndarray],
    want: Mapping[str, np.ndarray],
    ulps: float | np.ndarray = 0,
    inputs: Mapping[str, np.ndarray] | None = None,
    show: int = 8,
) -> None:
    """Every output of `got` agrees with the reference's `want` to within `ulps` (a number, or
    one per element), as ir/interpreter.py's `disagreements` defines agreeing: NaN where want
    is NaN, the same infinities and signed zeros, other values within `ulps` ulp.

    On failure the message lists the first `show` bad elements with the `inputs` there
    (arrays of the output's shape, or broadcastable to it).
    """
    for name in want:
        g, w = np.asarray(got[name]), np.asarray(want[name])
        assert g.dtype == w.dtype, f"{name}: dtype {g.dtype}, the reference has {w.dtype}"
        assert g.shape == w.shape, f"{name}: shape {g.shape}, the reference has {w.shape}"
        with np.errstate(invalid="ignore", over="ignore"):
            bad = disagreements(g, w, np.broadcast_to(ulps, w.shape))
        if not bad.any():
            continue
        allowed = f"{ulps} ulp" if np.ndim(ulps) == 0 else "ulps as given per element"
        lines = [
            f"{name}: {int(bad.sum())} of {bad.size} elements differ from the reference "
            f"interpreter (allowed: {allowed})"
        ]
        for where in map(tuple, np.argwhere(bad)[:show]):  # () for a 0-d output
            at = ", ".join(
                f"{k}={np.broadcast_to(v, w.shape)[where]!r}" for k, v in (inputs or {}).items()
            )
            error = ""
            if w.dtype.kind == "f":
                error = f" ({ulp_distance(g[where], w[where]):.3g} ulp)"
                if g[where] == w[where]:
                    error = " (the other zero)"
            lines.append(
                f"  at {tuple(map(int, where))}: {at} got {g[where]!r}, want {w[where]!r}{error}"
            )
        raise AssertionError("\n".join(lines))
