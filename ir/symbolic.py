"""Symbolic sizes: loop IR whose ranges, layouts and index arithmetic mention size symbols.

[Note: symbolic sizes]
A kernel that takes a dynamic dim's size as an argument needs loop IR in which that size is a
symbol `s0`, not a number: `for i0 in range(s0)`, `load(x, s1*i0 + i1)`. Our fake tensors have
concrete sizes, so AOT tracing, lowering and the scheduler all compute with ints. Rather than
teach every one of them symbols, we trace at *sentinel* sizes and read the symbols back:

1. each symbol gets a large prime as its size (s0 = 10007, s1 = 10009, ...); dims of the
   example that have the same size share a symbol, so `x + y` still broadcasts;
2. tracing, lowering and scheduling run unchanged, on ints;
3. every int the result holds (ranges, layout sizes and strides, the constants inside index
   expressions) is factored: 40028 = 4 * 10007 becomes `4*s0`, 7 stays 7 (`symbolize_int`).

Sizes only ever combine by `*`, `//` and `%` in the IR we lower (no cat or slicing, whose
offsets would be sums), so every size-derived int is such a monomial. Nothing else is trusted:
the caller does it all twice, with different primes, and uses the result only if both give
the *same* symbolic program. A size baked in somewhere we do not translate (a mean's `1/n`
as a float constant) differs between the two and sends the caller back to one compile per
shape. Exact divisibility by a large prime cannot happen by accident in a coefficient, so
the simplifications the ints allowed (`(4*s0*i0 + i1)//s0`) hold for every value of s0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ir.indexing import Add, Const, Expr, FloorDiv, Mod, Mul, Var, size_symbols
from ir.nodes import ComputedBuffer, InputBuffer, Layout, LoweredProgram, Pointwise, Reduction
from ir.ops_handler import OpsHandler, WrapperHandler, current_ops_handler, set_ops_handler
from ir.scheduler import FusedKernel, Loop


def sentinel_primes(count: int, start: int) -> tuple[int, ...]:
    """`count` primes from `start` up: the sizes the symbols take while tracing.

    sentinel_primes(2, 10000) == (10007, 10009)
    """
    primes: list[int] = []
    n = start
    while len(primes) < count:
        n += 1
        if all(n % d for d in range(2, int(n**0.5) + 1)):
            primes.append(n)
    return tuple(primes)


class Symbolizer:
    """Turns ints (and Exprs holding them) traced at `primes` into Exprs over s0, s1, ...

    Symbolizer((10007,)).int(40028) is the Expr `4*s0`; .int(7) is 7.
    """

    def __init__(self, primes: Sequence[int]) -> None:
        self.primes = tuple(primes)
        self.symbols = size_symbols(len(primes))

    def int(self, value: int) -> int | Expr:
        """`value` as coefficient * product of symbols, or the int itself if no prime divides it."""
        rest, result = abs(value), None
        for prime, symbol in zip(self.primes, self.symbols, strict=True):
            while rest and rest % prime == 0:
                rest //= prime
                result = symbol if result is None else result * symbol
        if result is None:
            return value
        return result * (rest if value > 0 else -rest)

    def expr(self, e: Expr) -> Expr:
        """`e` with every Const symbolized, rebuilt (and so re-simplified) with the operators."""
        if isinstance(e, Const):
            value = self.int(e.value)
            return value if isinstance(value, Expr) else e
        if isinstance(e, Var):
            return e
        if isinstance(e, Add):
            total: Expr = Const(0)
            for term in e.terms:
                total = total + self.expr(term)
            return total
        if isinstance(e, Mul):
            product: Expr = Const(1)
            for factor in e.factors:
                product = product * self.expr(factor)
            return product
        if isinstance(e, FloorDiv):
            return self.expr(e.numerator) // self.expr(e.denominator)
        if isinstance(e, Mod):
            return self.expr(e.numerator) % self.expr(e.denominator)
        raise TypeError(f"not an index expression: {e!r}")

    def sizes(self, values: Sequence[int]) -> tuple[int | Expr, ...]:
        return tuple(self.int(v) for v in values)

    def layout(self, layout: Layout) -> Layout:
        return Layout(
            self.sizes(layout.size),
            self.sizes(layout.stride),
            layout.dtype,
            self.int(layout.offset),
        )

    def inner_fn(self, inner_fn: Callable[..., Any]) -> Callable[..., Any]:
        """The body, with its loads' indices symbolized on the way to whatever handler runs it."""

        def symbolic_inner_fn(*index: Any) -> Any:
            with set_ops_handler(_SymbolizingLoads(current_ops_handler(), self)):
                return inner_fn(*index)

        return symbolic_inner_fn

    def buffer(self, buffer: ComputedBuffer) -> ComputedBuffer:
        data = buffer.data
        if isinstance(data, Pointwise):
            new = Pointwise(data.dtype, self.sizes(data.ranges), self.inner_fn(data.inner_fn))
        else:
            new = Reduction(
                data.dtype,
                self.sizes(data.ranges),
                self.sizes(data.reduction_ranges),
                data.reduction_type,
                self.inner_fn(data.inner_fn),
            )
        return replace(buffer, layout=self.layout(buffer.layout), data=new)  # origins kept

    def program(self, program: LoweredProgram) -> LoweredProgram:
        inputs = tuple(InputBuffer(b.name, self.layout(b.layout)) for b in program.inputs)
        return LoweredProgram(
            inputs, tuple(self.buffer(b) for b in program.buffers), program.outputs
        )

    def kernel(self, kernel: FusedKernel) -> FusedKernel:
        loops = tuple(
            Loop(self.sizes(loop.ranges), tuple(self.buffer(b) for b in loop.nodes))
            for loop in kernel.loops
        )
        return FusedKernel(
            kernel.name,
            loops,
            self.sizes(kernel.ranges),
            self.sizes(kernel.reduction_ranges),
            kernel.reads,
            kernel.writes,
        )


class _SymbolizingLoads(WrapperHandler):
    """An ops handler in front of another: loads get symbolic indices, the rest passes through."""

    def __init__(self, inner: OpsHandler, symbolizer: Symbolizer) -> None:
        super().__init__(inner)
        self.symbolizer = symbolizer

    def load(self, name: str, index: Expr) -> Any:
        return self.inner.load(name, self.symbolizer.expr(index))
