"""The `ops` forwarder, its context manager, and the closed list of loop-IR ops.

[Note: the loop-IR ops] splits the ops into core ones, which every handler implements, and
composite ones, whose decompositions (the defaults) are written in core ops. `CoreOnly` below
is the smallest numpy handler: it implements the core ops and nothing else, so every composite
it computes comes from a default, and those are held to the interpreter's answers.
"""

import inspect
import itertools

import numpy as np
import pytest

from ir.agreement import MATH_ULPS
from ir.interpreter import NumpyHandler, disagreements
from ir.op_table import LOOP_OPS
from ir.ops_handler import (
    COMPOSITE_OPS,
    CORE_OPS,
    KERNEL_OPS,
    OpsHandler,
    WrapperHandler,
    current_ops_handler,
    missing_ops,
    ops,
    set_ops_handler,
)
from ir.printer import PrintingHandler
from minitorch import dtype as dt

ALL_OPS = CORE_OPS + COMPOSITE_OPS
BINARY = {"sub", "ne", "gt", "ge", "maximum", "minimum"}  # the composites with two operands


class Tagged(OpsHandler):
    """Answers every sin with its own tag, to see which handler `ops` reached."""

    def __init__(self, tag):
        self.tag = tag

    def sin(self, a):
        return (self.tag, a)


class CoreOnly(OpsHandler):
    """numpy arrays, and only core ops: those the defaults use (no dtype checks either)."""

    def constant_like(self, value, like):
        return np.asarray(value, dtype=np.result_type(like))

    def add(self, a, b):
        return np.add(a, b)

    def mul(self, a, b):
        return np.multiply(a, b)

    def div(self, a, b):
        return np.true_divide(a, b)

    def abs(self, a):
        return np.abs(a)

    def pow(self, a, exponent):
        return np.power(a, np.asarray(exponent, dtype=a.dtype))

    def exp(self, a):
        return np.exp(a)

    def log(self, a):
        return np.log(a)

    def eq(self, a, b):
        return np.equal(a, b)

    def lt(self, a, b):
        return np.less(a, b)

    def le(self, a, b):
        return np.less_equal(a, b)

    def where(self, condition, a, b):
        return np.where(condition, a, b)


# -- the closed list ---------------------------------------------------------------------------


def test_the_lists_name_every_op_once():
    # KERNEL_OPS are OpsHandler's methods; every other op is an entry of the table.
    methods = {name for name, _ in inspect.getmembers(OpsHandler, inspect.isfunction)}
    methods = {name for name in methods if not name.startswith("_")} - {"table_op"}
    assert len(set(ALL_OPS)) == len(ALL_OPS)
    assert set(ALL_OPS) == set(KERNEL_OPS) | set(LOOP_OPS)
    assert methods == set(KERNEL_OPS)


@pytest.mark.parametrize("name", CORE_OPS)
def test_a_missing_core_op_names_the_handler_and_the_op(name):
    method = getattr(OpsHandler(), name)
    arguments = [None] * (len(inspect.signature(method).parameters))
    with pytest.raises(NotImplementedError, match=rf"OpsHandler does not implement ops\.{name}$"):
        method(*arguments)


def test_core_only_implements_no_composite():
    assert set(vars(CoreOnly)) & set(ALL_OPS) <= set(CORE_OPS)


@pytest.mark.parametrize("name", COMPOSITE_OPS)
def test_every_composite_op_has_a_default(name):
    x = np.array([0.5, 2.0], np.float64)
    result = getattr(CoreOnly(), name)(*([x, x[::-1]] if name in BINARY else [x]))
    assert np.asarray(result).shape == (2,)


@pytest.mark.parametrize(
    "handler_class", [WrapperHandler, type(ops), PrintingHandler, NumpyHandler]
)
def test_every_op_is_implemented(handler_class):
    # NumpyHandler is the definition, PrintingHandler shows the IR as written, and a wrapper
    # must hand composites on as themselves: none of them may fall back to a decomposition.
    assert handler_class.table_op is not OpsHandler.table_op
    assert missing_ops(handler_class) == []


def test_a_wrapper_hands_every_op_on_as_itself():
    calls = []

    class Recorder(OpsHandler):
        def load(self, name, index):
            calls.append(("load", name, index))

        def constant_like(self, value, like):
            calls.append(("constant_like", value, like))

        def index_expr(self, expr, dtype):
            calls.append(("index_expr", expr, dtype))

        def indirect_indexing(self, value, size, wrap_negative):
            calls.append(("indirect_indexing", value, size, wrap_negative))

        def table_op(self, op, *args):
            calls.append((op.name, *args))

    arguments = {name: (name, 1) for name in KERNEL_OPS}
    arguments["indirect_indexing"] += (False,)
    arguments.update(
        {name: tuple(range(op.arity + len(op.params))) for name, op in LOOP_OPS.items()}
    )
    with set_ops_handler(WrapperHandler(Recorder())):
        for name, args in arguments.items():
            getattr(ops, name)(*args)
    assert calls == [(name, *args) for name, args in arguments.items()]


