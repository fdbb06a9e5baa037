"""Stand-in fx graphs for the IR tests, built alongside their numpy answers.

`GraphBuilder` makes nodes shaped like torch.fx's (op, name, target, args, kwargs, meta['val'])
and computes every node's value with numpy as it goes, so each graph comes with the answer
the IR must reproduce:

    g = GraphBuilder()
    x = g.placeholder("x", np.ones((2, 3), np.float32))
    g.output(g.call("sin", x))
    outputs = run(g)          # lower, schedule, interpret; compared with g.expected()
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ir.interpreter import run_reference
from ir.lowering import lower_graph
from ir.nodes import LoweredProgram
from ir.scheduler import FusedKernel, schedule, verify
from minitorch.dtype import DType, from_numpy_dtype
from minitorch.ops import OPS


@dataclass(frozen=True)
class Meta:
    """Stands in for meta['val']: shape, dtype and strides in elements."""

    shape: tuple[int, ...]
    dtype: DType
    stride: tuple[int, ...]


@dataclass(eq=False)
class Node:
    """A torch.fx-like node; hashed by identity like fx's."""

    op: str
    name: str
    target: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"%{self.name}"


def _sum(a: np.ndarray, dim: Any = None, keepdim: bool = False) -> np.ndarray:
    axis = None if dim is None else tuple(d % max(a.ndim, 1) for d in dim)
    return np.asarray(np.sum(a, axis=axis, keepdims=keepdim))


def _extreme(find):
    """amax, amin: numpy's over a tuple of dims (None: all)."""

    def reduce(a: np.ndarray, dim: Any = None, keepdim: bool = False) -> np.ndarray:
        axis = None if dim is None else tuple(d % max(a.ndim, 1) for d in dim)
        return np.asarray(find(a, axis=axis, keepdims=keepdim))

    return reduce


def _position(find):
    """argmax, argmin: over one dim, or of the flattened array (dim=None)."""

    def reduce(a: np.ndarray, dim: int | None = None, keepdim: bool = False) -> np.ndarray:
        if dim is None:
            return np.asarray(find(a.reshape(-1))).reshape((1,) * a.ndim if keepdim else ())
        return np.asarray(find(a, axis=dim, keepdims=keepdim))

    return reduce


def _erf(a: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(a).astype(a.dtype)


def _sigmoid(a: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # e^-x = inf for x < -88 (float32) gives 0, as it should
        return (1 / (1 + np.exp(-a))).astype(a.dtype)


def _to_copy(a: np.ndarray, dtype: DType | None = None, device: Any = None) -> np.ndarray:
    return a.astype(dtype.np)


NUMPY = {  # op name -> what it means, in numpy (the reference for every test)
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.true_divide,
    "neg": np.negative,
    "pow": np.power,
    "sin": np.sin,
    "cos": np.cos,
    "exp": np.exp,
    "log": np.log,
    "abs": np.abs,
    "tanh": np.tanh,
    "sigmoid": _sigmoid,
    "erf": _erf,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "where": np.where,
    "to_copy": _to_copy,
    "sum": _sum,
    "amax": _extreme(np.amax),
    "amin": _extreme(np.amin),
    "argmax": _position(np.argmax),
    "argmin": _position(np.argmin),
    "expand": np.broadcast_to,
    "reshape": np.reshape,
}


class GraphBuilder:
    """Builds a graph node by node, evaluating each node with numpy as it is added."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.value: dict[Node, np.ndarray] = {}  # node -> its numpy value
        self.inputs: list[np.ndarray] = []

    def placeholder(self, name: str, array: np.ndarray) -> Node:
        node = self._add(Node("placeholder", name, name), array)
        self.inputs.append(array)
        return node

    def call(self, op: str, *args: Any, **kwargs: Any) -> Node:
        values = [self.value[a] if isinstance(a, Node) else a for a in args]
        result = np.asarray(NUMPY[op](*values, **kwargs))
        name = op if not any(n.name == op for n in self.nodes) else f"{op}_{len(self.nodes)}"
        return self._add(Node("call_function", name, OPS[op], tuple(args), kwargs), result)

    def output(self, *results: Node) -> None:
        self.nodes.append(Node("output", "output", "output", (tuple(results),)))

    def expected(self) -> list[np.ndarray]:
        return [self.value[n] for n in self.nodes[-1].args[0]]

    def _add(self, node: Node, value: np.ndarray) -> Node:
        strides = tuple(b // value.itemsize for b in value.strides)
        node.meta["val"] = Meta(value.shape, from_numpy_dtype(value.dtype), strides)
        self.nodes.append(node)
        self.value[node] = value
        return node


def lower_and_schedule(g: GraphBuilder) -> tuple[LoweredProgram, list[FusedKernel]]:
    program = lower_graph(g)
    return program, schedule(program)


def check(g: GraphBuilder, rtol: float = 1e-6, atol: float = 1e-6) -> list[FusedKernel]:
    """Lower and schedule `g`; fused and unfused runs must both match numpy. Returns the kernels."""
    program, kernels = lower_and_schedule(g)
    verify(program, kernels)
    verify(program, schedule(program, fuse=False))
    for ks in (kernels, None):
        outputs = run_reference(program, ks, g.inputs)
        for got, want in zip(outputs, g.expected(), strict=True):
            assert got.shape == want.shape
            assert got.dtype == want.dtype, (got.dtype, want.dtype)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    return kernels
