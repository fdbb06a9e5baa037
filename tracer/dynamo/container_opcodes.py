"""Opcodes that build and take apart containers: tuples, lists, dicts and f-strings.

    BINARY_SUBSCR            d["a"], xs[0], x[1:]       the item, or a graph node on a tensor
    CONTAINS_OP              "a" in d                   a constant
    BUILD_TUPLE 2            (a, b)                     TupleVariable([a, b])
    BUILD_LIST 0; LIST_APPEND   [x * i for i in ...]     ListVariable, grown in place
    BUILD_SET 2; SET_ADD     {a, b}, {k for k in ...}   SetVariable (sets.py)
    BUILD_CONST_KEY_MAP 2    {"a": x, "b": y}           ConstDictVariable (dicts.py)
    BUILD_MAP 0; MAP_ADD     {k: v for k in ...}        ConstDictVariable, grown in place
    DICT_UPDATE              {**a, **b}
    CALL_FUNCTION_EX 1       f(*args, **kwargs)         the call, with the tuple's items and the
                                                        dict's entries as its arguments
    STORE_SUBSCR             d[k] = v, lst[i] = v       (the caller's: replayed, side_effects.py)
    STORE_SLICE              lst[a:b] = items           3.12+; 3.11 builds the slice first
    DELETE_SUBSCR            del d[k], del lst[i]
                             x[k] = v on a tensor        its out-of-place form, x rebound
    FORMAT_VALUE; BUILD_STRING  f"k{i}"                 a constant string

A container built in the frame is held only by trackers, so growing or assigning into it while
tracing *is* the mutation; one read from the frame (it has a source) is refused, since the
caller would not see the change. The handlers are installed on InstructionTranslator by name,
like opcodes.py's.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING

from tracer.dynamo import compat
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.variables import (
    NULL,
    BuiltinVariable,
    ConstantVariable,
    ListVariable,
    TensorVariable,
    TupleVariable,
    constant,
)
from tracer.dynamo.variables.container_calls import contains
from tracer.dynamo.variables.dicts import ConstDictVariable, DictViewVariable, _dict_key
from tracer.dynamo.variables.iterators import sequence_items
from tracer.dynamo.variables.sets import SetVariable, set_operand, set_values

if TYPE_CHECKING:
    from tracer.dynamo.instructions import Instruction
    from tracer.dynamo.symbolic_convert import InstructionTranslator
    from tracer.dynamo.variables import VariableTracker

_CONVERSIONS = {0: None, 1: str, 2: repr, 3: ascii}


# ---- tuples and lists ------------------------------------------------------------------------


def build_tuple(self: InstructionTranslator, inst: Instruction) -> None:
    self.push(TupleVariable(self.popn(inst.arg)))


def build_list(self: InstructionTranslator, inst: Instruction) -> None:
    self.push(ListVariable(self.popn(inst.arg)))


def list_extend(self: InstructionTranslator, inst: Instruction) -> None:
    items = sequence_items(self, self.pop())  # any iterable: `[*gen]`, `f(a, *gen)`
    self.stack[-inst.arg].items.extend(items)  # a list built by BUILD_LIST in this frame


def list_append(self: InstructionTranslator, inst: Instruction) -> None:
    item = self.pop()
    self.stack[-inst.arg].items.append(item)


def list_to_tuple(self: InstructionTranslator, inst: Instruction) -> None:  # 3.11: `(*a, *b)`
    self.push(TupleVariable(self.pop().items))


def build_set(self: InstructionTranslator, inst: Instruction) -> None:
    self.push(SetVariable.of(self, self.popn(inst.arg)))


def set_add(self: InstructionTranslator, inst: Instruction) -> None:  # {k for k in ...}
    item = self.pop()
    self.stack[-inst.arg].values.add(*set_values([item]))


def set_update(self: InstructionTranslator, inst: Instruction) -> None:  # {*a}, {"a", "b", "c"}
    operand = set_operand(self, self.pop())
    self.stack[-inst.arg].values.update(operand)


def unpack_sequence(self: InstructionTranslator, inst: Instruction) -> None:
    items = self.pop().unpack_sequence(self)
    if len(items) != inst.arg:
        raise Unsupported(f"unpacking {len(items)} values into {inst.arg} names")
    self.push(*reversed(items))


def unpack_ex(self: InstructionTranslator, inst: Instruction) -> None:
    """`a, *rest, b = seq`: arg holds the counts before (low byte) and after the star."""
    before, after = inst.arg & 0xFF, inst.arg >> 8
    items = self.pop().unpack_sequence(self)
    if len(items) < before + after:
        raise Unsupported(f"unpacking {len(items)} values into {before + after}+ names")
    rest = ListVariable(items[before : len(items) - after])
    self.push(*reversed([*items[:before], rest, *items[len(items) - after :]]))


# ---- reading items ---------------------------------------------------------------------------


def contains_op(self: InstructionTranslator, inst: Instruction) -> None:
    """`a in b` / `a not in b` (arg 1): on constants, or on a dict's keys."""
    container = self.pop()
    item = self.pop()
    if isinstance(container, (TupleVariable, SetVariable, DictViewVariable)):
        found = contains(self, container, item)  # on the trackers: a dict's keys need only be
    else:  # known, and a tuple's tensors compared by id
        found = self.call(
            BuiltinVariable(operator.contains), [container, item]
        ).as_python_constant()
    self.push(ConstantVariable(found != bool(inst.arg)))


