"""Resume functions: real bytecode that continues a function from the middle.

After a graph break (see [Note: graph breaks] in symbolic_convert.py) the rest of the frame must
still run, and be captured in turn. TorchDynamo's answer, ours too: a new code object that is the
original function's bytecode with a short prologue in front. The prologue puts the values that
were on the stack back on the stack, then jumps to the instruction after the break; the live
locals arrive as the new function's arguments, under their own names, so the original
instructions find them where they always were.

    def f(x):                          def __resume_at_24_f(___stack0, x):   # made here
        y = x.sin()                        # prologue: LOAD_FAST ___stack0; JUMP_FORWARD to 24
        print(y)          # break          ...f's bytecode, unchanged...
        return y.cos()                 24: POP_TOP          <- the result of print(y)
                                           LOAD_FAST y ... RETURN_VALUE

A NULL slot (the marker CPython pushes under a callable) cannot be an argument: the prologue
pushes it with PUSH_NULL. A cell variable (a local an inner function captures) that arrives as
an argument is turned into a cell by MAKE_CELL, as CPython does for any argument. A *free*
variable (read from an enclosing function) becomes a plain argument too: its reads turn from
LOAD_DEREF into LOAD_FAST, so a resume function needs no closure, and its value comes from the
frame view like any local. (Writing one, `nonlocal k; k = 1`, is refused: the write would not
reach the enclosing function's cell; so is a method that calls zero-argument `super()`, which
reads its class from the `__class__` cell.) Resume functions are cached per (code, offset, stack
shape, live locals), so a function with n sequential breaks has n resume functions, not 2^n.

Building code objects by hand is where CPython versions differ most (jump encodings, caches,
exception tables, line tables); we use the `bytecode` package, which reads and writes all of
that for 3.11-3.13 (see ../shared/notes/bytecode.md), and keep our own part version-free.
"""

from __future__ import annotations

import dis
import types
from dataclasses import dataclass

import bytecode as bc

# Instructions CPython runs once on entry, before the body: they stay first in a resume function.
_PREFIX_OPNAMES = {"COPY_FREE_VARS", "MAKE_CELL", "RESUME", "NOP"}


@dataclass(frozen=True)
class ResumePoint:
    """Where a function continues, and what it needs there."""

    offset: int  # the original instruction to continue at
    stack: tuple[bool, ...]  # the value stack, bottom first: True for a NULL slot
    live_locals: tuple[str, ...]  # locals that hold a value at that point, in order


_cache: dict[tuple[types.CodeType, ResumePoint], types.CodeType] = {}


def resume_function(
    code: types.CodeType, point: ResumePoint, f_globals: dict
) -> types.FunctionType:
    """A function of (stack values that are not NULL, then live locals) continuing `code` at
    `point.offset`; every free variable of `code` must be among the live locals.

    Raises ValueError for code it cannot continue (a write to a free variable, a with block
    whose end cannot be reached)."""
    key = (code, point)
    resumed = _cache.get(key)
    if resumed is None:
        resumed = _cache[key] = _resume_code(code, point)
    return types.FunctionType(resumed, f_globals, resumed.co_name)


def stack_argument_names(point: ResumePoint) -> list[str]:
    """The parameter names of the non-NULL stack values: ___stack0, ___stack1, ..."""
    return [f"___stack{i}" for i, is_null in enumerate(point.stack) if not is_null]


def original_position(code: types.CodeType, offset: int) -> tuple[types.CodeType, int]:
    """(the user's code, the offset there) of an instruction of a resume function, so that a
    break inside a resume function resumes the *original* code: every path through n branches
    shares the same n resume points (see [Note: graph breaks] in graph_break.py)."""
    origin = _origins.get(code)
    if origin is None:
        return code, offset
    original, offsets = origin
    return original, offsets[offset]


# resume code -> (original code, {offset in the resume code: offset in the original})
_origins: dict[types.CodeType, tuple[types.CodeType, dict[int, int]]] = {}


