"""The numpy source backend: each kernel becomes a Python function of whole-array statements.

[Note: the numpy source backend]
The worked answer to [Note: writing a backend] (codegen/backend.py): ir/interpreter.py's way of
running a kernel, as source. Each loop variable is an `np.arange` shaped to broadcast along its
own axis, so `4*i0 + r0` is every offset, a load one gather, and one statement one op.
`(x.sin() * 2).sum(1)` of a (3, 4) x compiles to (`print(compiled.source)`)

    def kernel0(arg0_1, arg0_1_start, buf0, buf0_start):
        r0 = np.arange(4).reshape(-1, 1)
        i0 = np.arange(3)
        # buf0: from sin, mul, sum_1
        tmp0 = arg0_1[arg0_1_start + 4*i0 + r0]
        tmp1 = np.sin(tmp0)
        tmp2 = tmp1 * np.float32(2)
        tmp3 = np.add.reduce(np.broadcast_to(tmp2, [4, 3]), axis=(0,), dtype=np.float32, initial=0)
        buf0[np.broadcast_to(buf0_start + i0, [3])] = np.broadcast_to(tmp3, [3])

Each buffer's code starts with a comment naming the fx nodes it computes, and their source lines
when the graph was captured from a program ([Note: provenance] in tracer/fx/provenance.py). A
constant is a numpy scalar of its dtype (float32 stays float32). Reduction variables take the
*leading* axes: numpy broadcasts from the right, so reducing them away leaves an array shaped
like `ranges`. A buffer is a 1-d view of its memory and the place of its element 0 there.
"""

from __future__ import annotations

import linecache
import math
import re

import numpy as np

from codegen.backend import Backend, CompiledKernel
from ir.indexing import Expr, Var, index_vars
from ir.interpreter import checked_index, flat_view, highest, lowest
from ir.nodes import ComputedBuffer, Pointwise
from ir.ops_handler import OpsHandler, set_ops_handler
from ir.scheduler import FusedKernel, Loop, node_index, store_index
from minitorch import counter_rng
from minitorch.dtype import DType
from minitorch.errors import CompileError
from minitorch.ops import pointwise_kernels

# reduction -> its ufunc (maximum: NaN wins), and its value over no terms for a numpy dtype
# (the interpreter's identities: -inf, an integer's minimum, False for bools' `any`)
_REDUCE = {
    "sum": ("np.add.reduce", lambda dtype: 0),
    "max": ("np.maximum.reduce", lowest),
    "min": ("np.minimum.reduce", highest),
}
# arg reduction -> the function that finds its position (the first extreme, or the first NaN)
_ARG_REDUCE = {"argmax": "np.argmax", "argmin": "np.argmin"}
# Names the generated function gives its own variables; no buffer may be called one of them.
_OUR_NAMES = re.compile(r"np|kernels|counter_rng|checked_index|(tmp|i|r|s)\d+")


