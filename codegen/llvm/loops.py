"""Loops, their counters, and index arithmetic on them: plumbing, so that kernel.py reads as
the algorithm.

    with for_range(builder, start, stop, name="i0") as i0:
        ...  # code emitted here runs once per i0 in [start, stop)

emits the loop LLVM's optimizer expects, guarded so that an empty range runs no iteration:

    entry:    %i0.enter = icmp slt i64 %start, %stop
              br i1 %i0.enter, label %i0.body, label %i0.exit
    i0.body:  %i0 = phi i64 [%start, %entry], [%i0.next, <end of the body>]
              ...                                   ; what the with-block emitted
              %i0.next = add nsw i64 %i0, 1
              %i0.again = icmp slt i64 %i0.next, %stop
              br i1 %i0.again, label %i0.body, label %i0.exit
    i0.exit:

and `IndexValue` lets ir/indexing.py's expressions compute with the loop counters.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from llvmlite import ir

from minitorch.errors import CompileError

I64 = ir.IntType(64)


def i64(value: int) -> ir.Constant:
    """An i64 constant."""
    return ir.Constant(I64, value)


@contextmanager
def for_range(
    builder: ir.IRBuilder,
    start: ir.Value | int,
    stop: ir.Value | int,
    name: str = "i",
    step: int = 1,
) -> Iterator[ir.Value]:
    """Emit `for i in range(start, stop, step)` (step > 0); the with-block emits the body,
    given `i` (an i64)."""
    start = i64(start) if isinstance(start, int) else start
    stop = i64(stop) if isinstance(stop, int) else stop
    body = builder.append_basic_block(f"{name}.body")
    exit_ = builder.append_basic_block(f"{name}.exit")
    builder.cbranch(builder.icmp_signed("<", start, stop, name=f"{name}.enter"), body, exit_)
    preheader = builder.block

    builder.position_at_end(body)
    i = builder.phi(I64, name=name)
    i.add_incoming(start, preheader)
    yield i
    # NOTE: the body may have added blocks (an inner loop); the back edge leaves from the last.
    # nsw (no signed wrap) tells the vectorizer the counter cannot overflow.
    following = builder.add(i, i64(step), name=f"{name}.next", flags=["nsw"])
    i.add_incoming(following, builder.block)
    again = builder.icmp_signed("<", following, stop, name=f"{name}.again")
    builder.cbranch(again, body, exit_)
    builder.position_at_end(exit_)


@contextmanager
def for_nest(
    builder: ir.IRBuilder, stops: tuple[int | ir.Value, ...], names: tuple[str, ...]
) -> Iterator[tuple[ir.Value, ...]]:
    """Emit loops over product(range(n) for n in stops), outermost first; gives the indices.

    A stop is an int, or an i64 register (a size the kernel takes as an argument)."""
    if not stops:
        yield ()
        return
    with for_range(builder, 0, stops[0], name=names[0]) as first:
        with for_nest(builder, stops[1:], names[1:]) as rest:
            yield (first, *rest)


def unroll_by(counter: ir.PhiInstr, times: int) -> None:
    """Ask LLVM to unroll the loop of `counter` (a for_range loop, already closed) `times`
    times, rather than as its own heuristics choose: the hint `llvm.loop.unroll.count`, in the
    loop's metadata node on its back edge.

        br i1 %"r0.again", label %"r0.body", label %"r0.exit", !llvm.loop !1
        !0 = !{ !"llvm.loop.unroll.count", i32 4 }
        !1 = distinct !{ !1, !0 }
    """
    back_edge = counter.incomings[-1][1].terminator  # the branch from the body's last block
    module = back_edge.module
    hint = module.add_metadata(["llvm.loop.unroll.count", ir.Constant(ir.IntType(32), times)])
    back_edge.set_metadata("llvm.loop", _LoopID(module, [hint], name=str(len(module.metadata))))


class _LoopID(ir.MDValue):
    """A loop's metadata node. LLVM reads a loop's hints only from a node whose first operand
    is the node itself (which keeps two loops with the same hints apart), so it prints as
    `distinct !{ !self, hints... }`; llvmlite's own nodes cannot refer to themselves."""

    def descr(self, buf: list[str]) -> None:
        operands = ", ".join(node.get_reference() for node in (self, *self.operands))
        buf += (f"distinct !{{ {operands} }}", "\n")