def binary_subscr(self: InstructionTranslator, inst: Instruction) -> None:
    index = self.pop()
    container = self.pop()
    self.push(self.call(BuiltinVariable(operator.getitem), [container, index]))


def binary_slice(self: InstructionTranslator, inst: Instruction) -> None:  # 3.12+: `a[i:j]`
    stop = self.pop()
    start = self.pop()
    container = self.pop()
    index = constant(slice(start.as_python_constant(), stop.as_python_constant()))
    self.push(self.call(BuiltinVariable(operator.getitem), [container, index]))


def build_slice(self: InstructionTranslator, inst: Instruction) -> None:
    bounds = [v.as_python_constant() for v in self.popn(inst.arg)]
    self.push(constant(slice(*bounds)))


# ---- dicts -----------------------------------------------------------------------------------


def build_map(self: InstructionTranslator, inst: Instruction) -> None:
    """`{k1: v1, k2: v2}` with keys computed: the stack holds k1, v1, k2, v2."""
    flat = self.popn(2 * inst.arg)
    d = ConstDictVariable({})
    for key, value in zip(flat[::2], flat[1::2]):
        d.setitem(_key(key), value)
    self.push(d)


def build_const_key_map(self: InstructionTranslator, inst: Instruction) -> None:
    """`{"a": x, "b": y}`: the values, then a constant tuple of the keys."""
    keys = self.pop().as_python_constant()
    d = ConstDictVariable({})
    for key, value in zip(keys, self.popn(inst.arg)):
        d.setitem(key, value)
    self.push(d)


def map_add(self: InstructionTranslator, inst: Instruction) -> None:
    """A dict comprehension's `key: value`, into the dict `arg` deep once both are popped."""
    value = self.pop()
    key = self.pop()
    _building(self.stack[-inst.arg]).setitem(_key(key), value)


def dict_update(self: InstructionTranslator, inst: Instruction) -> None:
    """`{**a, **b}`: merge the popped dict into the one `arg` deep."""
    other = self.pop()
    _building(self.stack[-inst.arg]).update(other)


def dict_merge(self: InstructionTranslator, inst: Instruction) -> None:
    """`f(**a, **b)`: as DICT_UPDATE, except that a keyword given twice is CPython's TypeError."""
    other = _building(self.pop())
    into = _building(self.stack[-inst.arg])
    if twice := [k for k in other.keys if into.contains(k)]:
        raise Unsupported(f"a call given keyword argument {twice[0]!r} twice (a TypeError)")
    into.update(other)


def call_function_ex(self: InstructionTranslator, inst: Instruction) -> None:
    """`f(*args)`, `f(*args, **kwargs)`: below them, the callable's two slots as for CALL."""
    kwargs = _building(self.pop()).entries if inst.arg & 1 else {}
    args = sequence_items(self, self.pop())  # 3.11 passes `f(*gen)`'s iterable as it is
    first, second = self.popn(2)
    fn, self_arg = compat.split_call_slots(first, second, lambda v: v is NULL)
    if self_arg is not None:
        args = [self_arg, *args]
    if any(not isinstance(k, str) for k in kwargs):
        raise Unsupported("a call whose **kwargs has a key that is not a string (a TypeError)")
    self.push(self.call(fn, args, kwargs))