class NumpySourceHandler(OpsHandler):
    """An ops handler whose values are Python expressions; each new op becomes one line. It
    implements the core ops; every other op of ir/op_table.py runs as its decomposition."""

    def __init__(self) -> None:
        self.lines: list[str] = []  # the function's body, in order
        self.registers: dict[str, str] = {}  # node computed in this kernel -> its value
        self._name_of: dict[str, str] = {}  # expression -> the tmp it was given

    def line(self, expression: str) -> str:
        """The name of `tmpN = expression`, written once (an inlined load is read once)."""
        if expression not in self._name_of:
            self._name_of[expression] = f"tmp{len(self._name_of)}"
            self.lines.append(f"{self._name_of[expression]} = {expression}")
        return self._name_of[expression]

    def load(self, name: str, index: Expr) -> str:
        if name in self.registers:  # computed in this kernel, where it stores (the scheduler)
            return self.registers[name]
        return self.line(f"{name}[{Var(f'{name}_start') + index}]")  # in the flat view

    def constant(self, value: float | int, dtype: DType) -> str:
        return f"np.{dtype.np.name}({_literal(value)})"

    def constant_like(self, value: float | int, like: str) -> str:
        return self.line(f"np.asarray({_literal(value)}, {like}.dtype)")

    def to_dtype(self, a: str, dtype: DType) -> str:
        return self.line(f"{a}.astype(np.{dtype.np.name})")

    def add(self, a: str, b: str) -> str:
        return self.line(f"{a} + {b}")

    def mul(self, a: str, b: str) -> str:
        return self.line(f"{a} * {b}")

    def div(self, a: str, b: str) -> str:
        return self.line(f"{a} / {b}")

    def pow(self, a: str, exponent: float | int) -> str:
        # A Python number keeps a's dtype (numpy's weak scalars): float32 ** 2 is float32.
        # An integral exponent is written as an int, which an int32 base keeps too (2.0 would
        # make it float64).
        integral = math.isfinite(exponent) and float(exponent).is_integer()
        return self.line(f"np.power({a}, {_literal(int(exponent) if integral else exponent)})")

    def sin(self, a: str) -> str:
        return self.line(f"np.sin({a})")

    def cos(self, a: str) -> str:
        return self.line(f"np.cos({a})")

    def exp(self, a: str) -> str:
        return self.line(f"np.exp({a})")

    def log(self, a: str) -> str:
        return self.line(f"np.log({a})")

    def abs(self, a: str) -> str:
        return self.line(f"np.abs({a})")

    def erf(self, a: str) -> str:  # eager mode's kernel, as the interpreter has it
        return self.line(f"kernels.erf(np, {a}).astype({a}.dtype)")

    def eq(self, a: str, b: str) -> str:
        return self.line(f"{a} == {b}")

    def lt(self, a: str, b: str) -> str:
        return self.line(f"{a} < {b}")

    def le(self, a: str, b: str) -> str:
        return self.line(f"{a} <= {b}")

    def where(self, condition: str, a: str, b: str) -> str:
        return self.line(f"np.where({condition}, {a}, {b})")

    def index_expr(self, expr: Expr, dtype: DType) -> str:
        return self.line(f"np.asarray({expr}, np.{dtype.np.name})")

    def indirect_indexing(self, value: str, size: int, wrap_negative: bool) -> Expr:
        """A variable holding the checked indices (the interpreter's checked_index)."""
        name = self.line(f"checked_index({value}, {size}, {wrap_negative})")
        return Var(name)

    def rand(self, seed: str, counter: str) -> str:
        return self.line(f"counter_rng.uniform(np, {seed}, {counter})")


def generate_source(kernel: FusedKernel, sizes: tuple[str, ...] = ()) -> str:
    """The Python source of `kernel`: `def kernel0(x, x_start, ..., s0):`, one line per op."""
    names = kernel.reads + kernel.writes
    for name in names:
        if not name.isidentifier() or _OUR_NAMES.fullmatch(name):
            raise CompileError(f"{kernel.name}: buffer {name!r} cannot be a Python variable")
    parameters = ", ".join([p for name in names for p in (name, f"{name}_start")] + list(sizes))
    if 0 in kernel.ranges:  # no iterations, nothing to store (an empty output)
        return f"def {kernel.name}({parameters}):\n    pass\n"
    index = index_vars("i", len(kernel.ranges))
    rindex = index_vars("r", len(kernel.reduction_ranges))
    space = kernel.reduction_ranges + kernel.ranges  # reduction axes first: see the Note
    shape = _shape(space)

    handler = NumpySourceHandler()
    for axis, (var, n) in enumerate(zip(rindex + index, space, strict=True)):
        trailing = len(space) - axis - 1  # r0 of (4, 3) is (4, 1): 4 rows, broadcast along 3
        reshape = f".reshape(-1{', 1' * trailing})" if trailing else ""
        handler.lines.append(f"{var} = np.arange({n}){reshape}")
    with set_ops_handler(handler):
        for loop in kernel.loops:
            for node in loop.nodes:
                _emit_node(handler, kernel, loop, node, shape)
            if loop.ranges:  # the loop's elements are gone; its reductions stay, one per row
                for node in loop.nodes:
                    if isinstance(node.data, Pointwise):
                        handler.registers.pop(node.name, None)
    body = "".join(f"\n    {line}" for line in handler.lines)
    return f"def {kernel.name}({parameters}):{body}\n"


