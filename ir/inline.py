"""Inlining: which pointwise values lowering computes inside their readers, and which it stores.

[Note: inlining]
A pointwise value nobody stores is *inlined*: its loader is its inner_fn, and each reader that
loads an element computes it on the spot, inside the reader's own loop ([Note: lowering]). A
*realized* value is computed once into a buffer, and its readers load it. Inlining trades
memory traffic (a store, and a load per reader) for arithmetic (the value computed once per
reader). On a CPU, a float streamed out to memory and back costs about as much as a few dozen
vector instructions, so for the memory-bound loops we make, recomputing small bodies wins.

    layer_norm:  d = x - mean                  softmax:  e = exp(x - max)
                 var = sum(d * d) / n                     out = e / sum(e)
                 out = d * rsqrt(var + eps)

`d` and `e` each have two readers, a reduction and a pointwise loop, and no single loop over
a row can run both (the pointwise loop needs the reduction's whole row first). Realized, `d`
is stored by one loop and loaded back by later ones ([Note: fusion] in scheduler.py); inlined,
both readers recompute it from x, which they read anyway. Inductor makes the same choice.

So lowering realizes a pointwise value only when it must, or when recomputing it costs more
than storing it:

1. it is a graph output (the caller needs the memory);
2. its body, with what it inlines, would make more than MAX_CALLS ops calls per element,
   repeats included: lowering and codegen run a body as Python, and `y * y` inlines y twice,
   so a chain of squarings would double the work with every link;
3. it has several readers and recomputing it for each extra one costs more than
   RECOMPUTE_LIMIT ops: (readers - 1) * cost > RECOMPUTE_LIMIT, where cost counts each distinct
   op of the body once and a transcendental one (exp, log, sin, tanh, ...) TRANSCENDENTAL_COST
   times. exp(x - max) costs 1 + 1 + 1 + 8 = 11, so it stays inlined with up to three
   readers; x - mean costs 5 (load, load, constant, div, sub) and stays inlined with seven;
4. a reader reads it through a data-chosen index (the `x` of gather, embedding or x[idx]) and
   its body checks an index ([Note: indirect loads]): inlined, only the chosen elements would
   be computed, and an index out of range in the others would raise nothing, where eager mode
   raises. This one is decided when such a reader is lowered.

Pricing a body means running it, so lowering prices only the values rules 2 and 3 could
realize: those with several readers, and those whose loader inlines one with several (a
single-reader chain grows by its own ops only, and MAX_INLINE_DEPTH bounds it).

Reductions are always realized (a sum per element of a reader would be a loop per element), as
are values whose loader nests MAX_INLINE_DEPTH inlined ops (see lowering.py). A view of a buffer
(expand, reshape, permute of a load) is never stored: re-reading costs what reading a copy
would. Inlining never changes a value: a random op's counter is its own element's position,
whatever index its reader asks for ([Note: counter-based random numbers]), and a body that
checks an index is computed at every element by some reader (rule 4).

Measured (one thread, 4096 rows, minimum of 30 runs of each kernel, before a kernel could run
several loops over a row): layernorm of 1024 columns took 1.47 ms in two kernels with x - mean
inlined, 2.85 ms in four with it stored. Softmax of 4096 columns took 19.4 ms with
exp(x - max) recomputed (a sum that computes it, then the normalisation computing it again)
and 17.0 ms with it stored: our vector exp costs about as much as a store and a reload of its
result. With two threads it is a wash, and inlined
the three loops over a row read nothing but x and the row's max and sum, which is what lets a
kernel keep the row in cache for all three. Within one loop nest, a value inlined into two
readers costs nothing twice: the printer, and each backend's common-subexpression elimination,
compute it once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ir.indexing import index_vars
from ir.ops_handler import set_ops_handler
from ir.printer import PrintingHandler

# Ops that cost about as much as a store and a reload (tens of vector instructions).
TRANSCENDENTAL = frozenset({
    "exp", "log", "sin", "cos", "tanh", "sigmoid", "erf", "log1p", "expm1", "pow", "rand",
})  # fmt: skip
TRANSCENDENTAL_COST = 8
RECOMPUTE_LIMIT = 32  # the ops an extra reader may recompute (rule 3)
MAX_CALLS = 256  # the ops calls an inlined element may make, repeats included (rule 2)


@dataclass(frozen=True)
class BodyCost:
    """What computing one element of a loader costs, found by running it once."""

    ops: int  # distinct ops, a transcendental one counted TRANSCENDENTAL_COST times
    calls: int  # ops calls, repeats included: the Python work each visit of the body does
    text: str  # the body as printed, one line per distinct op


def body_cost(loader: Callable[[Any], Any], ndim: int) -> BodyCost:
    """Run `loader` on symbolic indices, counting what it does."""
    counter = _CountingHandler()
    with set_ops_handler(counter):
        loader(index_vars("i", ndim))
    ops = sum(
        TRANSCENDENTAL_COST if _op_name(line) in TRANSCENDENTAL else 1 for line in counter.lines
    )
    return BodyCost(ops, counter.calls, "\n".join(counter.lines))


def must_realize(cost: BodyCost, readers: int) -> bool:
    """Rules 2 and 3 of [Note: inlining]: is storing the value cheaper than recomputing it?"""
    return cost.calls > MAX_CALLS or (readers - 1) * cost.ops > RECOMPUTE_LIMIT


class _CountingHandler(PrintingHandler):
    """Prints a body (which merges repeated ops into one line) and counts every call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def _line(self, call: str) -> str:
        self.calls += 1
        return super()._line(call)


def _op_name(line: str) -> str:
    """'tmp3 = ops.exp(tmp2)' -> 'exp'."""
    return line.split("= ops.", 1)[1].split("(", 1)[0]
