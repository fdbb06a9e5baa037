"""The `ops` forwarder and its context manager; every handler implements every op."""

import inspect

import pytest

from ir.interpreter import NumpyHandler
from ir.ops_handler import OpsHandler, current_ops_handler, ops, set_ops_handler
from ir.printer import PrintingHandler

OP_NAMES = [name for name, _ in inspect.getmembers(OpsHandler, inspect.isfunction)]


class Tagged(OpsHandler):
    """Answers every sin with its own tag, to see which handler `ops` reached."""

    def __init__(self, tag):
        self.tag = tag

    def sin(self, a):
        return (self.tag, a)


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


@pytest.mark.parametrize("handler_class", [type(ops), PrintingHandler, NumpyHandler])
def test_every_op_is_implemented(handler_class):
    assert {"load", "constant", "add", "pow", "sin"} <= set(OP_NAMES)
    for name in OP_NAMES:
        assert getattr(handler_class, name) is not getattr(OpsHandler, name), name


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