def _emit_node(
    handler: NumpySourceHandler, kernel: FusedKernel, loop: Loop, node: ComputedBuffer, shape: str
) -> None:
    """The lines that compute `node` in `loop`, and store it if the kernel writes it."""
    data = node.data
    if node.provenance:  # the fx nodes it computes: [Note: provenance] in tracer/fx/provenance.py
        handler.lines.append(f"# {node.provenance}")
    index = node_index(kernel.ranges, loop.ranges, node)
    rindex = index_vars("r", len(kernel.reduction_ranges))
    axes = tuple(range(len(rindex)))  # the reduction axes lead: see the Note
    empty = 0 in kernel.reduction_ranges  # no terms: the loads of a term may be out of bounds
    if isinstance(data, Pointwise):
        if empty and loop.ranges:
            return  # no elements: nothing to compute or store
        value = data.inner_fn(index)
    elif data.reduction_type in _REDUCE:  # the leading axes of all the terms, folded
        dtype = f"np.{data.dtype.np.name}"
        term = f"np.zeros({shape}, {dtype})" if empty else data.inner_fn(index, rindex)
        reduce, identity = _REDUCE[data.reduction_type]
        terms = f"np.broadcast_to({term}, {shape}), axis={axes}, dtype={dtype}"
        start = _literal(identity(data.dtype.np))
        value = handler.line(f"{reduce}({terms}, initial={start})")
    elif data.reduction_type in _ARG_REDUCE:  # the leading axes, flattened: one axis
        terms = f"np.broadcast_to({data.inner_fn(index, rindex)}, {shape})"
        flat = f"{terms}.reshape({', '.join(['-1', *map(str, kernel.ranges)])})"
        find = _ARG_REDUCE[data.reduction_type]
        value = handler.line(f"{find}({flat}, axis=0).astype(np.int64)")
    else:
        raise CompileError(f"{node.name}: no {data.reduction_type!r} reduction")
    handler.registers[node.name] = value
    if node.name in kernel.writes:
        # one shape for the offsets and the values: an element node's is the whole space
        out = shape if loop.ranges and isinstance(data, Pointwise) else _shape(kernel.ranges)
        at = f"{Var(f'{node.name}_start') + store_index(node, index)}"
        handler.lines.append(
            f"{node.name}[np.broadcast_to({at}, {out})] = np.broadcast_to({value}, {out})"
        )


def _shape(ranges) -> str:
    return f"[{', '.join(str(n) for n in ranges)}]"


class NumpySourceKernel(CompiledKernel):
    """A kernel as a Python function over numpy arrays; `source` is the function's text."""

    def __init__(self, kernel: FusedKernel, source: str, sizes: tuple[str, ...]) -> None:
        self.name = kernel.name
        self.source = source
        self.buffers, self.sizes = kernel.reads + kernel.writes, sizes  # the parameters, in order
        filename = f"<numpy source of {kernel.name}>"  # in linecache: tracebacks show its lines
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = {
            "np": np,
            "kernels": pointwise_kernels,
            "counter_rng": counter_rng,
            "checked_index": checked_index,
        }
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 (code we generated)
        self.function = namespace[kernel.name]

    def __call__(self, buffers: dict[str, np.ndarray], sizes: dict[str, int] | None = None) -> None:
        # each buffer: the memory it spans, and where its element 0 is in it
        arguments = [a for name in self.buffers for a in flat_view(buffers[name])]
        arguments += [(sizes or {})[name] for name in self.sizes]  # a KeyError names a missing one
        with np.errstate(all="ignore"):  # log(0) is -inf, as IEEE arithmetic (and LLVM) has it
            self.function(*arguments)


class NumpySourceBackend(Backend):
    """Compiles each kernel to Python source over numpy, and that source with `exec`."""

    name = "numpy"
    dtypes = frozenset({"float32", "float64", "int32", "int64", "bool"})
    symbolic_sizes = True  # a size is one more argument of the function

    def compile_kernel(self, kernel: FusedKernel, dtypes: dict, sizes: tuple = ()):
        return NumpySourceKernel(kernel, generate_source(kernel, sizes), sizes)


def _literal(value: float | int) -> str:  # repr; but inf and nan are not names in Python
    return repr(value) if math.isfinite(value) else f"float('{value}')"
