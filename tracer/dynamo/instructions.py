"""Read a code object's instructions once, in a form every later step can trust.

    >>> [i.opname for i in read_instructions((lambda x: x.sin()).__code__)]
    ['RESUME', 'LOAD_FAST', 'LOAD_ATTR', 'CALL', 'RETURN_VALUE']     # 3.12+; 3.11 adds PRECALL

`dis.get_instructions` already resolves names and constants; on top of it we:
  * drop EXTENDED_ARG (its bits are folded into the next instruction's arg) and CACHE entries,
  * give every jump a `target`: the *index* of the instruction it lands on, so the interpreter
    jumps by index and never does offset arithmetic (offsets differ per version),
  * resolve KW_NAMES' tuple of keyword names (3.11's `dis` leaves it unresolved), and give
    BINARY_OP its operator symbol as argval ('+', '+='), CALL_INTRINSIC_1 its intrinsic's name,
  * give every instruction the source line it belongs to (CPython marks only the first
    instruction of a line), which error messages and graph-break reasons quote,
  * mark the instructions inside a try block (3.11+ lists them in an exception table instead
    of SETUP_* instructions): tracing must not pretend an exception cannot happen there. An
    inlined comprehension's entry (3.12+) only restores its loop variable: not marked.
The byte `offset` is kept: resume functions of a later issue start at an offset.
"""

from __future__ import annotations

import dis
from dataclasses import dataclass
from types import CodeType
from typing import Any

_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_SKIPPED = frozenset({"EXTENDED_ARG", "CACHE"})
# Instructions whose argument is an index into a table inside CPython: `dis` names the entry.
_BY_SYMBOL = frozenset({"BINARY_OP", "CALL_INTRINSIC_1"})
_COMPREHENSION_CLEANUP = frozenset({"SWAP", "POP_TOP", "STORE_FAST", "STORE_FAST_STORE_FAST"})


@dataclass(frozen=True)
class Instruction:
    """One bytecode instruction, normalised (see the module docstring)."""

    opname: str  # 'LOAD_FAST'; never compare opcode numbers, 3.13 renumbered them
    arg: int | None  # the raw argument with EXTENDED_ARG folded in; flag bits live here
    argval: Any  # the resolved argument: a name, a constant, keyword names, a jump's offset
    offset: int  # byte offset in the real code object
    lineno: int | None  # the source line this instruction belongs to
    target: int | None = None  # jumps only: index of the destination in the instruction list
    protected: bool = False  # inside a try (or with) block: an exception would jump elsewhere
    with_only: bool = False  # protected by with statements alone, no try: a break may be here

    def __str__(self) -> str:
        shown = "" if self.arg is None else f" {self.argval!r}"
        jump = "" if self.target is None else f" (to #{self.target})"
        return f"{self.offset:>4} {self.opname}{shown}{jump}"


def _restores_comprehension_locals(raw: list[dis.Instruction], handler: int) -> bool:
    """3.12+ inline a comprehension and protect it with a handler that only puts the saved
    loop variables back and re-raises (and a generator's body with one that turns a
    StopIteration into a RuntimeError): not a try block, no user code catches anything."""
    start = next(k for k, inst in enumerate(raw) if inst.offset == handler)
    for inst in raw[start:]:
        if inst.opname == "RERAISE":
            return True
        stop_iteration = inst.argrepr == "INTRINSIC_STOPITERATION_ERROR"  # a generator's
        if inst.opname not in _COMPREHENSION_CLEANUP and not stop_iteration:
            return False
    return False


def _try_ranges(raw: list[dis.Instruction], entries: list) -> list[tuple[int, int]]:
    """The (start, end) ranges of real try blocks; a comprehension's own entry counts only
    when its handler re-raises into one (a comprehension inside a try)."""
    ranges = [
        (e.start, e.end) for e in entries if not _restores_comprehension_locals(raw, e.target)
    ]
    pending = [e for e in entries if _restores_comprehension_locals(raw, e.target)]
    changed = True
    while changed:
        changed = False
        for e in list(pending):
            if any(start <= e.target < end for start, end in ranges):
                ranges.append((e.start, e.end))
                pending.remove(e)
                changed = True
    return ranges


def _with_blocks_only(raw: list[dis.Instruction], entries: list, offset: int) -> bool:
    """Is every handler an exception at `offset` would reach a with statement's cleanup
    (PUSH_EXC_INFO, WITH_EXCEPT_START: it calls __exit__ and re-raises), none a try's?
    Each with's cleanup is protected by one more handler, which re-raises to whatever
    encloses the with statement; a comprehension's handler (3.12+) re-raises too."""

    def handler_of(at: int) -> int | None:
        return next((e.target for e in entries if e.start <= at < e.end), None)

    opnames = {inst.offset: k for k, inst in enumerate(raw)}
    target = handler_of(offset)
    for _ in range(len(entries) + 1):  # each step leaves one handler: no cycle is possible
        if target is None:
            return True
        if _restores_comprehension_locals(raw, target):
            target = handler_of(target)
            continue
        k = opnames[target]
        if [i.opname for i in raw[k : k + 2]] != ["PUSH_EXC_INFO", "WITH_EXCEPT_START"]:
            return False
        cleanup = handler_of(target)
        if cleanup is None:
            return False
        target = handler_of(cleanup)
    return False


def read_instructions(code: CodeType) -> list[Instruction]:
    """The normalised instruction list of `code` (see the module docstring)."""
    raw = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    # A jump may land on an EXTENDED_ARG that we drop: it then lands on the next kept one.
    index_of_offset: dict[int, int] = {}
    kept = 0
    for inst in raw:
        index_of_offset[inst.offset] = kept
        if inst.opname not in _SKIPPED:
            kept += 1

    # 3.11+ keeps try blocks in an exception table: (start, end) byte ranges, end exclusive.
    entries = dis.Bytecode(code).exception_entries
    protected = _try_ranges(raw, entries)
    result: list[Instruction] = []
    lineno = code.co_firstlineno
    for inst in raw:
        if inst.opname in _SKIPPED:
            continue
        if inst.positions is not None and inst.positions.lineno is not None:
            lineno = inst.positions.lineno
        argval = inst.argval
        if inst.opname == "KW_NAMES":
            argval = code.co_consts[inst.arg]  # a tuple of keyword names
        elif inst.opname in _BY_SYMBOL:
            argval = inst.argrepr  # '+', '**=', 'INTRINSIC_UNARY_POSITIVE'
        target = index_of_offset[inst.argval] if inst.opcode in _JUMPS else None
        is_protected = any(start <= inst.offset < end for start, end in protected)
        with_only = is_protected and _with_blocks_only(raw, entries, inst.offset)
        result.append(
            Instruction(
                inst.opname, inst.arg, argval, inst.offset, lineno, target, is_protected, with_only
            )
        )
    return result
