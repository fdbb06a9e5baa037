"""The wrapper's code: each compiled graph becomes one straight-line Python function.

[Note: the generated wrapper]
A compiled graph's steps (kernels and extern ops, wrapper.py) could be run by a loop over
them, looking each buffer up in a dict; on a graph of 16 elements that loop *is* the cost of
a call. So, as Inductor does (its "output code"), we write the loop out once, at compile time,
as Python source with every decision already taken, and run that:

    def call(inputs, sizes):
        arg0_1, = inputs
        # segment:  add_9 = graph(arg0_1)  # 1 fused kernel(s)
        arg0_1_array = arg0_1._data
        if (arg0_1_array.shape, arg0_1_array.strides, arg0_1_array.dtype) != ((16,), (4,), ...):
            arg0_1_array = ___as_layout(arg0_1_array, ___input_arg0_1, sizes)
        buf0 = ___empty((16,), ___float32)
        pointers = kernel0_pointers()  # fresh: threads never share one
        ...                            # the kernel's launch: CompiledKernel.call_code
        add_9 = ___tensor(buf0)
        return (add_9,)

- Names are the graph's: a tensor is the fx node's name, an array the loop IR's buffer name
  (`buf0`), so the code reads beside the graph and the loop IR. Objects the code calls are
  bound in its namespace under `___` names, which no graph name takes.
- An input is checked with one tuple comparison against the layout its kernels were compiled
  for; only a mismatch takes the slow path (a contiguous copy, or a CompileError). Capture's
  guards make the mismatch rare: a backward's incoming gradient is the usual one.
- Each stored buffer is allocated where it is first written, with its shape computed at
  compile time; memory planning (ir/memory.py) may give it the memory of a buffer that died
  before (`buf3 = buf0  # reuse`).
- How each kernel is launched is the backend's to write (`CompiledKernel.call_code`): the LLVM
  backend writes out its pointer array, the others are called with a dict.
- With size symbols, the first lines bind them (`s0 = sizes['s0']`) and shapes are written
  as expressions of them (`(s0, 16)`).
- A graph compiled for the GPU allocates on it (`___empty` is cupy's, whose own caching
  allocator plays the part of codegen/allocator.py), its kernels' launches are the CUDA
  backend's ([Note: launching on the GPU] in codegen/cuda/backend.py), and its extern steps
  get cupy-backed tensors, so their eager kernels run on the GPU too (matmul is cuBLAS's):
  nothing in the wrapper moves data between host and device.

`MINITORCH_LOGS=kernels` (and the walkthrough) prints the source after the kernels.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from codegen import allocator
from ir.indexing import Expr
from ir.memory import plan_reuse
from ir.nodes import Layout
from ir.segments import ExternStep
from minitorch import config
from minitorch.device import array_module, module_of
from minitorch.errors import CompileError
from minitorch.tensor import Tensor
from tracer.fx.node import Node, map_arg

if TYPE_CHECKING:
    from codegen.backend import CompiledKernel
    from minitorch.compile.wrapper import KernelStep


class WrapperCode:
    """Builds the source of one graph's `call(inputs, sizes)`, line by line."""

    def __init__(
        self,
        placeholders: Sequence[Node],
        constants: dict[Node, Any],
        symbols: Sequence[str],
        device: str = "cpu",
    ) -> None:
        self.device = device  # where the buffers it allocates live: "cpu" or "cuda"
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = {
            "___tensor": Tensor._from_array,
            "___as_layout": as_layout,
        }
        self.taken = set(symbols) | {"inputs", "sizes", "pointers", "call"}
        self.local_of: dict[Node, str] = {}  # an fx node -> the name holding its value
        # each kernel launched: (the kernel, its buffers' local names, its name in the code)
        self.launches: list[tuple[CompiledKernel, dict[str, str], str]] = []
        for node, value in constants.items():
            self.local_of[node] = self.bind(value, node.name)
        names = [self.local(node.name, node) for node in placeholders]
        if names:
            self.lines.append(f"{', '.join(names)}{',' if len(names) == 1 else ''} = inputs")
        self.lines += [f"{s} = sizes[{s!r}]" for s in symbols]

    def local(self, hint: str, node: Node | None = None) -> str:
        """A fresh local variable named after `hint` (the node holding it, if any)."""
        plain = hint.isidentifier() and not keyword.iskeyword(hint) and hint[:3] != "___"
        name = hint if plain else f"v_{hint}"
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        if node is not None:
            self.local_of[node] = name
        return name

    def bind(self, value: Any, hint: str) -> str:
        """`value` in the namespace under a fresh `___` name."""
        for name, bound in self.namespace.items():
            if bound is value:
                return name
        name = f"___{hint}"
        while name in self.namespace:
            name += "_"
        self.namespace[name] = value
        return name

    def literal(self, value: Any) -> str:
        """Code for an argument: a node's local, a constant's repr or bound name, or nested
        tuples, lists, dicts and slices of them (as `map_arg` walks them)."""
        if isinstance(value, Node):
            return self.local_of[value]
        nodes: list[Node] = []
        map_arg(value, nodes.append)
        if not nodes:
            simple = value is None or type(value) in (bool, int, str)
            if simple or (type(value) is float and np.isfinite(value)):
                return repr(value)
            return self.bind(value, type(value).__name__.lower())
        if isinstance(value, (tuple, list)):
            items = [self.literal(v) for v in value]
            if isinstance(value, list):
                return f"[{', '.join(items)}]"
            if hasattr(value, "_fields"):  # a namedtuple
                return f"{self.bind(type(value), type(value).__name__)}({', '.join(items)})"
            return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
        if isinstance(value, dict):
            items = [f"{k!r}: {self.literal(v)}" for k, v in value.items()]
            return f"{{{', '.join(items)}}}"
        parts = (self.literal(p) for p in (value.start, value.stop, value.step))  # a slice
        return f"{self.bind(slice, 'slice')}({', '.join(parts)})"

    # ---- the steps ------------------------------------------------------------------------

    def kernel_step(self, step: KernelStep, prefix: str) -> None:
        """A segment: check its inputs' layouts, allocate, launch each kernel, wrap outputs."""
        self.lines.append(f"# {step}")
        arrays: dict[str, str] = {}
        for buffer, node, layout in step.inputs:
            arrays[buffer] = self._input(self.local_of[node], buffer, layout)
        reuse = plan_reuse(step.kernel_io, step.program.outputs, step.size_key)
        for kernel, io in zip(step.kernels, step.kernel_io, strict=True):
            for buffer in io[1]:
                arrays[buffer] = self._allocate(
                    prefix + buffer, step.layout(buffer), reuse.get(buffer), arrays
                )
            launch = (
                kernel,
                {b: arrays[b] for b in (*io[0], *io[1])},
                self.local(prefix + kernel.name),
            )
            self.launches.append(launch)
            call = kernel.call_code(*launch[1:])
            for name, value in call.namespace.items():
                if self.namespace.setdefault(name, value) is not value:
                    raise CompileError(f"wrapper code: two objects named {name}")
            self.lines += call.lines
        for node, buffer in step.outputs:
            self.lines.append(f"{self.local(node.name, node)} = ___tensor({arrays[buffer]})")

    def extern_step(self, step: ExternStep) -> None:
        """An extern kernel: the op's eager implementation, called on the values."""
        node = step.node
        args = [self.literal(a) for a in node.args]
        args += [f"{k}={self.literal(v)}" for k, v in node.kwargs.items()]
        target = self.bind(step.kernel or node.target, f"extern_{node.name}")
        call = f"{target}({', '.join(args)})"
        if config.direct_externs and step.kernel is None and self.device == "cpu":
            from minitorch.compile import direct_externs  # NOTE: an extra, imported when on

            call = direct_externs.call(self, node, call)
        self.lines.append(f"{self.local(node.name, node)} = {call}  # {step.reason}")

    def finish(self, results: Sequence[Any]) -> tuple[str, Callable]:
        """The source and the compiled function, returning `results`."""
        self.lines.append(f"return {self.literal(tuple(results))}")
        body = "\n".join(f"    {line}" for line in self.lines)
        source = f"def call(inputs, sizes):\n{body}\n"
        return source, run_source(source, self.namespace)

    # ---- pieces -----------------------------------------------------------------------------

    def _input(self, tensor: str, buffer: str, layout: Layout) -> str:
        array = self.local(f"{buffer}_array")
        itemsize = layout.dtype.np.itemsize
        shape = _shape(layout.size)
        strides = _shape(tuple(s * itemsize for s in layout.stride))
        dtype = self.bind(layout.dtype.np, layout.dtype.name)
        self.lines.append(f"{array} = {tensor}._data")
        self.lines.append(
            f"if ({array}.shape, {array}.strides, {array}.dtype) != ({shape}, {strides}, {dtype}):"
        )
        self.lines.append(
            f"    {array} = ___as_layout({array}, "
            f"{self.bind((buffer, layout), f'input_{buffer}')}, sizes)"
        )
        return array

    def _allocate(
        self, name: str, layout: Layout, reused: str | None, arrays: dict[str, str]
    ) -> str:
        local = self.local(name)
        dtype = self.bind(layout.dtype.np, layout.dtype.name)
        shape = _shape(layout.size)
        if reused is not None:
            old = arrays[reused]
            self.lines.append(f"{local} = {old}  # reuse: {old} is dead by now")
            return local
        static = all(type(n) is int for n in layout.size)
        nbytes = layout.numel * layout.dtype.np.itemsize if static else None
        if self.device != "cpu":
            self.lines.append(f"{local} = ___empty({shape}, {dtype})")
            self.namespace["___empty"] = device_empty
        elif not allocator.pooled(nbytes):
            self.lines.append(f"{local} = ___empty({shape}, {dtype})")
            self.namespace["___empty"] = np.empty
        else:
            self.lines.append(f"{local} = ___pooled({shape}, {dtype})")
            self.namespace["___pooled"] = allocator.empty
        return local


