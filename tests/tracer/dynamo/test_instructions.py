"""Reading bytecode: instructions.py's normalisation and compat.py's version answers."""

from __future__ import annotations

import dis

import pytest

from tracer.dynamo import compat
from tracer.dynamo.instructions import read_instructions
from tracer.dynamo.variables import NULL

pytestmark = pytest.mark.capture


def with_kwargs(x):
    return x.sum(dim=0, keepdim=True)


def branchy(x, flag):
    if flag:
        x = x + 1
    return x - 1


def test_no_extended_arg_or_cache_and_every_line_known():
    for fn in (with_kwargs, branchy):
        insts = read_instructions(fn.__code__)
        names = {i.opname for i in insts}
        assert not names & {"EXTENDED_ARG", "CACHE"}
        assert all(i.lineno is not None for i in insts)


def test_keyword_names_are_resolved_on_every_version():
    insts = read_instructions(with_kwargs.__code__)
    if compat.PYTHON_VERSION < (3, 13):
        (kw,) = [i for i in insts if i.opname == "KW_NAMES"]
        assert kw.argval == ("dim", "keepdim")
    else:
        (call,) = [i for i in insts if i.opname == "CALL_KW"]
        assert insts[insts.index(call) - 1].argval == ("dim", "keepdim")


def test_jump_targets_are_indices_of_the_real_destination():
    insts = read_instructions(branchy.__code__)
    real = {i.offset: i for i in dis.get_instructions(branchy)}
    jumps = [i for i in insts if i.target is not None]
    assert jumps
    for jump in jumps:
        assert insts[jump.target].offset == real[jump.argval].offset


def test_long_jumps_need_extended_arg_and_still_land():
    body = "\n".join(f"        x = x + {i}" for i in range(300))
    source = f"def f(x, flag):\n    if flag:\n{body}\n    return x\n"
    namespace: dict = {}
    exec(source, namespace)
    code = namespace["f"].__code__
    raw = list(dis.get_instructions(code))
    assert any(i.opname == "EXTENDED_ARG" for i in raw)
    insts = read_instructions(code)
    (jump,) = [i for i in insts if i.target is not None]
    assert insts[jump.target].offset == jump.argval
    assert insts[jump.target].opname.startswith("LOAD_FAST")  # `return x`


def test_many_locals_need_extended_arg():
    names = [f"v{i}" for i in range(300)]
    body = "\n".join(f"    {n} = {i}" for i, n in enumerate(names))
    source = f"def f():\n{body}\n    return v299\n"
    namespace: dict = {}
    exec(source, namespace)
    code = namespace["f"].__code__
    assert any(i.opname == "EXTENDED_ARG" for i in dis.get_instructions(code))
    last_load = [i for i in read_instructions(code) if i.opname.startswith("LOAD_FAST")][-1]
    assert last_load.argval == "v299" and last_load.arg == 299


def test_binary_op_argval_is_its_symbol():
    def f(a, b):
        a **= b
        return a // b

    symbols = [i.argval for i in read_instructions(f.__code__) if i.opname == "BINARY_OP"]
    assert symbols == ["**=", "//"]


def test_null_slot_is_found_in_either_order():
    fn, obj = object(), object()
    assert compat.split_call_slots(NULL, fn, lambda v: v is NULL) == (fn, None)
    assert compat.split_call_slots(fn, NULL, lambda v: v is NULL) == (fn, None)
    assert compat.split_call_slots(fn, obj, lambda v: v is NULL) == (fn, obj)
    first, second = compat.with_null(fn, NULL)
    assert (first is NULL) == compat.NULL_BEFORE_CALLABLE


def test_this_interpreter_is_supported():
    assert compat.is_supported_version()


def test_every_binary_operator_of_this_python_has_a_meaning():
    from tracer.dynamo.opcodes import BINARY_OPERATORS

    symbols = {symbol for _, symbol in getattr(dis, "_nb_ops", [])}
    if not symbols:
        pytest.skip("this Python's dis does not list its binary operators")
    assert symbols <= set(BINARY_OPERATORS)
