"""Every difference between the CPython versions we capture (3.11, 3.12, 3.13), in one place.

The symbolic interpreter (symbolic_convert.py) reads opnames, never opcode numbers (3.13
renumbered them), and asks this module the few questions whose answer depends on the version:

    question                                  3.11            3.12            3.13
    ----------------------------------------  --------------  --------------  --------------
    where does a call's NULL slot sit?        before callable before callable after callable
    does LOAD_ATTR carry a "method" bit?      no (LOAD_METHOD) yes (low bit)  yes (low bit)
    how do keyword names reach CALL?          KW_NAMES        KW_NAMES        CALL_KW + stack

Everything else that differs is a *new opname* (RETURN_CONST, BINARY_SLICE,
LOAD_FAST_LOAD_FAST, CALL_KW, TO_BOOL, ...), which the interpreter handles with one method each:
an opname that a version does not have is simply never seen there.

[Note: the NULL slot of a call]
Since 3.11 a call site pushes two slots below the arguments: either (method, self) when a method
was looked up on an object, or (NULL, callable) otherwise, and CALL sorts it out. 3.13 swapped
the plain form to (callable, NULL). In both orders exactly one slot is NULL unless a method and
its self were pushed, so `split_call_slots` decides without knowing the version; only the
instructions that *push* the NULL (LOAD_GLOBAL, LOAD_ATTR, PUSH_NULL) need `NULL_BEFORE_CALLABLE`.
"""

from __future__ import annotations

import sys

PYTHON_VERSION = sys.version_info[:2]
SUPPORTED_VERSIONS = ((3, 11), (3, 12), (3, 13))

# 3.11 and 3.12 push the NULL of a plain call below the callable; 3.13 pushes it above.
NULL_BEFORE_CALLABLE = PYTHON_VERSION < (3, 13)

# 3.12 folded LOAD_METHOD into LOAD_ATTR: the low bit of the arg asks for a method load.
LOAD_ATTR_HAS_METHOD_BIT = PYTHON_VERSION >= (3, 12)


def is_supported_version() -> bool:
    """True on the Python versions whose bytecode this package knows."""
    return PYTHON_VERSION in SUPPORTED_VERSIONS


def load_attr_is_method(arg: int) -> bool:
    """Does a LOAD_ATTR with this raw arg ask for a method (3.12+ low bit)?"""
    return LOAD_ATTR_HAS_METHOD_BIT and bool(arg & 1)


def load_global_pushes_null(arg: int) -> bool:
    """Does a LOAD_GLOBAL with this raw arg also push a NULL (3.11+: the low bit)?"""
    return bool(arg & 1)


def with_null(value, null):
    """The two call slots (in stack order) for a plain callable: NULL + callable, per version."""
    return (null, value) if NULL_BEFORE_CALLABLE else (value, null)


def split_call_slots(first, second, is_null) -> tuple[object, object | None]:
    """(callable, self or None) from the two slots below a call's arguments.

    See [Note: the NULL slot of a call]: (NULL, f) and (f, NULL) are a plain call of f;
    (method, obj) is a call of method with obj as its first argument.
    """
    if is_null(first):
        return second, None
    if is_null(second):
        return first, None
    return first, second