def entry_alloca(builder: ir.IRBuilder, ir_type: ir.Type, name: str) -> ir.AllocaInstr:
    """A stack slot in the function's entry block, where the optimizer turns it into a register.

    Loop-carried values (a reduction's accumulator) are easiest to write as a variable that
    each iteration loads and stores; LLVM's SROA pass rewrites such a slot into phi nodes,
    provided it is allocated once, in the entry block, not inside a loop.
    """
    with builder.goto_entry_block():
        return builder.alloca(ir_type, name=name)


class IndexValue:
    """An i64 register that index Exprs compute with, following Python's integer semantics.

        (Var("i0") * 4 + Var("i1")).evaluate({"i0": IndexValue(b, i0), "i1": IndexValue(b, i1)})

    emits `mul i64 %i0, 4` and `add i64 ..., %i1`. `//` and `%` round towards minus infinity
    like Python's, where LLVM's sdiv and srem round towards zero.
    """

    def __init__(self, builder: ir.IRBuilder, value: ir.Value) -> None:
        self.builder = builder
        self.value = value  # an i64 ir.Value

    def _operand(self, other: IndexValue | int) -> ir.Value:
        return other.value if isinstance(other, IndexValue) else i64(other)

    def _wrap(self, value: ir.Value) -> IndexValue:
        return IndexValue(self.builder, value)

    def __add__(self, other: IndexValue | int) -> IndexValue:
        return self._wrap(self.builder.add(self.value, self._operand(other)))

    def __radd__(self, other: int) -> IndexValue:
        return self._wrap(self.builder.add(i64(other), self.value))

    def __sub__(self, other: IndexValue | int) -> IndexValue:
        return self._wrap(self.builder.sub(self.value, self._operand(other)))

    def __rsub__(self, other: int) -> IndexValue:
        return self._wrap(self.builder.sub(i64(other), self.value))

    def __mul__(self, other: IndexValue | int) -> IndexValue:
        return self._wrap(self.builder.mul(self.value, self._operand(other)))

    def __rmul__(self, other: int) -> IndexValue:
        return self._wrap(self.builder.mul(i64(other), self.value))

    def __neg__(self) -> IndexValue:
        return self._wrap(self.builder.neg(self.value))

    def __floordiv__(self, other: IndexValue | int) -> IndexValue:
        return self._wrap(_floor_divide(self.builder, self.value, self._divisor(other))[0])

    def __rfloordiv__(self, other: int) -> IndexValue:
        return self._wrap(_floor_divide(self.builder, i64(other), self.value)[0])

    def __mod__(self, other: IndexValue | int) -> IndexValue:
        return self._wrap(_floor_divide(self.builder, self.value, self._divisor(other))[1])

    def __rmod__(self, other: int) -> IndexValue:
        return self._wrap(_floor_divide(self.builder, i64(other), self.value)[1])

    def _divisor(self, other: IndexValue | int) -> ir.Value:
        if isinstance(other, int) and other == 0:
            raise CompileError("an index expression divides by zero")
        return self._operand(other)


def _floor_divide(builder: ir.IRBuilder, a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(a // b, a % b) with Python's rounding: -7 // 2 == -4 and -7 % 2 == 1."""
    quotient = builder.sdiv(a, b)  # rounds towards zero: -7 sdiv 2 = -3
    remainder = builder.srem(a, b)  # has a's sign: -7 srem 2 = -1
    # Rounding towards zero and towards -inf differ when the division is inexact and the
    # true quotient is negative, i.e. the remainder and the divisor have opposite signs.
    opposite_signs = builder.icmp_signed("<", builder.xor(remainder, b), i64(0))
    inexact = builder.icmp_signed("!=", remainder, i64(0))
    adjust = builder.and_(inexact, opposite_signs)
    floor_quotient = builder.sub(quotient, builder.zext(adjust, I64))
    floor_remainder = builder.add(remainder, builder.select(adjust, b, i64(0)))
    return floor_quotient, floor_remainder
