"""The table of loop-IR ops ([Note: the loop-IR ops]): dtype rules, meanings, decompositions.

tests/codegen/test_loop_op_lowerings.py adds ops to the table and compiles them; these tests
hold the table to itself: each rule refuses what a typed backend could not compute, each
meaning gives the dtype its rule says, and `missing_ops` finds what a handler cannot reach.
"""

import numpy as np
import pytest

from ir.op_table import LOOP_OPS, LoopOp, same
from ir.ops_handler import OpsHandler, missing_ops, ops, set_ops_handler, uses
from minitorch import dtype as dt
from minitorch.errors import CompileError

F32, F64, I32 = np.ones(2, np.float32), np.ones(2, np.float64), np.ones(2, np.int32)
BOOL = np.array([True, False])


@pytest.mark.parametrize(
    "name, args, message",
    [
        ("add", (F32, F64), "ops.add of float32 and float64: lowering must insert to_dtype"),
        ("div", (I32, I32), "ops.div of int32: convert to a float with ops.to_dtype"),
        ("sin", (I32,), "ops.sin of int32: convert to a float with ops.to_dtype"),
        ("eq", (F32, I32), "ops.eq of float32 and int32"),
        ("where", (F32, F32, F32), "ops.where with a float32 condition"),
        ("where", (BOOL, F32, F64), "ops.where of float32 and float64"),
        ("pow", (I32, -1), "ops.pow of int32 to the power -1: only n >= 0"),
        ("rand", (I32, np.ones(2, np.int64)), "ops.rand of int32 and int64"),
    ],
)
def test_a_dtype_rule_refuses_by_name(name, args, message):
    with pytest.raises(CompileError, match=message):
        LOOP_OPS[name].evaluate(*args)


@pytest.mark.parametrize(
    "name, args, dtype",
    [
        ("constant", (2.5, dt.float32), np.float32),
        ("to_dtype", (F32, dt.int64), np.int64),
        ("add", (BOOL, BOOL), np.bool_),
        ("lt", (I32, I32), np.bool_),
        ("pow", (I32, 3), np.int32),
        ("erf", (F32,), np.float32),
        ("sigmoid", (F32,), np.float32),
        ("rand", (np.ones(2, np.int64), np.ones(2, np.int64)), np.float64),
        ("relu", (I32,), np.int32),
    ],
)
def test_every_meaning_gives_its_rules_dtype(name, args, dtype):
    assert np.result_type(LOOP_OPS[name].evaluate(*args)) == dtype


def test_an_entry_whose_meaning_disagrees_with_its_rule_fails_loudly():
    wrong = LoopOp("halve", 1, same, lambda a: a / 2)  # int32 / 2 is a float64
    with pytest.raises(CompileError, match="ops.halve computes float64, not int32"):
        wrong.evaluate(I32)


def test_uses_names_what_a_decomposition_calls():
    assert uses(LOOP_OPS["sub"]) == {"add", "neg"}
    assert uses(LOOP_OPS["relu"]) == {"constant_like", "le", "where"}


class OnlyMul(OpsHandler):
    """A handler with load and mul, and nothing else."""

    def load(self, name, index):
        return name

    def mul(self, a, b):
        return f"({a} * {b})"


def test_missing_ops_follows_decompositions_down_to_what_the_handler_has():
    missing = missing_ops(OnlyMul)
    assert "square" not in missing  # mul(a, a)
    assert "neg" in missing  # mul(a, constant_like(-1, a)): no constant_like
    assert {"constant_like", "index_expr", "indirect_indexing", "add", "sin"} <= set(missing)
    assert "load" not in missing and "mul" not in missing


def test_a_handler_runs_a_decomposition_of_its_own_ops():
    with set_ops_handler(OnlyMul()):
        assert ops.square(ops.load("x", 0)) == "(x * x)"
    with set_ops_handler(OnlyMul()), pytest.raises(NotImplementedError, match="ops.sin"):
        ops.sin("x")


def test_ops_are_equal_to_themselves_and_unknown_names_are_missing():
    assert ops.eq == ops.eq and ops.eq != ops.lt  # as bound methods written out would be
    with pytest.raises(AttributeError, match="no attribute 'cube'"):
        ops.cube  # noqa: B018
