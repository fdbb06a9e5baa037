"""Printing a loop body: run it under a handler whose values are names and whose ops write lines.

A body prints the way Inductor prints its IR, as Python one could run with another `ops`:

    def inner_fn(index):
        (i0,) = index
        tmp0 = ops.load('arg0_1', i0)
        tmp1 = ops.sin(tmp0)
        tmp2 = ops.pow(tmp1, 2)
        return tmp2

Nothing here knows the body's structure: `format_inner_fn` calls the body once, and each `ops`
call it makes appends one line. A line already printed is not printed twice (its name is
reused): lowering inlines producers into each consumer, so `sin(x)**2 + cos(x)**2` calls
`ops.load('x', i0)` twice, and printing it once shows what a backend's common-subexpression
elimination will leave.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ir.indexing import Var, index_vars
from ir.op_table import LoopOp
from ir.ops_handler import OpsHandler, set_ops_handler
from minitorch.dtype import DType

if TYPE_CHECKING:
    from ir.indexing import Expr


class PrintingHandler(OpsHandler):
    """An ops handler whose values are names ('tmp3'); each new op becomes one line of code."""

    def __init__(self) -> None:
        self.lines: list[str] = []  # 'tmp0 = ops.load(...)', in call order
        self._name_of: dict[str, str] = {}  # right-hand side -> the name it was given
        self._indirect: dict[str, str] = {}  # the same for index variables: 'ind0', ...

    def _line(self, call: str) -> str:
        if call not in self._name_of:
            self._name_of[call] = f"tmp{len(self._name_of)}"
            self.lines.append(f"{self._name_of[call]} = {call}")
        return self._name_of[call]

    # Every op, composite ones too: the printout shows the IR as lowering wrote it.

    def table_op(self, op: LoopOp, *args: Any) -> str:
        """`ops.pow(tmp1, 2)`: the values as their names, then the params (a dtype by name)."""
        values = [str(value) for value in args[: op.arity]]
        params = [p.name if isinstance(p, DType) else repr(p) for p in args[op.arity :]]
        return self._line(f"ops.{op.name}({', '.join(values + params)})")

    def load(self, name: str, index: Expr) -> str:
        return self._line(f"ops.load({name!r}, {index})")

    def constant_like(self, value: float | int, like: str) -> str:
        return self._line(f"ops.constant_like({value!r}, {like})")

    def index_expr(self, expr: Expr, dtype: DType) -> str:
        return self._line(f"ops.index_expr({expr}, {dtype.name})")

    def indirect_indexing(self, value: str, size: int, wrap_negative: bool) -> Expr:
        """A variable `indN`, printed as the line that makes it ([Note: indirect loads])."""
        call = f"ops.indirect_indexing({value}, {size}, {wrap_negative})"
        if call not in self._indirect:
            self._indirect[call] = f"ind{len(self._indirect)}"
            self.lines.append(f"{self._indirect[call]} = {call}")
        return Var(self._indirect[call])


def format_inner_fn(
    inner_fn: Callable[..., Any],
    ranges: tuple[int, ...],
    reduction_ranges: tuple[int, ...] | None = None,
    index: tuple[Expr, ...] | None = None,
) -> str:
    """The source of a loop body: `def inner_fn(index):` (plus `rindex` for a reduction).

    `index` names the dims as a kernel runs the body (default i0, i1, ...): a pointwise in a
    loop over a row prints `i0, r0 = index`, and its loads with those names.
    """
    if index is None:
        index = index_vars("i", len(ranges))
    rindex = index_vars("r", len(reduction_ranges)) if reduction_ranges is not None else None
    handler = PrintingHandler()
    with set_ops_handler(handler):
        result = inner_fn(index) if rindex is None else inner_fn(index, rindex)

    lines = ["def inner_fn(index):" if rindex is None else "def inner_fn(index, rindex):"]
    if index:
        lines.append(f"    {_unpack(index)} = index")
    if rindex:
        lines.append(f"    {_unpack(rindex)} = rindex")
    lines += [f"    {line}" for line in handler.lines]
    lines.append(f"    return {result}")
    return "\n".join(lines)


def _unpack(names) -> str:
    """The left side that unpacks an index tuple: '(i0,)' or 'i0, i1' (valid Python)."""
    names = [str(n) if isinstance(n, Var) else "_" for n in names]  # a size-1 dim: always 0
    return f"({names[0]},)" if len(names) == 1 else ", ".join(names)