def _resume_code(code: types.CodeType, point: ResumePoint) -> types.CodeType:
    if "__class__" in code.co_freevars:  # zero-argument super() finds its class in a cell
        raise ValueError("a method that calls super() cannot resume without its __class__ cell")
    missing = set(code.co_freevars) - set(point.live_locals)
    if missing:
        raise ValueError(f"free variables {sorted(missing)} must be passed as live locals")
    program = bc.Bytecode.from_code(code)
    target = _instruction_at(program, code, point.offset)
    instructions = [item for item in program if isinstance(item, bc.Instr)]
    offsets = dict(zip(map(id, instructions), _real_offsets(code)))
    origin: dict[int, int] = {}  # id(instruction of the new body) -> its offset in `code`
    label = bc.Label()
    body = []
    for item in program:
        if isinstance(item, bc.Instr) and item.name == "COPY_FREE_VARS":
            continue  # free variables arrive as arguments (see the module docstring)
        new = _without_free_variables(item)
        if isinstance(item, bc.Instr):
            origin[id(new)] = offsets[id(item)]
        if item is target:
            body.append(label)
        body.append(new)

    prefix_end = 0  # the entry instructions come first, as CPython expects
    while prefix_end < len(body) and _is_prefix(body[prefix_end]):
        prefix_end += 1
    prologue = []
    names = iter(stack_argument_names(point))
    for is_null in point.stack:
        prologue.append(bc.Instr("PUSH_NULL") if is_null else bc.Instr("LOAD_FAST", next(names)))
    prologue.append(bc.Instr("JUMP_FORWARD", label))

    arguments = stack_argument_names(point) + list(point.live_locals)
    program.clear()
    program.freevars.clear()
    program.extend(body[:prefix_end] + prologue + body[prefix_end:])
    program.argnames = arguments
    program.argcount = len(arguments)
    program.posonlyargcount = 0
    program.kwonlyargcount = 0
    program.flags &= ~(bc.CompilerFlags.VARARGS | bc.CompilerFlags.VARKEYWORDS)
    program.name = f"__resume_at_{point.offset}_{code.co_name}"
    if hasattr(program, "qualname"):
        program.qualname = program.name
    try:
        resumed = program.to_code()
    except RuntimeError as e:  # the `bytecode` package found no consistent stack depth
        raise ValueError(f"cannot resume {code.co_name} at {point.offset}: {e}") from e

    # Remember where each instruction came from (the prologue's came from nowhere).
    final = [item for item in program if isinstance(item, bc.Instr)]
    base_code, base_offsets = _origins.get(code, (code, None))
    _origins[resumed] = (
        base_code,
        {
            new_offset: (
                origin[id(item)] if base_offsets is None else base_offsets[origin[id(item)]]
            )
            for new_offset, item in zip(_real_offsets(resumed), final)
            if id(item) in origin
        },
    )
    return resumed


def _real_offsets(code: types.CodeType) -> list[int]:
    """The offsets of code's instructions, CACHE and EXTENDED_ARG aside (see _instruction_at)."""
    return [
        i.offset for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")
    ]


def _without_free_variables(item):
    """LOAD_DEREF of a free variable becomes LOAD_FAST of the argument of that name."""
    if not (isinstance(item, bc.Instr) and isinstance(item.arg, bc.FreeVar)):
        return item
    if item.name != "LOAD_DEREF":
        raise ValueError(
            f"{item.name} {item.arg.name}: a resume function cannot write or "
            "share a variable of the enclosing function"
        )
    return bc.Instr("LOAD_FAST", item.arg.name, location=item.location)


def _is_prefix(item) -> bool:
    return (
        isinstance(item, bc.Instr)
        and item.name in _PREFIX_OPNAMES
        or isinstance(item, bc.SetLineno)
    )


def _instruction_at(program: bc.Bytecode, code: types.CodeType, offset: int) -> bc.Instr:
    """The abstract instruction that was at `offset` of `code`.

    The `bytecode` package drops offsets (it works with labels), but keeps every real
    instruction in order: the k-th instruction `dis` shows (CACHE and EXTENDED_ARG aside) is
    the k-th Instr of the program.
    """
    real = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")]
    index = next(k for k, i in enumerate(real) if i.offset == offset)
    instrs = [item for item in program if isinstance(item, bc.Instr)]
    assert len(instrs) == len(real) and instrs[index].name == real[index].opname, (
        f"bytecode and dis disagree about {code.co_name}'s instructions"
    )
    return instrs[index]