def run_source(source: str, namespace: dict[str, Any]) -> Callable:
    """The function `call` that `source` defines, its names bound as `namespace` says."""
    namespace = dict(namespace)
    exec(compile(source, "<wrapper>", "exec"), namespace)  # noqa: S102 - code we generated
    return namespace["call"]


def _shape(values: Sequence[int | Expr]) -> str:
    """A shape as Python code: `(16,)`, `(s0, 4)`."""
    items = [str(n) for n in values]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def as_layout(array: np.ndarray, input_: tuple[str, Layout], sizes: dict[str, int]) -> np.ndarray:
    """`array` if it has the layout the kernels were compiled for (at these sizes); a
    contiguous copy if that layout was contiguous; otherwise a CompileError (the caller's
    guards should prevent it). The wrapper's slow path: its fast check compares strides
    exactly, where a size-1 dim's stride does not matter."""
    name, layout = input_
    shape = _evaluate(layout.size, sizes)
    if array.shape != shape or array.dtype != layout.dtype.np:
        raise CompileError(
            f"compiled kernel input {name}: expected {layout.dtype.name}"
            f"{list(shape)}, got {array.dtype}{list(array.shape)}"
        )
    strides = tuple(s // array.itemsize for s in array.strides)
    expected = _evaluate(layout.stride, sizes)
    if all(x == y for x, y, n in zip(strides, expected, shape) if n > 1):
        return array
    if expected == Layout.contiguous(shape, layout.dtype).stride:
        return module_of(array).ascontiguousarray(array)
    raise CompileError(
        f"compiled kernel input {name}: compiled for strides {expected}, got {strides}"
    )


def device_empty(shape: tuple[int, ...], dtype: np.dtype):
    """An uninitialised array on the GPU, from cupy's memory pool."""
    return array_module("cuda").empty(shape, dtype)


def _evaluate(values: Sequence[int | Expr], sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(n.evaluate(sizes) if isinstance(n, Expr) else n for n in values)