def store_subscr(self: InstructionTranslator, inst: Instruction) -> None:
    """`container[key] = value` on a dict or list built in the frame."""
    key = self.pop()
    container = self.pop()
    value = self.pop()
    if isinstance(container, ConstDictVariable):
        k = _key(key)
        self.output.side_effects.mutate_container(container)  # one of the caller: replayed
        container.setitem(k, value)
        return
    if isinstance(container, ListVariable):
        set_list_item(self, container, key.as_python_constant(), value)
        return
    if isinstance(container, TensorVariable):
        container.setitem(self, key, value)  # functionalized: variables/tensor.py
        return
    raise Unsupported(
        f"item assignment into {container.describe()} (mutation of a value of "
        "the caller is not traced yet)"
    )


def set_list_item(
    self: InstructionTranslator, lst: ListVariable, index: object, value: VariableTracker | None
) -> None:
    """`lst[i] = v`, `lst[a:b] = items` and (value None) `del lst[i]`, `del lst[a:b]`."""
    items = lst.items
    if isinstance(index, slice):
        new = [] if value is None else sequence_items(self, value)
        if (
            index.step not in (None, 1)
            and len(range(len(items))[index]) != len(new)
            and value is not None
        ):
            raise Unsupported("assigning to an extended slice of another size (a ValueError)")
    elif not isinstance(index, int) or not -len(items) <= index < len(items):
        raise Unsupported(
            f"list assignment or deletion at index {index!r} (not a valid int "
            "index: an IndexError or TypeError)"
        )
    self.output.side_effects.mutate_container(lst)
    if value is None:
        del items[index]
    elif isinstance(index, slice):
        items[index] = new
    else:
        items[index] = value


def delete_subscr(self: InstructionTranslator, inst: Instruction) -> None:
    """`del d[k]`, `del lst[i]`, `del lst[a:b]`."""
    key = self.pop()
    container = self.pop()
    if isinstance(container, ConstDictVariable):
        self.output.side_effects.mutate_container(container)
        container.delitem(_key(key))
    elif isinstance(container, ListVariable):
        set_list_item(self, container, key.as_python_constant(), None)
    else:
        raise Unsupported(f"del of an item of {container.describe()}")


def store_slice(self: InstructionTranslator, inst: Instruction) -> None:  # 3.12+: a[i:j] = v
    stop = self.pop()
    start = self.pop()
    container = self.pop()
    value = self.pop()
    index = constant(slice(start.as_python_constant(), stop.as_python_constant()))
    self.push(value, container, index)
    store_subscr(self, inst)


def _key(key: VariableTracker) -> object:
    return _dict_key(key)


def _building(d: VariableTracker) -> ConstDictVariable:
    if not isinstance(d, ConstDictVariable):
        raise Unsupported(f"a dict opcode on {d.describe()}")
    return d


# ---- f-strings: on constants only ------------------------------------------------------------


def format_value(self: InstructionTranslator, inst: Instruction) -> None:
    """3.11/3.12 FORMAT_VALUE (flags: conversion, and a spec on the stack), 3.13 FORMAT_SIMPLE."""
    flags = inst.arg or 0
    spec = self.pop().as_python_constant() if flags & 0x04 else ""
    value = _constant_of(self.pop(), "an f-string")
    convert = _CONVERSIONS[flags & 0x03]
    self.push(constant(format(convert(value) if convert else value, spec)))


def format_with_spec(self: InstructionTranslator, inst: Instruction) -> None:  # 3.13
    spec = self.pop().as_python_constant()
    self.push(constant(format(_constant_of(self.pop(), "an f-string"), spec)))


def convert_value(self: InstructionTranslator, inst: Instruction) -> None:  # 3.13: !s !r !a
    value = _constant_of(self.pop(), "an f-string")
    self.push(constant(_CONVERSIONS[inst.arg](value)))


def build_string(self: InstructionTranslator, inst: Instruction) -> None:
    parts = [_constant_of(v, "an f-string") for v in self.popn(inst.arg)]
    self.push(constant("".join(parts)))


def _constant_of(value: VariableTracker, what: str) -> object:
    if not value.is_python_constant():
        raise Unsupported(
            f"{what} with {value.describe()} in it (only constants are formatted while tracing)"
        )
    return value.as_python_constant()