# -- the defaults mean what the interpreter says ---------------------------------------------

SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, 89.0, -89.0,
            700.0, -700.0, 1e-40, -1e-40, 5e-324, 1e-300, 1e300, -1e300]  # fmt: skip


def _samples(dtype) -> np.ndarray:
    rng = np.random.default_rng(7)
    magnitudes = np.exp(rng.uniform(np.log(1e-8), np.log(1e3), 20000))
    with np.errstate(over="ignore"):
        specials = np.array(SPECIALS).astype(dtype)
    return np.concatenate([specials, (magnitudes * rng.choice([-1, 1], 20000)).astype(dtype)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", COMPOSITE_OPS)
def test_defaults_on_core_ops_agree_with_the_interpreter(name, dtype):
    x = _samples(dtype)
    if name in BINARY:  # every pair of special values, and random pairs
        pairs = list(itertools.product(x[: len(SPECIALS)], repeat=2))
        a = np.concatenate([np.array([p for p, _ in pairs], dtype), x])
        b = np.concatenate([np.array([q for _, q in pairs], dtype), np.roll(x, 1)])
        arguments = (a, b)
    else:
        arguments = (x,)
    reference = NumpyHandler({}, {}, x.shape)
    with np.errstate(all="ignore"):
        got = np.asarray(getattr(CoreOnly(), name)(*arguments))
        want = np.asarray(getattr(reference, name)(*arguments))
    bad = disagreements(got, want, MATH_ULPS.get(name, 0))
    assert not bad.any(), [argument[bad][:5] for argument in arguments]


@pytest.mark.parametrize("name", ["ne", "gt", "ge", "maximum", "minimum"])
def test_defaults_on_bools(name):
    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    reference = NumpyHandler({}, {}, a.shape)
    got = getattr(CoreOnly(), name)(a, b)
    np.testing.assert_array_equal(got, getattr(reference, name)(a, b))


def test_a_default_uses_the_handlers_own_version_of_an_op():
    class FastNeg(CoreOnly):
        def neg(self, a):
            return ("neg", a)

        def add(self, a, b):
            return ("add", a, b)

    assert FastNeg().sub("x", "y") == ("add", "x", ("neg", "y"))


# -- set_ops_handler and forwarding ----------------------------------------------------------


def test_no_handler_fails_loudly():
    with pytest.raises(RuntimeError, match="no ops handler"):
        ops.sin(1.0)


def test_set_ops_handler_nests_and_restores():
    outer, inner = Tagged("outer"), Tagged("inner")
    with set_ops_handler(outer):
        assert ops.sin(1) == ("outer", 1)
        with set_ops_handler(inner):
            assert ops.sin(2) == ("inner", 2)
            assert current_ops_handler() is inner
        assert ops.sin(3) == ("outer", 3)
    with pytest.raises(RuntimeError):
        current_ops_handler()


def test_restores_after_an_exception():
    with pytest.raises(KeyError), set_ops_handler(Tagged("t")):
        {}["missing"]
    with pytest.raises(RuntimeError):
        current_ops_handler()


def test_missing_op_names_itself():
    with set_ops_handler(Tagged("t")), pytest.raises(NotImplementedError, match="ops.cos"):
        ops.cos(1.0)


def test_ops_forwards_every_argument():
    calls = []

    class Recorder(OpsHandler):
        def load(self, name, index):
            calls.append(("load", name, index))

        def pow(self, a, exponent):
            calls.append(("pow", a, exponent))

        def constant(self, value, dtype):
            calls.append(("constant", value, dtype))

    with set_ops_handler(Recorder()):
        ops.load("buf0", 7)
        ops.pow("x", 3)
        ops.constant(2.5, "float64")
    assert calls == [("load", "buf0", 7), ("pow", "x", 3), ("constant", 2.5, "float64")]


def test_composites_reach_the_handler_as_themselves():
    printer = PrintingHandler()
    with set_ops_handler(WrapperHandler(printer)):
        x = ops.load("x", 0)
        ops.relu(ops.sigmoid(x))
        ops.maximum(x, ops.constant_like(0.0, x))
    assert printer.lines == [
        "tmp0 = ops.load('x', 0)",
        "tmp1 = ops.sigmoid(tmp0)",
        "tmp2 = ops.relu(tmp1)",
        "tmp3 = ops.constant_like(0.0, tmp0)",
        "tmp4 = ops.maximum(tmp0, tmp3)",
    ]


def test_a_wrapper_overrides_only_what_it_intercepts():
    class Doubled(WrapperHandler):
        def constant(self, value, dtype):
            return self.inner.constant(2 * value, dtype)

    printer = PrintingHandler()
    with set_ops_handler(Doubled(printer)):
        ops.tanh(ops.constant(1.5, dt.float32))
    assert printer.lines == ["tmp0 = ops.constant(3.0, float32)", "tmp1 = ops.tanh(tmp0)"]
