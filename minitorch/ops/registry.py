"""`OpDef`: one row of the op table, and the table itself.

[Note: the op table]
Every op minitorch knows is one `OpDef`, and every stage of the pipeline reads the same row:

    stage               reads                     example for sin
    ------------------  ------------------------  ------------------------------------
    eager               impl(xp, *arrays)         xp.sin(a)
    tracing (fake/AOT)  meta(*args) -> TensorMeta same shape, float dtype
    autograd            backward(grad, out, *a)   grad * cos(x)   (in minitorch ops)
    AOT autograd        decomposition             (none: sin is a primitive)
    the compiler        lowering                  "lowered": a loop in ir/lowering.py LOWERINGS
    loop-level IR       LOWERINGS[op]             ops.sin(load(x))

`lowering` says how the compiler handles the op: "lowered" (ir/lowering.py has its loop-IR
lowering, keyed by this row), "extern" (an extern kernel: its eager `impl` runs between
compiled segments, [Note: extern kernels] in ir/segments.py), or "decomposed" (a composite:
every stage after tracing sees its decomposition). tests/test_op_coverage.py holds every row to
what it says.

A *primitive* has an `impl`; a *composite* has only a `decomposition`, written in other ops,
so every later stage sees primitives only. Derivatives are written with the ops themselves, so
the same formula runs eagerly in `backward()` and is recorded into a graph by AOT autograd.

[Note: adding an op from a plugin]
The table's own rows are written in its family modules (pointwise.py, ...) and docs/primitives.md
says why each primitive is one. An op added from outside, by a plugin (the course's first
assignment, docs/assignments.md), calls one helper per stage instead of editing those files:

    register_op(row, why=...)                  the row, `minitorch.ops.<name>`, and for a
                                               primitive its primitives line (`why`)
    minitorch.functional.registration          the public function, the Tensor method and
        .register_function(fn, ...)            `nn.functional.<name>`
    minitorch.ops.samples.register_samples     its samples, with a numpy reference
    ir.lowering.register_lowering(row, fn)     its loop-IR lowering, for a "lowered" row
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minitorch.dispatch import dispatch
from minitorch.dtype import DType


@dataclass(frozen=True)
class TensorMeta:
    """What a tensor looks like without its data: the result of a shape/dtype rule."""

    shape: tuple[int, ...]
    dtype: DType

    @property
    def ndim(self) -> int:
        return len(self.shape)


@dataclass(frozen=True, eq=False)
class OpDef:
    """One op of the table. Calling it dispatches: `minitorch.ops.sin(x)`."""

    name: str  # 'sin'; also its name in graphs: minitorch.ops.sin
    kind: str  # 'pointwise' 'reduction' 'view' 'linalg' 'gather' 'scatter' 'window' 'random'
    #            'factory' (no tensor input) or 'composite'; 'random' ops are never merged by
    #            common-subexpression passes
    meta: Callable[..., TensorMeta] | None  # shape/dtype rule; validates and names bad input
    impl: Callable[..., Any] | None = None  # eager kernel over arrays: impl(xp, *args, **kw)
    backward: Callable[..., tuple] | None = None  # grads of each arg, written in minitorch ops
    decomposition: Callable[..., Any] | None = None  # composites only: the op in primitives
    lowering: str = "extern"  # "lowered", "extern", or (composites) "decomposed"
    # How a pointwise result is laid out in memory: like its tensor operands ("operands",
    # numpy's order 'K': [Note: the layout of pointwise results] in minitorch/fake.py), like
    # its first argument alone ("first"), or "row_major" whatever they are.
    layout: str = "operands"
    # A composite whose PyTorch derivative reads its output (relu, softmax, sqrt, ...): writing
    # that output in place before backward() is then PyTorch's error, though the primitives it
    # decomposes into read other values ([Note: outputs PyTorch saves] in autograd/graph.py).
    saves_output: bool = False

    @property
    def is_primitive(self) -> bool:
        return self.impl is not None

    # Calling an op dispatches it: `ops.sin(x)` is `dispatch(ops.sin, x)`.
    __call__ = dispatch

    def __repr__(self) -> str:
        return f"minitorch.ops.{self.name}"

    # An op is one row of the table, compared by identity (`node.target is ops.add`): copies
    # of a graph or a module share it.
    def __copy__(self) -> OpDef:
        return self

    def __deepcopy__(self, memo: dict) -> OpDef:
        return self


OPS: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    """Add a row to the table; names are unique."""
    assert op.name not in OPS, f"op {op.name!r} registered twice"
    assert (op.impl is None) != (op.decomposition is None), op.name
    if op.decomposition is not None:
        object.__setattr__(op, "lowering", "decomposed")  # frozen: set once, at registration
    assert op.lowering in ("lowered", "extern", "decomposed"), (op.name, op.lowering)
    OPS[op.name] = op
    return op


# A primitive added by register_op -> why it is not a composite: its docs/primitives.md line.
WHY_PRIMITIVE: dict[str, str] = {}


# The rows plugins added, by name (the compiled-graph cache keys on their sources).
ADDED: dict[str, OpDef] = {}


def register_op(op: OpDef, why: str = "") -> OpDef:
    """Add a row from outside the table's modules: also `minitorch.ops.<name>`, by which graphs
    name it, and for a primitive `why` it is not a composite ([Note: adding an op from a
    plugin]).

        softplus = register_op(OpDef("softplus", "pointwise", meta, impl=..., backward=...,
                                     lowering="lowered"), why="its derivative is sigmoid")
    """
    import minitorch.ops

    if op.impl is not None and not why.strip():
        raise ValueError(f"{op.name}: a primitive says why it is not a composite (why=...)")
    if hasattr(minitorch.ops, op.name):
        raise ValueError(f"minitorch.ops.{op.name} exists already")
    register(op)
    ADDED[op.name] = op
    setattr(minitorch.ops, op.name, op)
    if op.impl is not None:
        WHY_PRIMITIVE[op.name] = why.strip()
    return op
