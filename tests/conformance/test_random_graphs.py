"""Seeded random programs, through the compiler's own path, on the backend and the reference.

Each seed makes one small minitorch program of pointwise ops, broadcasting, views and sums
(`random_program`), the same one on every run: numpy's generator with that seed makes every
choice. The program is traced to a graph of op-table calls (make_fx), lowered and scheduled
as `minitorch.compile` does it, and its kernels run on the backend and on the reference
interpreter. This is where fusion, inlining and index arithmetic meet in combinations that no
hand-written kernel above tries.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import minitorch
from codegen.backend import Backend
from ir.lowering import extern_reason, lower_graph
from tests.conformance.kernels import assert_agrees, float_dtypes, run_backend, run_reference
from tracer.aot import make_fx

SEEDS = range(50)

# Relative tolerance for whole programs: chains of a few ops, each within a few ulp, and sums
# of up to 60 terms. It catches a wrong op or a wrong address, not a last-bit difference (the
# op tests grade those).
RTOL = {"float32": 1e-4, "float64": 1e-10}

# The shapes inputs are drawn from: each broadcasts with the first, (3, 4, 5).
INPUT_SHAPES = [(3, 4, 5), (4, 5), (5,), (4, 1), (3, 1, 5), (1, 5)]

UNARY = {
    "sin": minitorch.sin,
    "cos": minitorch.cos,
    "tanh": minitorch.tanh,
    "sigmoid": minitorch.sigmoid,
    "exp": minitorch.exp,
    "log": lambda x: minitorch.log(minitorch.abs(x) + 0.5),
    "abs": minitorch.abs,
    "neg": minitorch.neg,
    "relu": minitorch.relu,
    "erf": minitorch.erf,
    "square": lambda x: x**2,
    "cube": lambda x: x**3,
    "sqrt": lambda x: minitorch.abs(x) ** 0.5,
    "affine": lambda x: x * 1.5 - 0.25,
}
BINARY = {
    "add": minitorch.add,
    "sub": minitorch.sub,
    "mul": minitorch.mul,
    "div": lambda x, y: x / (minitorch.abs(y) + 1.0),
    "maximum": minitorch.maximum,
    "minimum": minitorch.minimum,
    "where": lambda x, y: minitorch.where(x < y, x, y * 2.0),
    "select_equal": lambda x, y: minitorch.where(x == y, x, -y),
    "less_as_number": lambda x, y: (x <= y).to(x.dtype) - 0.5,  # a bool converted back
}


def random_program(seed: int, dtype: minitorch.dtype.DType) -> tuple[Callable, list]:
    """(fn, example inputs): a program of 2 to 9 steps chosen by `seed`, returning 1 or 2 values.

    The choices are made while running the steps eagerly (so that each knows its operands'
    shapes); fn replays them on whatever tensors it is given, as a traced function must.
    """
    rng = np.random.default_rng(seed)
    inputs = []
    for _ in range(rng.integers(1, 4)):
        shape = INPUT_SHAPES[rng.integers(len(INPUT_SHAPES))]
        array = rng.uniform(-2, 2, shape).astype(dtype.np)
        if array.ndim >= 2 and rng.random() < 0.3:
            array = np.ascontiguousarray(array.swapaxes(0, 1)).swapaxes(0, 1)  # same values
        inputs.append(minitorch.from_numpy(array))

    steps: list[Callable[[list], minitorch.Tensor]] = []
    values = list(inputs)
    for _ in range(rng.integers(2, 10)):
        step = _random_step(rng, values)
        if step is None:
            continue
        values.append(step(values))
        steps.append(step)
    outputs = [len(values) - 1] + ([int(rng.integers(len(values)))] if rng.random() < 0.4 else [])

    def fn(*tensors):
        values = list(tensors)
        for step in steps:
            values.append(step(values))
        return tuple(values[k] for k in outputs)

    return fn, inputs


def _random_step(rng: np.random.Generator, values: list) -> Callable | None:
    """One step reading some of `values` (by position), or None when the choice does not fit."""
    a = int(rng.integers(len(values)))
    shape = tuple(values[a].shape)
    kind = rng.choice(["unary", "unary", "binary", "binary", "sum", "view"])
    if kind == "unary":
        op = UNARY[rng.choice(list(UNARY))]
        return lambda v: op(v[a])
    if kind == "binary":
        b = int(rng.integers(len(values)))
        try:
            np.broadcast_shapes(shape, tuple(values[b].shape))
        except ValueError:
            return None
        op = BINARY[rng.choice(list(BINARY))]
        return lambda v: op(v[a], v[b])
    if not shape:
        return None
    if kind == "sum":
        dims = tuple(sorted(rng.choice(len(shape), rng.integers(1, len(shape) + 1), False)))
        keepdim = bool(rng.random() < 0.5)
        return lambda v: v[a].sum(dim=[int(d) for d in dims], keepdim=keepdim)
    view = rng.choice(["transpose", "flatten", "expand", "unsqueeze"])
    if view == "transpose" and len(shape) >= 2:
        return lambda v: v[a].transpose(0, -1)
    if view == "flatten":
        return lambda v: v[a].reshape(-1)
    if view == "expand":
        return lambda v: v[a].unsqueeze(0).expand(2, *shape)
    return lambda v: v[a].unsqueeze(-1)


def random_graph_cases(backend: Backend) -> list[tuple[int, str]]:
    """One dtype per seed, taking turns among the float dtypes the backend claims."""
    dtypes = float_dtypes(backend)
    return [(seed, dtypes[seed % len(dtypes)]) for seed in SEEDS] if dtypes else []


@pytest.mark.backend_cases("seed, dtype", random_graph_cases)
def test_random_program(backend: Backend, seed: int, dtype: str):
    fn, inputs = random_program(seed, minitorch.dtype.get_dtype(dtype))
    graph_module = make_fx(fn)(*inputs)
    for node in graph_module.graph.nodes:  # the generator uses only ops that lower to loops
        assert node.op != "call_function" or extern_reason(node) is None, extern_reason(node)
    program = lower_graph(graph_module.graph)
    arrays = {buffer.name: x.numpy() for buffer, x in zip(program.inputs, inputs, strict=True)}
    expected = run_reference(program, arrays)
    got = run_backend(backend, program, arrays, expected)
    assert_agrees_loosely(got, expected, RTOL[dtype], str(program))


def assert_agrees_loosely(got: dict, want: dict, rtol: float, program: str) -> None:
    """Equal NaNs and infinities; finite values within rtol of the largest finite value."""
    for name, w in want.items():
        g = got[name]
        finite = np.isfinite(w)
        scale = max(1.0, float(np.abs(w[finite]).max(initial=0.0)))
        ulps = np.zeros(w.shape)  # NaN and inf must match exactly
        with np.errstate(divide="ignore", over="ignore"):
            ulps[finite] = rtol * scale / np.spacing(np.abs(w[finite])).astype(np.float64)
        try:
            assert_agrees({name: g}, {name: w}, ulps)
        except AssertionError as error:
            raise AssertionError(f"{error}\nin the program\n{program}") from None
