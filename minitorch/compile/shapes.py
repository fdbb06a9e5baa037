"""Sizes: which input dims are size symbols, and compiling again for shapes nothing fits.

    binding = SizeBinding.symbolic(inputs, dynamic_dims=[{0}])   # x: (3, 4) -> s0 for dim 0
    binding.bind([x7])      # {'s0': 7} for a (7, 4) x7; None for a (7, 5) one
    SizeBinding.static(inputs).bind([x])   # {} for x of the example's shape, else None

A graph compiled with size symbols (the kernels take s0, s1, ... as arguments, [Note: symbolic
sizes] in ir/symbolic.py) serves every call its binding accepts; a static one serves the
example's shapes (`ShapeSpecific`). `PerShape` is what the driver hands capture for a graph
with dynamic dims: it keeps every version compiled so far and compiles a new one for a call no
version fits. With the `symbolic_sizes` extra off, every version is a static one: one per shape.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ir.indexing import size_symbols
from minitorch.errors import CompileError
from minitorch.tensor import Tensor


@dataclass(frozen=True)
class SizeBinding:
    """For each input, for each dim: the index of its size symbol, or None for a static dim
    (which must equal the example's size)."""

    symbols: tuple[tuple[int | None, ...], ...]
    shapes: tuple[tuple[int, ...], ...]  # the example's shapes

    @classmethod
    def static(cls, inputs: Sequence[Tensor]) -> SizeBinding:
        """Every size static. (Strides need no binding: capture guards them, and a static
        kernel is compiled for the example's strides, so a call that passes the guards has
        them.)"""
        return cls(tuple((None,) * x.ndim for x in inputs), tuple(tuple(x.shape) for x in inputs))

    @classmethod
    def symbolic(cls, inputs: Sequence[Tensor], dynamic_dims: Sequence[set[int]]) -> SizeBinding:
        """A symbol per distinct size among the dynamic dims (equal sizes share one, so that
        the trace still broadcasts them together); sizes 0 and 1 stay static."""
        symbol_of: dict[int, int] = {}
        symbols = []
        for x, dynamic in zip(inputs, dynamic_dims, strict=True):
            symbols.append(
                tuple(
                    symbol_of.setdefault(n, len(symbol_of)) if d in dynamic and n >= 2 else None
                    for d, n in enumerate(x.shape)
                )
            )
        return cls(tuple(symbols), tuple(tuple(x.shape) for x in inputs))

    @functools.cached_property
    def count(self) -> int:
        """How many size symbols there are."""
        return len({s for dims in self.symbols for s in dims if s is not None})

    @functools.cached_property
    def names(self) -> tuple[str, ...]:
        """The size symbols' names, 's0', 's1', ...: what the kernels take."""
        return tuple(symbol.name for symbol in size_symbols(self.count))

    def bind(self, inputs: Sequence[Tensor]) -> dict[str, int] | None:
        """The value of each size symbol for these inputs; None if they do not fit (a static
        dim changed, two dims sharing a symbol differ, or a dynamic size is 0 or 1)."""
        if len(inputs) != len(self.symbols):
            return None
        sizes: dict[str, int] = {}
        for x, dims, example in zip(inputs, self.symbols, self.shapes, strict=True):
            if len(x.shape) != len(dims):
                return None
            for n, symbol, m in zip(x.shape, dims, example, strict=True):
                if symbol is None:
                    if n != m:
                        return None
                elif n < 2 or sizes.setdefault(self.names[symbol], n) != n:
                    return None
        return sizes

    def bind_or_raise(self, inputs: Sequence[Tensor]) -> dict[str, int]:
        sizes = self.bind(inputs)
        if sizes is None:
            shapes = [tuple(x.shape) for x in inputs]
            raise CompileError(f"compiled graph for shapes like {list(self.shapes)} got {shapes}")
        return sizes


class Version(Protocol):
    """One compiled version of a graph: which calls it serves, and running it."""

    def bind(self, inputs: Sequence[Tensor]) -> dict[str, int] | None: ...

    def bind_or_raise(self, inputs: Sequence[Tensor]) -> dict[str, int]: ...

    def run(self, inputs: Sequence[Tensor], sizes: dict[str, int]) -> tuple: ...


class Bound:
    """A version's `bind`: which calls its `binding` serves."""

    binding: SizeBinding

    def bind(self, inputs: Sequence[Tensor]) -> dict[str, int] | None:
        return self.binding.bind(inputs)

    def bind_or_raise(self, inputs: Sequence[Tensor]) -> dict[str, int]:
        return self.binding.bind_or_raise(inputs)


@dataclass
class ShapeSpecific(Bound):
    """A callable compiled for the inputs' exact shapes (AOT autograd traced at them)."""

    fn: Callable
    binding: SizeBinding

    def __call__(self, *inputs: Tensor) -> tuple:
        return self.fn(*inputs)

    def run(self, inputs: Sequence[Tensor], sizes: dict[str, int]) -> tuple:
        return self.fn(*inputs)


class PerShape:
    """Runs each call with the first version that fits it, compiling a new version when none
    does: `compile_version(inputs)` gives one for (at least) those inputs' shapes.

        f = PerShape(compile_version, [x3])   # compiled for x3 now
        f(x5)         # the first version if it is size-generic, else compiled again for x5
    """

    def __init__(self, compile_version: Callable[[list], Version], example_inputs: list) -> None:
        self.compile_version = compile_version
        self.versions: list[Version] = [compile_version(example_inputs)]
        # Threads may call at once: one compiles at a time, and `versions` is replaced, never
        # appended to, so a call walks a consistent list without taking the lock.
        self._compiling = threading.Lock()

    def __call__(self, *inputs: Tensor) -> tuple:
        fit = self._fit(self.versions, inputs)
        if fit is None:
            with self._compiling:
                fit = self._fit(self.versions, inputs)  # compiled while this thread waited?
                if fit is None:
                    # NOTE: a size-generic version may not fit because two dims that shared a
                    # symbol (equal sizes in its example) now differ; one compiled from these
                    # inputs gives each a symbol.
                    version = self.compile_version(list(inputs))
                    self.versions = [*self.versions, version]
                    fit = version, version.bind_or_raise(inputs)
        version, sizes = fit
        return version.run(inputs, sizes)  # bound once: not again inside the call

    @staticmethod
    def _fit(
        versions: list[Version], inputs: Sequence[Tensor]
    ) -> tuple[Version, dict[str, int]] | None:
        """The first version that fits `inputs`, with its size symbols' values."""
        for version in versions:
            sizes = version.bind(inputs)
            if sizes is not None:
                return version, sizes
        return None
